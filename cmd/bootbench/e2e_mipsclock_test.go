package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/internal/testkit/needs"
	"github.com/bootbench/bootbench/internal/testkit/userenv"
)

// mipsHello is what these tests read of a MIPS board's hello.
type mipsHello struct {
	BogoMIPS     string `json:"bogomips"`
	GoRuntime    string `json:"go_runtime"`
	SleepProbeUS int64  `json:"sleep_probe_us"`
	WantUS       int64  `json:"sleep_probe_want_us"`
	ClockEvent   string `json:"clockevent"`
}

// assertCP0Ticks checks a virtual MIPS board ticked from its CP0 timer:
// one that ticks from the i8253 leaves QEMU 7.2's CP0 timer unacknowledged,
// and QEMU hangs 26 to 52 virtual seconds after boot (docs/mips-cp0-timer.md).
func assertCP0Ticks(t *testing.T, run storedRun) {
	t.Helper()
	var h mipsHello
	json.Unmarshal(run.Hello, &h)
	if h.ClockEvent != "MIPS" {
		t.Errorf("run %s ticks from %q, want the CP0 timer (MIPS)", run.ID, h.ClockEvent)
	}
}

// TestE2EMIPSClocks runs the MIPS router at two virtual clocks, four
// boots each, interleaved, and compares them: with the image's Go runtime
// corrected, every metric of the built-in suite doubles with the clock
// (2.00 ± 0.02, p < 0.05), each clock is confirmed by the BogoMIPS the
// board calibrated, and the board's sleep probe is within 10 % of what it
// asked for.
func TestE2EMIPSClocks(t *testing.T) {
	requireBench(t)
	parallelE2E(t)
	needs.Commands(t, "qemu-system-mipsel")
	db := filepath.Join(t.TempDir(), "results.db")
	runs := runAtTwoClocks(t, db, "--board", "qemu-mipsel", "--algs", "md5,sha256,aes-128-cbc,rsa2048", "--seconds", "0.1")
	for _, run := range runs {
		var h mipsHello
		json.Unmarshal(run.Hello, &h)
		if !strings.HasSuffix(h.GoRuntime, "+mips-usleep") || math.Abs(float64(h.SleepProbeUS-h.WantUS)) > 0.1*float64(h.WantUS) {
			t.Errorf("run %s: runtime %q slept %d µs for %d", run.ID, h.GoRuntime, h.SleepProbeUS, h.WantUS)
		}
	}
	// Three ciphers and hashes at six sizes, and RSA's sign and verify,
	// whose slow sign is read from its time per operation.
	metrics := assertDoubling(t, db, "qemu-mipsel", func(string) bool { return true })
	if len(metrics) != 20 {
		t.Fatalf("%d metrics compared, want 20", len(metrics))
	}
	t.Logf("sha256@1024: %v", metricLine(metrics, "sha256@1024"))
}

// runAtTwoClocks runs a board at 1000 and 500 MHz, four boots each,
// interleaved (run's flags after args), and checks that all eight were
// stored ok with the clock the board's BogoMIPS confirm, ticking from the
// CP0 timer.
func runAtTwoClocks(t *testing.T, db string, args ...string) []storedRun {
	t.Helper()
	r := bootbench(t, db, append([]string{"run", "--clock", "1000,500", "--reps", "4"}, args...)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	runs := storedRuns(t, db)
	if len(runs) != 8 {
		t.Fatalf("%d runs stored, want 8", len(runs))
	}
	for _, run := range runs {
		if run.Status != "ok" || run.ClockCheck != "verified" || math.Abs(float64(run.ClockReportedMHz-run.ClockMHz)) > 0.06*float64(run.ClockMHz) {
			t.Errorf("run %s at %d MHz: status %s, clock %s, reported %d MHz", run.ID, run.ClockMHz, run.Status, run.ClockCheck, run.ClockReportedMHz)
		}
		assertCP0Ticks(t, run)
	}
	return runs
}

// assertDoubling compares board's clocks and checks that every metric
// keep selects doubled with the clock: 2.00 ± 0.02, p < 0.05. It returns
// the metrics checked.
func assertDoubling(t *testing.T, db, board string, keep func(name string) bool) []comparedMetric {
	t.Helper()
	c := bootbench(t, db, "results", "compare", "--by", "clock", "--board", board, "--format", "json")
	if c.code != 0 {
		t.Fatalf("compare: exit %d: %s", c.code, c.stderr)
	}
	var checked []comparedMetric
	for _, m := range compareMetrics(t, c.stdout) {
		if !keep(m.Name) {
			continue
		}
		checked = append(checked, m)
		if m.Ratio == nil || math.Abs(*m.Ratio-2) > 0.02 || m.PValue == nil || *m.PValue >= 0.05 {
			t.Errorf("%s: ratio %v, p %v; want 2.00 ± 0.02, p < 0.05", m.Name, deref(m.Ratio), deref(m.PValue))
		}
	}
	return checked
}

type comparedMetric struct {
	Name   string   `json:"name"`
	Ratio  *float64 `json:"ratio"`
	PValue *float64 `json:"p_value"`
}

// compareMetrics are the metrics of every comparison compare printed.
func compareMetrics(t *testing.T, out string) []comparedMetric {
	t.Helper()
	var doc struct {
		Comparisons []struct {
			Metrics []comparedMetric `json:"metrics"`
		} `json:"comparisons"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("compare is not JSON: %v\n%s", err, out)
	}
	var all []comparedMetric
	for _, c := range doc.Comparisons {
		all = append(all, c.Metrics...)
	}
	return all
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func metricLine(ms []comparedMetric, name string) string {
	for _, m := range ms {
		if m.Name == name {
			b, _ := json.Marshal(m)
			return string(b)
		}
	}
	return "missing"
}

// TestE2EStockGoRuntime boots the MIPS router with an image whose Go
// runtime is left as the toolchain has it: the board's probe finds the
// runtime's sleeps more than 10 times too short (1000 times, bounded by
// the kernel's timer slack), and the host refuses to store the built-in
// suite's figures, saying why.
func TestE2EStockGoRuntime(t *testing.T) {
	requireBench(t)
	needs.Commands(t, "qemu-system-mipsel")
	parallelE2E(t)
	db := filepath.Join(t.TempDir(), "results.db")
	r, _ := bootbenchAt(t, bootbenchBin, ".", []string{"BOOTBENCH_DB=" + db, "BOOTBENCH_CACHE=" + cacheOf(t), initramfs.StockRuntimeEnv + "=1"},
		"run", "--board", "qemu-mipsel", "--clock", "500", "--retries", "0", "--algs", "md5", "--seconds", "0.1")
	if r.code != 1 || !strings.Contains(r.stderr, "go-runtime: Go runtime go1.") {
		t.Fatalf("exit %d, want 1 with go-runtime\n%s", r.code, r.stderr)
	}
	runs := storedRuns(t, db)
	if len(runs) != 1 {
		t.Fatalf("%d runs stored, want 1", len(runs))
	}
	run := runs[0]
	var h mipsHello
	json.Unmarshal(run.Hello, &h)
	if run.Status != "failed" || !strings.HasPrefix(run.Reason, "go-runtime: ") || !strings.Contains(run.Reason, "too short") {
		t.Errorf("stored %s: %q", run.Status, run.Reason)
	}
	if h.WantUS != 100000 || h.SleepProbeUS <= 0 || h.SleepProbeUS*10 > h.WantUS || strings.Contains(h.GoRuntime, "+") {
		t.Errorf("stock runtime %q slept %d µs for %d; want more than 10 times short", h.GoRuntime, h.SleepProbeUS, h.WantUS)
	}
	t.Logf("stock runtime: %d µs for %d µs asked; %s", h.SleepProbeUS, h.WantUS, run.Reason)
}

// TestImageRefusesUnknownGoRuntime builds a MIPS image with a Go toolchain
// whose runtime lacks the instructions the correction replaces (a copy of
// the real GOROOT with them already changed, as a Go that fixed usleep
// would have them): image build fails in one line naming the file,
// rather than building an image with a runtime nobody checked.
func TestImageRefusesUnknownGoRuntime(t *testing.T) {
	needs.Commands(t, "go")
	real := strings.TrimSpace(goEnv(t, "GOROOT"))
	fake := filepath.Join(t.TempDir(), "go")
	mirrorTree(t, real, fake, "src/runtime/sys_linux_mipsx.s")
	file := filepath.Join(fake, "src", "runtime", "sys_linux_mipsx.s")
	src, err := os.ReadFile(filepath.Join(real, "src", "runtime", "sys_linux_mipsx.s"))
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(src), "\tSUBU\tR4, R5\n", "\tSUBU\tR5, R4\n", 1)
	if err := os.WriteFile(file, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"GOROOT=" + fake, "PATH=" + filepath.Join(fake, "bin") + ":" + os.Getenv("PATH")}
	out := filepath.Join(t.TempDir(), "image.cpio")
	r, _ := bootbenchAt(t, bootbenchBin, "../..", env, "image", "build", "--arch", "mipsle", "-o", out)
	msg := strings.TrimSpace(r.stderr)
	if r.code == 0 || !strings.Contains(msg, file) || !strings.Contains(msg, "runtime·usleep") || strings.Contains(msg, "\n") {
		t.Fatalf("exit %d, want a one-line refusal naming %s:\n%s", r.code, file, r.stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("an image was written")
	}
	t.Log(msg)
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := userenv.Command(nil, "go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return string(out)
}

// mirrorTree makes dst a tree of symbolic links to src's files, with real
// directories on the way to keep (a path inside src), which is left for
// the caller to write.
func mirrorTree(t *testing.T, src, dst, keep string) {
	t.Helper()
	parts := strings.Split(keep, "/")
	for i := 0; i < len(parts); i++ {
		from, to := filepath.Join(src, filepath.Join(parts[:i]...)), filepath.Join(dst, filepath.Join(parts[:i]...))
		if err := os.MkdirAll(to, 0o755); err != nil {
			t.Fatal(err)
		}
		ents, err := os.ReadDir(from)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.Name() == parts[i] {
				continue
			}
			if err := os.Symlink(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
}
