package export

import (
	"encoding/json"
	"io"
	"regexp"
	"strings"

	"github.com/bootbench/bootbench/results"
)

// The OpenWrt wiki's OpenSSL benchmark page has its readers paste what two
// shell lines print on the board: one over /proc/cpuinfo,
//
//	cat /proc/cpuinfo | awk '/system type/ {FS = ":" ; print "|" $2}; /machine/ {FS = ":" ; print $2}; /cpu model/ {FS = ":" ; print $2}; /BogoMIPS/ {FS = ":" ; print $2 " |"}' | sed ':M;N;$!bM;s#\n# |#g'
//
// and one over the output of openssl speed,
//
//	awk -v ORS="" '$1 ~ /OpenSSL/ {print "| " $2 " |"} $1 ~ /(md5|sha)/ {print "  " $5 " |"} $1 ~ /(des|aes)/ {b = b "  " $6 " |"} $1 ~ /(rsa|dsa)/ {print b "  " $6 " |  " $7 " |";b=""} END { print "\n" }' | sed 's/\.\(..\)k/\10/g'
//
// WriteOpenWrt does what they do, byte for byte, with the board's
// /proc/cpuinfo lines from its hello and the run's own output, quirks
// included: the first awk sets FS to ":" only for the records after the
// one it matched, so the first cpuinfo line found is split at blanks
// ("system type : ..." gives "type"); a figure printed without two
// decimals before its k keeps the k; openssl 3, which prints no line
// starting "OpenSSL", gets no version cell.

// WriteOpenWrt writes, per ok run with any of the wiki table's figures,
// what the wiki recipe prints on that board: the /proc/cpuinfo line (none
// when the run has no hello that carries the lines: an import) and the
// openssl line, with no header. Runs are ordered by board, then clock,
// then as stored.
func WriteOpenWrt(w io.Writer, runs []results.Run) error {
	var picked []*results.Run
	for i := range runs {
		r := &runs[i]
		if r.Status == results.StatusOK && openwrtHasAny(r, openwrtColumns) && recipeReads(r) {
			picked = append(picked, r)
		}
	}
	sortByBoardClock(picked)
	var sb strings.Builder
	for _, r := range picked {
		sb.WriteString(RecipeCPUInfo(helloCPUInfo(r.Hello)))
		sb.WriteString(RecipeOpenSSL(string(r.RawOutput)))
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// recipeReads reports whether the recipe reads any figure from r's
// output: it reads openssl speed's tables, not -mr's +F: lines, of which
// it makes a row of empty cells.
func recipeReads(r *results.Run) bool {
	return strings.ContainsAny(RecipeOpenSSL(string(r.RawOutput)), "0123456789")
}

// OpenWrtUnread are the ok runs with figures of the wiki's table whose
// output the recipe reads none of (openssl speed -mr's), which
// WriteOpenWrt leaves out rather than print a row of empty cells.
func OpenWrtUnread(runs []results.Run) []results.RunID {
	var ids []results.RunID
	for i := range runs {
		r := &runs[i]
		if r.Status == results.StatusOK && openwrtHasAny(r, openwrtColumns) && !recipeReads(r) {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// helloCPUInfo are the /proc/cpuinfo lines a board's hello carries.
func helloCPUInfo(hello json.RawMessage) []string {
	var h struct {
		CPUInfo []string `json:"cpuinfo"`
	}
	if len(hello) == 0 || json.Unmarshal(hello, &h) != nil {
		return nil
	}
	return h.CPUInfo
}

// RecipeCPUInfo is what the wiki recipe's cpuinfo line prints for the
// /proc/cpuinfo lines given (lines it does not match print nothing).
func RecipeCPUInfo(lines []string) string {
	var out []string
	colon := false // FS is ":" from the record after the first match on
	for _, line := range lines {
		fields := awkFields(line, colon)
		f2 := awkField(fields, 2)
		matched := false
		if strings.Contains(line, "system type") {
			out, matched = append(out, "|"+f2), true
		}
		if strings.Contains(line, "machine") {
			out, matched = append(out, f2), true
		}
		if strings.Contains(line, "cpu model") {
			out, matched = append(out, f2), true
		}
		if strings.Contains(line, "BogoMIPS") {
			out, matched = append(out, f2+" |"), true
		}
		colon = colon || matched
	}
	if len(out) == 0 {
		return ""
	}
	// sed ':M;N;$!bM;s#\n# |#g' joins every line with " |".
	return strings.Join(out, " |") + "\n"
}

// RecipeOpenSSL is what the wiki recipe's openssl line prints for the
// output of openssl speed.
func RecipeOpenSSL(output string) string {
	var sb strings.Builder
	b := ""
	for _, line := range strings.Split(strings.TrimSuffix(output, "\n"), "\n") {
		f := awkFields(line, false)
		f1 := awkField(f, 1)
		if strings.Contains(f1, "OpenSSL") {
			sb.WriteString("| " + awkField(f, 2) + " |")
		}
		if strings.Contains(f1, "md5") || strings.Contains(f1, "sha") {
			sb.WriteString("  " + awkField(f, 5) + " |")
		}
		if strings.Contains(f1, "des") || strings.Contains(f1, "aes") {
			b += "  " + awkField(f, 6) + " |"
		}
		if strings.Contains(f1, "rsa") || strings.Contains(f1, "dsa") {
			sb.WriteString(b + "  " + awkField(f, 6) + " |  " + awkField(f, 7) + " |")
			b = ""
		}
	}
	sb.WriteString("\n")
	// sed 's/\.\(..\)k/\10/g', line by line as sed reads them.
	var out []string
	for _, l := range strings.SplitAfter(sb.String(), "\n") {
		out = append(out, kiloDigits.ReplaceAllString(l, "${1}0"))
	}
	return strings.Join(out, "")
}

// kiloDigits is the recipe's sed pattern: two characters after a dot and
// before a k ("16160.43k" becomes "16160430").
var kiloDigits = regexp.MustCompile(`\.([^\n]{2})k`)

// awkFields splits a record as awk does: at runs of blanks with the
// default FS, at every ':' with FS=":".
func awkFields(line string, colon bool) []string {
	if colon {
		return strings.Split(line, ":")
	}
	return strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
}

// awkField is $n (from 1), "" past the last field.
func awkField(fields []string, n int) string {
	if n-1 < len(fields) {
		return fields[n-1]
	}
	return ""
}
