package results

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// SortMetrics sorts metrics in place by MetricLess.
func SortMetrics(ms []Metric) {
	sort.SliceStable(ms, func(i, j int) bool { return MetricLess(ms[i].Name, ms[j].Name) })
}

// MetricLess orders metric names for display: block-size metrics
// (<alg>@<block>) first, by algorithm then numeric block size, so md5@16
// comes before md5@1024 before md5@8192; then the rest (rsa2048-sign,
// tcp-throughput, ...). Names compare "naturally": digit runs by value, so
// rsa512 sorts before rsa1024.
func MetricLess(a, b string) bool {
	aa, ab, aok := SplitBlock(a)
	ba, bb, bok := SplitBlock(b)
	if aok != bok {
		return aok
	}
	if c := NaturalCompare(aa, ba); c != 0 {
		return c < 0
	}
	if aok && ab != bb {
		return ab < bb
	}
	return a < b
}

// SplitBlock splits a metric name "<alg>@<block>" into its parts; ok is
// false when the name has no numeric block suffix.
func SplitBlock(name string) (alg string, block int64, ok bool) {
	i := strings.LastIndexByte(name, '@')
	if i < 0 {
		return name, 0, false
	}
	n, err := strconv.ParseInt(name[i+1:], 10, 64)
	if err != nil {
		return name, 0, false
	}
	return name[:i], n, true
}

// NaturalCompare compares strings with runs of digits compared by value.
func NaturalCompare(a, b string) int {
	for a != "" && b != "" {
		if isDigit(a[0]) && isDigit(b[0]) {
			da, db := digitRun(a), digitRun(b)
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				if len(na) < len(nb) {
					return -1
				}
				return 1
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			if a[0] < b[0] {
				return -1
			}
			return 1
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func digitRun(s string) int {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// FormatValue prints a metric's value: whole numbers without a fraction
// or exponent, others with at most two decimals, as benchmark tools
// print them.
func FormatValue(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e18 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
