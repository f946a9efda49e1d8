package export

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/internal/testkit/storetest"
	"github.com/bootbench/bootbench/results"
)

func TestGobenchNames(t *testing.T) {
	tests := []struct{ metric, want string }{
		{"aes-128-cbc@1024", "BenchmarkAes128Cbc/block=1024"},
		{"md5@16", "BenchmarkMd5/block=16"},
		{"des-ede3@1024", "BenchmarkDesEde3/block=1024"},
		{"hmac(md5)@64", "BenchmarkHmacMd5/block=64"},
		{"rsa2048-sign", "BenchmarkRsa2048Sign"},
		{"ecdsa-p256-sign", "BenchmarkEcdsaP256Sign"},
		{"tcp-throughput", "BenchmarkTcpThroughput"},
		{"x@abc", "BenchmarkXAbc"},
		{"@@", "BenchmarkMetric"},
	}
	for _, tt := range tests {
		t.Run(tt.metric, func(t *testing.T) {
			if got := gobenchName(tt.metric); got != tt.want {
				t.Errorf("gobenchName(%q) = %q, want %q", tt.metric, got, tt.want)
			}
		})
	}
}

func TestGobenchNameClash(t *testing.T) {
	n := gobenchNames{}
	a := n.get("hmac(md5)@64")
	b := n.get("hmac-md5@64")
	if a == b {
		t.Fatalf("two metrics share the benchmark name %q", a)
	}
	if again := n.get("hmac-md5@64"); again != b {
		t.Errorf("name not stable: %q then %q", b, again)
	}
	if b != "BenchmarkHmacMd5/block=64/metric=hmac_md5@64" {
		t.Errorf("got %q", b)
	}
}

func gobenchRuns() []results.Run {
	runs := exportRuns()
	speed := *storetest.SampleRun("20250314-152000-qemu-x86_64-0-0", storetest.T0.Add(10*time.Minute))
	speed.ClockMHz = 0
	speed.Tool, speed.ToolVersion = "bootbench-speed", "0.1.0"
	return append(runs, speed)
}

func TestGobenchGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteGobench(&buf, gobenchRuns()); err != nil {
		t.Fatal(err)
	}
	storetest.Golden(t, "export.gobench", buf.Bytes())
}

// TestGobenchReadsBack reads the export with benchfmt, the reader
// benchstat uses, and checks every ok run's every metric arrives with its
// configuration.
func TestGobenchReadsBack(t *testing.T) {
	runs := gobenchRuns()
	var buf bytes.Buffer
	if err := WriteGobench(&buf, runs); err != nil {
		t.Fatal(err)
	}
	type key struct{ board, clock, name, unit string }
	got := map[key][]float64{}
	rd := benchfmt.NewReader(bytes.NewReader(buf.Bytes()), "export")
	for rd.Scan() {
		switch rec := rd.Result(); rec := rec.(type) {
		case *benchfmt.Result:
			if len(rec.Values) != 1 || rec.Iters != 1 {
				t.Errorf("%s: %d values, %d iterations", rec.Name, len(rec.Values), rec.Iters)
			}
			k := key{string(rec.GetConfig("board")), string(rec.GetConfig("clock")), "Benchmark" + string(rec.Name), rec.Values[0].Unit}
			got[k] = append(got[k], rec.Values[0].Value)
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", rec)
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range runs {
		if r.Status != results.StatusOK {
			continue
		}
		for _, m := range r.Metrics {
			n++
			k := key{r.Board, r.ClockMHz.Key(), gobenchName(m.Name), m.Unit}
			if vs := got[k]; len(vs) == 0 || !containsFloat(vs, m.Value) {
				t.Errorf("%v = %v, want %v among them", k, vs, m.Value)
			}
		}
	}
	total := 0
	for _, vs := range got {
		total += len(vs)
	}
	if total != n {
		t.Errorf("%d results, want %d", total, n)
	}
}

func containsFloat(vs []float64, v float64) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// TestGobenchBenchstat is the acceptance check: benchstat itself reads the
// export of a two-clock run set and reports the difference.
func TestGobenchBenchstat(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		goTool, err := exec.LookPath("go")
		if err != nil {
			t.Skip("no go command to run benchstat with")
		}
		s := e.Open(t)
		ctx := context.Background()
		// Five runs a clock: the fewest for which benchstat's Mann-Whitney
		// test can reach p < 0.05 with room to spare (four gives p = 0.029).
		jitter := []float64{0.990, 1.004, 0.997, 1.010, 1.000}
		for _, clock := range []int{680, 800} {
			scale := float64(clock) / 680
			for rep, j := range jitter {
				r := &results.Run{
					ID: results.RunID(fmt.Sprintf("rb450g-%d-%d", clock, rep)), Board: "rb450g", ClockMHz: boards.MHz(clock), Rep: rep,
					Status: results.StatusOK, Bench: "openssl", Tool: "openssl", ToolVersion: "3.0.13",
					Started: storetest.T0.Add(time.Duration(clock*10+rep) * time.Second),
					Metrics: []results.Metric{
						{Name: "aes-128-cbc@1024", Unit: "B/s", Value: float64(int(8730280 * scale * j))},
						{Name: "rsa2048-sign", Unit: "ops/s", Value: float64(int(181*scale*j)) / 10},
					},
				}
				if err := s.SaveRun(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
		}
		runs, err := s.Runs(ctx, results.Filter{Board: "rb450g"})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteGobench(&buf, runs); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "rb450g.txt")
		if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(goTool, "tool", "benchstat", "-col", "clock", file)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("benchstat: %v\n%s", err, out)
		}
		t.Logf("benchstat -col clock:\n%s", out)
		text := string(out)
		for _, want := range []string{"680MHz", "800MHz", "Aes128Cbc/block=1024", "Rsa2048Sign"} {
			if !strings.Contains(text, want) {
				t.Errorf("benchstat output lacks %q", want)
			}
		}
		// 800/680 = +17.65 %; the jitter is the same at both clocks, so the
		// ratio of medians is that within rounding.
		delta := regexp.MustCompile(`(?m)^Aes128Cbc/block=1024 .* \+17\.6\d% \(p=0\.\d+ n=5\)`)
		if !delta.MatchString(text) {
			t.Errorf("no significant +17.6x%% delta for Aes128Cbc in benchstat output")
		}
	})
}
