package export

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/internal/testkit/storetest"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/parse"
)

const openwrtHeader = "| board | clock MHz | openssl | md5 | sha1 | sha256 | sha512 | des | 3des | aes-128 | aes-192 | aes-256 | rsa2048 sign/s | rsa2048 verify/s | dsa2048 sign/s | dsa2048 verify/s |"

// TestOpenWrtFixtureRow goes the whole way a bench result does: real
// openssl 0.9.8k output from an RB450 at 300 MHz, parsed, stored, loaded
// and exported with its setting, must give the figures the wiki recipe
// would have printed, board and clock first.
func TestOpenWrtFixtureRow(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		data, err := os.ReadFile(filepath.Join("testdata", "openssl-0.9.8k-rb450-300mhz.txt"))
		if err != nil {
			t.Fatal(err)
		}
		out, err := parse.OpenSSL(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		r := &results.Run{
			ID: "rb450-300-0", Board: "rb450", ClockMHz: 300, Status: results.StatusOK,
			Bench: "openssl", Tool: out.Tool, ToolVersion: out.Version,
			Started: storetest.T0, RawOutput: data,
		}
		for _, m := range out.Metrics {
			r.Metrics = append(r.Metrics, results.Metric{Name: m.Name, Unit: m.Unit, Value: m.Value})
		}
		s := e.Open(t)
		ctx := context.Background()
		if err := s.SaveRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		runs, err := s.Runs(ctx, results.Filter{Board: "rb450", ClockMHz: 300})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteOpenWrtSettings(&buf, runs); err != nil {
			t.Fatal(err)
		}
		want := openwrtHeader + "\n" +
			"| rb450 | 300 | 0.9.8k | 16160430 | 5467140 | 3850580 | 1684140 | 2287620 | 829440 | 3849560 | 3344730 | 2956630 | 3.0 | 108.5 | 11.0 | 9.2 |\n"
		if got := buf.String(); got != want {
			t.Errorf("got\n%s\nwant\n%s", got, want)
		}
	})
}

func TestOpenWrtRows(t *testing.T) {
	at := func(i int) time.Time { return storetest.T0.Add(time.Duration(i) * time.Minute) }
	run := func(id, board string, clock boards.MHz, status, tool, version string, i int, ms ...results.Metric) results.Run {
		return results.Run{ID: results.RunID(id), Board: board, ClockMHz: clock, Status: status, Tool: tool, ToolVersion: version, Started: at(i), Metrics: ms}
	}
	md5 := func(v float64) results.Metric { return results.Metric{Name: "md5@1024", Unit: "B/s", Value: v} }
	sign := func(v float64) results.Metric { return results.Metric{Name: "rsa2048-sign", Unit: "ops/s", Value: v} }
	tests := []struct {
		name string
		runs []results.Run
		want []string // rows after the header
	}{
		{
			name: "no runs gives the header alone",
		},
		{
			name: "median of three, other columns missing",
			runs: []results.Run{
				run("a", "rb450g", 680, results.StatusOK, "openssl", "3.0.13", 0, md5(100), sign(18.04)),
				run("b", "rb450g", 680, results.StatusOK, "openssl", "3.0.13", 1, md5(300), sign(18.16)),
				run("c", "rb450g", 680, results.StatusOK, "openssl", "3.0.13", 2, md5(200), sign(99)),
			},
			want: []string{"| rb450g | 680 | 3.0.13 | 200 | - | - | - | - | - | - | - | - | 18.2 | - | - | - |"},
		},
		{
			name: "median of two is their mean, rounded to whole bytes",
			runs: []results.Run{
				run("a", "rb450g", 680, results.StatusOK, "openssl", "3.0.13", 0, md5(100)),
				run("b", "rb450g", 680, results.StatusOK, "openssl", "3.0.13", 1, md5(102), sign(3)),
			},
			want: []string{"| rb450g | 680 | 3.0.13 | 101 | - | - | - | - | - | - | - | - | 3.0 | - | - | - |"},
		},
		{
			name: "only ok runs with table metrics count",
			runs: []results.Run{
				run("a", "rb450g", 680, results.StatusOK, "openssl", "3.0.13", 0, md5(100)),
				run("b", "rb450g", 680, results.StatusFailed, "openssl", "3.0.13", 1, md5(9999)),
				run("c", "rb450g", 680, results.StatusOK, "iperf3", "3.12", 2, results.Metric{Name: "tcp-throughput", Unit: "bit/s", Value: 9e8}),
				run("d", "rb450g", 800, results.StatusInterrupted, "", "", 3),
			},
			want: []string{"| rb450g | 680 | 3.0.13 | 100 | - | - | - | - | - | - | - | - | - | - | - | - |"},
		},
		{
			name: "sorted by board then clock; built-in suite named; default clock",
			runs: []results.Run{
				run("a", "rb450g", 800, results.StatusOK, "openssl", "3.0.13", 0, md5(2)),
				run("b", "rb450g", 680, results.StatusOK, "openssl", "3.0.13", 1, md5(1)),
				run("c", "qemu-x86_64", 0, results.StatusOK, "bootbench-speed", "0.1.0", 2, md5(3)),
			},
			want: []string{
				"| qemu-x86_64 | - | bootbench-speed 0.1.0 | 3 | - | - | - | - | - | - | - | - | - | - | - | - |",
				"| rb450g | 680 | 3.0.13 | 1 | - | - | - | - | - | - | - | - | - | - | - | - |",
				"| rb450g | 800 | 3.0.13 | 2 | - | - | - | - | - | - | - | - | - | - | - | - |",
			},
		},
		{
			name: "versions are not pooled",
			runs: []results.Run{
				run("a", "rb450g", 680, results.StatusOK, "openssl", "3.0.13", 0, md5(10)),
				run("b", "rb450g", 680, results.StatusOK, "openssl", "1.1.1w", 1, md5(20)),
			},
			want: []string{
				"| rb450g | 680 | 1.1.1w | 20 | - | - | - | - | - | - | - | - | - | - | - | - |",
				"| rb450g | 680 | 3.0.13 | 10 | - | - | - | - | - | - | - | - | - | - | - | - |",
			},
		},
		{
			name: "a pipe in a board name cannot split the row; unknown version",
			runs: []results.Run{run("a", "odd|board", 400, results.StatusOK, "", "", 0, md5(1))},
			want: []string{`| odd\|board | 400 | - | 1 | - | - | - | - | - | - | - | - | - | - | - | - |`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteOpenWrtSettings(&buf, tt.runs); err != nil {
				t.Fatal(err)
			}
			want := strings.Join(append([]string{openwrtHeader}, tt.want...), "\n") + "\n"
			if got := buf.String(); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}
