package export

import (
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/results"
)

// openwrtColumn is one figure column of the OpenWrt wiki's "OpenSSL
// benchmarks" table and the metric that fills it.
type openwrtColumn struct {
	header string
	metric string
	// perSecond columns are sign/verify rates, printed with one decimal
	// as openssl prints them; the others are byte rates printed as whole
	// bytes per second, the way the wiki recipe's sed turns "16160.43k"
	// into "16160430".
	perSecond bool
}

// openwrtColumns follow the wiki recipe's `openssl speed md5 sha1 sha256
// sha512 des des-ede3 aes-128-cbc aes-192-cbc aes-256-cbc rsa2048 dsa2048`,
// at the 1024-byte block size the wiki asks for.
var openwrtColumns = []openwrtColumn{
	{"md5", "md5@1024", false},
	{"sha1", "sha1@1024", false},
	{"sha256", "sha256@1024", false},
	{"sha512", "sha512@1024", false},
	{"des", "des-cbc@1024", false},
	{"3des", "des-ede3@1024", false},
	{"aes-128", "aes-128-cbc@1024", false},
	{"aes-192", "aes-192-cbc@1024", false},
	{"aes-256", "aes-256-cbc@1024", false},
	{"rsa2048 sign/s", "rsa2048-sign", true},
	{"rsa2048 verify/s", "rsa2048-verify", true},
	{"dsa2048 sign/s", "dsa2048-sign", true},
	{"dsa2048 verify/s", "dsa2048-verify", true},
}

// WriteOpenWrtSettings writes runs as rows for the OpenWrt wiki's OpenSSL
// benchmark table with the setting they were measured at (`results export
// --format openwrt --with-setting`): a header, then one row per board ×
// clock setting with board and clock first, then the openssl version and the figures of
// openwrtColumns. A missing figure is "-".
//
// Only ok runs count, and only those with at least one of the table's
// metrics (an iperf run at the same setting would otherwise add an empty
// row). When a setting has several runs each figure is the median over the
// runs that have it, so one noisy repetition does not move the row. Runs
// of different openssl versions are never merged: a median across versions
// describes no real build, so such a setting gets one row per version.
// Rows are ordered by board, clock, then version.
func WriteOpenWrtSettings(w io.Writer, runs []results.Run) error {
	type key struct {
		board   string
		clock   boards.MHz
		version string
	}
	groups := map[key][]*results.Run{}
	var keys []key
	for i := range runs {
		r := &runs[i]
		if r.Status != results.StatusOK || !openwrtHasAny(r, openwrtColumns) {
			continue
		}
		k := key{r.Board, r.ClockMHz, openwrtVersion(r)}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if c := results.NaturalCompare(a.board, b.board); c != 0 {
			return c < 0
		}
		if a.clock != b.clock {
			return a.clock < b.clock
		}
		return a.version < b.version
	})

	var sb strings.Builder
	sb.WriteString("| board | clock MHz | openssl |")
	for _, c := range openwrtColumns {
		sb.WriteString(" " + c.header + " |")
	}
	sb.WriteByte('\n')
	for _, k := range keys {
		sb.WriteString("| " + openwrtCell(k.board) + " | " + k.clock.Digits() + " | " + openwrtCell(k.version) + " |")
		for _, c := range openwrtColumns {
			sb.WriteString(" " + openwrtFigure(groups[k], c) + " |")
		}
		sb.WriteByte('\n')
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func openwrtHasAny(r *results.Run, cols []openwrtColumn) bool {
	for _, c := range cols {
		if _, ok := openwrtMetric(r, c.metric); ok {
			return true
		}
	}
	return false
}

// openwrtVersion is the openssl column: the bare version for openssl
// itself, as the wiki has it, but the program name too for anything else
// (the built-in suite is "bootbench-speed 0.1.0"), so nobody mistakes
// its figures for an openssl release's.
func openwrtVersion(r *results.Run) string {
	switch {
	case r.ToolVersion == "":
		return "-"
	case r.Tool == "" || r.Tool == "openssl":
		return r.ToolVersion
	default:
		return r.Tool + " " + r.ToolVersion
	}
}

// openwrtCell keeps a free-text cell from breaking the Markdown table.
func openwrtCell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "-"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}

func openwrtFigure(runs []*results.Run, c openwrtColumn) string {
	var vs []float64
	for _, r := range runs {
		if v, ok := openwrtMetric(r, c.metric); ok {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return "-"
	}
	v := exportMedian(vs)
	if c.perSecond {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	// A median of two may land on .5; whole bytes per second is the
	// wiki's precision.
	return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
}

// openwrtMetric finds a metric of r by name.
func openwrtMetric(r *results.Run, name string) (float64, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m.Value, true
		}
	}
	return 0, false
}

// exportMedian is the median of vs (the mean of the middle two for an even
// count); vs must not be empty. It does not reorder vs.
func exportMedian(vs []float64) float64 {
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
