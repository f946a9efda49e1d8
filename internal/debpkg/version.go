package debpkg

import "strings"

// CompareVersions orders two Debian versions as dpkg does (deb-version(7)):
// the epoch as a number, then the upstream version and the revision, each
// compared in turns of non-digits (letters before non-letters, "~" before
// everything, even the end) and digits as numbers. It returns -1, 0 or 1.
// apt-cache showsrc lists versions in no promised order, and the newest
// one (3.0.22-1~deb12u2 after 3.0.9-1) is not the one that sorts last as
// a string.
func CompareVersions(a, b string) int {
	ea, ua, ra := splitVersion(a)
	eb, ub, rb := splitVersion(b)
	if c := compareNumbers(ea, eb); c != 0 {
		return c
	}
	if c := compareFragment(ua, ub); c != 0 {
		return c
	}
	return compareFragment(ra, rb)
}

// splitVersion cuts [epoch:]upstream[-revision]; the revision follows the
// last hyphen.
func splitVersion(v string) (epoch, upstream, revision string) {
	if e, rest, ok := strings.Cut(v, ":"); ok {
		epoch, v = e, rest
	}
	if i := strings.LastIndex(v, "-"); i >= 0 {
		return epoch, v[:i], v[i+1:]
	}
	return epoch, v, ""
}

func compareFragment(a, b string) int {
	for a != "" || b != "" {
		var na, nb string
		na, a = cutWhile(a, notDigit)
		nb, b = cutWhile(b, notDigit)
		if c := compareNonDigits(na, nb); c != 0 {
			return c
		}
		na, a = cutWhile(a, isDigit)
		nb, b = cutWhile(b, isDigit)
		if c := compareNumbers(na, nb); c != 0 {
			return c
		}
	}
	return 0
}

func compareNonDigits(a, b string) int {
	for i := 0; i < len(a) || i < len(b); i++ {
		var ca, cb byte
		if i < len(a) {
			ca = a[i]
		}
		if i < len(b) {
			cb = b[i]
		}
		if oa, ob := order(ca), order(cb); oa != ob {
			if oa < ob {
				return -1
			}
			return 1
		}
	}
	return 0
}

// order is dpkg's weight of one character of a non-digit run; 0 is the
// end of the run.
func order(c byte) int {
	switch {
	case c == '~':
		return -1
	case c == 0:
		return 0
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		return int(c)
	}
	return int(c) + 256
}

// compareNumbers compares runs of digits as numbers of any length.
func compareNumbers(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	switch {
	case len(a) != len(b) && len(a) < len(b):
		return -1
	case len(a) != len(b):
		return 1
	}
	return strings.Compare(a, b)
}

func cutWhile(s string, f func(byte) bool) (run, rest string) {
	i := 0
	for i < len(s) && f(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func notDigit(c byte) bool { return !isDigit(c) }
