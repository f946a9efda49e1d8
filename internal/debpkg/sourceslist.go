package debpkg

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// aptEntry is one repository of the host's APT sources: a URI, its
// suites and components, and the keyring that signs it.
type aptEntry struct {
	URI        string
	Suites     []string
	Components []string
	SignedBy   string
}

// hostSourceFiles reads the host's APT source files as APT does: the main
// list and the parts directory's *.list and *.sources (other names, such
// as a disabled file, are ignored). Keys are the paths, sorted by callers.
func hostSourceFiles(root string) (map[string]string, error) {
	files := map[string]string{}
	paths := []string{filepath.Join(root, "etc/apt/sources.list")}
	for _, pat := range []string{"*.list", "*.sources"} {
		m, _ := filepath.Glob(filepath.Join(root, "etc/apt/sources.list.d", pat))
		paths = append(paths, m...)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read the host's APT sources: %w", err)
		}
		files[p] = string(b)
	}
	return files, nil
}

// sourceList is the deb-src list of a private APT configuration: one line
// per suite of the host's binary repositories that belong to the release
// codename (bookworm, bookworm-updates, bookworm-security), so source
// packages come from the mirror the host already trusts, signed by the
// same keyring. Other repositories (a vendor's, another release's) are
// left out: their sources are not Debian 12's.
func sourceList(files map[string]string, codename string) (string, error) {
	repos, err := releaseRepos(files, codename)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, e := range repos {
		b.WriteString(debSrcLine(e) + "\n")
	}
	return b.String(), nil
}

// componentList is the deb list of a private APT configuration that takes
// one component (non-free-firmware) of the same repositories as
// sourceList: what the host does not enable, without changing the host.
func componentList(files map[string]string, codename, component string) (string, error) {
	repos, err := releaseRepos(files, codename)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, e := range repos {
		e.Components = []string{component}
		b.WriteString("deb" + strings.TrimPrefix(debSrcLine(e), "deb-src") + "\n")
	}
	return b.String(), nil
}

// releaseRepos are the host's repositories of release codename, one per
// repository and suite: APT refuses two lines that differ in Signed-By,
// as a deb line and its deb-src twin often do.
func releaseRepos(files map[string]string, codename string) ([]aptEntry, error) {
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var order []string
	bySuite := map[string]*aptEntry{}
	for _, n := range names {
		var entries []aptEntry
		if strings.HasSuffix(n, ".sources") {
			entries = parseDeb822(files[n])
		} else {
			entries = parseOneLine(files[n])
		}
		for _, e := range entries {
			for _, s := range e.Suites {
				if s == codename || strings.HasPrefix(s, codename+"-") {
					order = mergeEntry(bySuite, order, e, s)
				}
			}
		}
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("the host's APT sources name no Debian %s repository to take packages from", codename)
	}
	repos := make([]aptEntry, len(order))
	for i, k := range order {
		repos[i] = *bySuite[k]
	}
	return repos, nil
}

// mergeEntry adds e's suite s to bySuite, joining the components of an
// entry already there and keeping the first keyring named.
func mergeEntry(bySuite map[string]*aptEntry, order []string, e aptEntry, s string) []string {
	k := strings.TrimSuffix(e.URI, "/") + " " + s
	have, ok := bySuite[k]
	if !ok {
		bySuite[k] = &aptEntry{URI: e.URI, Suites: []string{s}, Components: append([]string(nil), e.Components...), SignedBy: e.SignedBy}
		return append(order, k)
	}
	for _, c := range e.Components {
		if !hasWord(strings.Join(have.Components, " "), c) {
			have.Components = append(have.Components, c)
		}
	}
	if have.SignedBy == "" {
		have.SignedBy = e.SignedBy
	}
	return order
}

func debSrcLine(e aptEntry) string {
	opt := ""
	if e.SignedBy != "" {
		opt = "[signed-by=" + e.SignedBy + "] "
	}
	return "deb-src " + opt + e.URI + " " + e.Suites[0] + " " + strings.Join(e.Components, " ")
}

// parseDeb822 reads a .sources file's stanzas of Types deb (a deb-src
// stanza is used as well: it names the same repository).
func parseDeb822(text string) []aptEntry {
	var out []aptEntry
	for _, stanza := range strings.Split(strings.ReplaceAll(text, "\r", ""), "\n\n") {
		f := deb822Fields(stanza)
		if f["enabled"] == "no" || !hasWord(f["types"], "deb", "deb-src") {
			continue
		}
		for _, uri := range strings.Fields(f["uris"]) {
			out = append(out, aptEntry{URI: uri, Suites: strings.Fields(f["suites"]), Components: strings.Fields(f["components"]), SignedBy: f["signed-by"]})
		}
	}
	return out
}

// deb822Fields maps a stanza's lower-cased field names to their values,
// comments dropped and continuation lines joined, except an inline
// Signed-By key block's: a key is no path, and without one APT checks
// the host's trusted keys.
func deb822Fields(stanza string) map[string]string {
	f := map[string]string{}
	last := ""
	sc := bufio.NewScanner(strings.NewReader(stanza))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if last != "" && last != "signed-by" {
				f[last] += " " + strings.TrimSpace(line)
			}
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		last = strings.ToLower(strings.TrimSpace(k))
		f[last] = strings.TrimSpace(v)
	}
	return f
}

// parseOneLine reads a .list file's "deb [opts] URI suite comp..." lines.
func parseOneLine(text string) []aptEntry {
	var out []aptEntry
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		w := strings.Fields(line)
		if len(w) < 3 || (w[0] != "deb" && w[0] != "deb-src") {
			continue
		}
		w = w[1:]
		var signedBy string
		if strings.HasPrefix(w[0], "[") {
			opts := ""
			for len(w) > 0 {
				opts += " " + w[0]
				done := strings.HasSuffix(w[0], "]")
				w = w[1:]
				if done {
					break
				}
			}
			signedBy = lineOption(strings.Trim(strings.TrimSpace(opts), "[]"), "signed-by")
		}
		if len(w) < 2 {
			continue
		}
		out = append(out, aptEntry{URI: w[0], Suites: []string{w[1]}, Components: w[2:], SignedBy: signedBy})
	}
	return out
}

func lineOption(opts, name string) string {
	for _, o := range strings.Fields(opts) {
		if k, v, ok := strings.Cut(o, "="); ok && k == name {
			return v
		}
	}
	return ""
}

func hasWord(s string, words ...string) bool {
	for _, f := range strings.Fields(s) {
		for _, w := range words {
			if f == w {
				return true
			}
		}
	}
	return false
}
