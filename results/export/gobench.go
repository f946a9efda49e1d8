package export

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/bootbench/bootbench/results"
)

// WriteGobench writes the ok runs in the Go benchmark format
// (golang.org/design/14313-benchmark-format), so benchstat and the rest of
// golang.org/x/perf can summarise and compare them.
//
// Each run becomes a block of file-level configuration lines followed by
// one result line per metric:
//
//	board: rb450g
//	clock: 680MHz
//	tool: openssl 3.0.13
//	BenchmarkAes128Cbc/block=1024 1 8730280 B/s
//	BenchmarkRsa2048Sign 1 18.1 ops/s
//
// board, clock and tool are configuration keys rather than parts of the
// benchmark name so that benchstat can put them in columns: `benchstat
// -col clock FILE` compares clock settings of one board, `-col board`
// boards at one clock. tool is there so benchstat keeps different openssl
// builds in separate tables instead of pooling them. Clock 0 (the board's
// default) is "clock: default".
//
// A metric name becomes "Benchmark" plus its CamelCase algorithm, with the
// block size as a sub-benchmark key: aes-128-cbc@1024 is
// BenchmarkAes128Cbc/block=1024, rsa2048-sign is BenchmarkRsa2048Sign. The
// iteration count is 1: each run measured each figure once.
//
// Units stay as stored (B/s, ops/s, bit/s). benchstat prints the change in
// percent with its sign whatever the unit, so +20% means the candidate's
// rate is higher; it only knows that higher is better for B/s (and MB/s).
// For other tools reading the file, a "Unit ... better=higher" line
// declares every rate unit (one ending in "/s") as higher-is-better.
// benchstat scales B/s with binary prefixes: 8.326Mi is 8.73 MB/s.
//
// Runs are grouped by board and clock, both ascending, so benchstat,
// which orders columns by first appearance, shows the lowest clock — the
// baseline — first.
func WriteGobench(w io.Writer, runs []results.Run) error {
	var ok []*results.Run
	units := map[string]bool{}
	for i := range runs {
		r := &runs[i]
		if r.Status != results.StatusOK || len(r.Metrics) == 0 {
			continue
		}
		ok = append(ok, r)
		for _, m := range r.Metrics {
			units[gobenchField(m.Unit)] = true
		}
	}
	sortByBoardClock(ok)

	var sb strings.Builder
	var rates []string
	for u := range units {
		if strings.HasSuffix(u, "/s") {
			rates = append(rates, u)
		}
	}
	sort.Strings(rates)
	for _, u := range rates {
		fmt.Fprintf(&sb, "Unit %s better=higher\n", u)
	}

	names := gobenchNames{}
	var board, clock, tool string
	for i, r := range ok {
		b, c, t := gobenchValue(r.Board), r.ClockMHz.Key(), gobenchTool(r)
		// Configuration lines hold until changed; repeating them only
		// when they change keeps the file close to `go test` output.
		if i == 0 || b != board || c != clock || t != tool {
			if sb.Len() > 0 {
				sb.WriteByte('\n')
			}
			board, clock, tool = b, c, t
			fmt.Fprintf(&sb, "board: %s\nclock: %s\ntool: %s\n", board, clock, tool)
		}
		ms := append([]results.Metric(nil), r.Metrics...)
		results.SortMetrics(ms)
		for _, m := range ms {
			fmt.Fprintf(&sb, "%s 1 %s %s\n", names.get(m.Name),
				strconv.FormatFloat(m.Value, 'f', -1, 64), gobenchField(m.Unit))
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func gobenchTool(r *results.Run) string {
	return gobenchValue(strings.TrimSpace(r.Tool + " " + r.ToolVersion))
}

// gobenchValue keeps a configuration value on one line.
func gobenchValue(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "unknown"
	}
	return s
}

// gobenchField makes s a single whitespace-free field, as units and names
// must be.
func gobenchField(s string) string {
	s = strings.Join(strings.Fields(s), "_")
	if s == "" {
		return "1" // benchfmt needs some unit; a dimensionless one says least
	}
	return s
}

// gobenchNames maps metric names to benchmark names, keeping distinct
// metrics distinct: two metric names that CamelCase alike ("hmac(md5)" and
// "hmac-md5") would otherwise be pooled by benchstat as one benchmark.
type gobenchNames map[string]string // benchmark name → metric name

func (n gobenchNames) get(metric string) string {
	name := gobenchName(metric)
	if owner, ok := n[name]; ok && owner != metric {
		name += "/metric=" + strings.Map(func(r rune) rune {
			// '/' and '=' would start new keys, a trailing "-N" reads
			// as GOMAXPROCS, whitespace ends the name.
			if r == '/' || r == '=' || r == '-' || unicode.IsSpace(r) {
				return '_'
			}
			return r
		}, metric)
	}
	n[name] = metric
	return name
}

// gobenchName turns a metric name into a benchmark name: "Benchmark", the
// algorithm in CamelCase (every run of letters and digits is one word),
// and "/block=N" for a block size.
func gobenchName(metric string) string {
	alg, block, hasBlock := results.SplitBlock(metric)
	var sb strings.Builder
	sb.WriteString("Benchmark")
	start := true
	for _, r := range alg {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			start = true
			continue
		}
		if start {
			r = unicode.ToUpper(r)
			start = false
		}
		sb.WriteRune(r)
	}
	if sb.Len() == len("Benchmark") {
		sb.WriteString("Metric")
	}
	if hasBlock {
		fmt.Fprintf(&sb, "/block=%d", block)
	}
	return sb.String()
}

// sortByBoardClock orders runs by board (naturally: rb450 before rb1100),
// then clock, keeping the store's order within a setting.
func sortByBoardClock(runs []*results.Run) {
	sort.SliceStable(runs, func(i, j int) bool {
		a, b := runs[i], runs[j]
		if c := results.NaturalCompare(a.Board, b.Board); c != 0 {
			return c < 0
		}
		return a.ClockMHz < b.ClockMHz
	})
}
