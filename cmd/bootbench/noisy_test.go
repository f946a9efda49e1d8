package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bootbench/bootbench/benchmark"
	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/contract/bootparam"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/internal/testkit/junitxsd"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/gate"
	"github.com/bootbench/bootbench/results/spool"
	"github.com/bootbench/bootbench/results/store"
)

// A noisy board, replayed: the recorded consoles of the throttling test
// (openssl at 680 and 800 MHz, testdata/throttle-680.console and
// throttle-800.console) go into a USB serial adapter (a socat pty pair)
// and through the host's harness, collector and store as runs do, every
// boot with its figures scattered as a board's that is not steady: each
// figure of the output scaled by the next of a list of factors, and the
// frames signed and the output's digest made anew, as that board would
// send them.

// noisyBoard is a board whose console is a recording of the clock it was
// booted at, its figures scaled by factor and the boot's scatter.
type noisyBoard struct {
	*harness.Wired // the console: the adapter's host end
	uart           string
	recordings     map[boards.MHz]string
	factor         float64
	scatter        []float64
	boots          int
	run            string
	clock          boards.MHz
	off            atomic.Bool
	played         chan error
}

func (b *noisyBoard) String() string { return "noisy replay" }

func (b *noisyBoard) LoadDirect(kernel, initrd, cmdline string) {
	p := bootparam.Parse(cmdline)
	b.run, b.clock = p.Run, boards.MHz(p.ClockMHz)
}

func (b *noisyBoard) On(ctx context.Context) error {
	rec, ok := b.recordings[b.clock]
	if !ok {
		return fmt.Errorf("no recording at %s", b.clock)
	}
	lines, err := resign(rec, b.run)
	if err != nil {
		return err
	}
	scale := b.factor * b.scatter[b.boots%len(b.scatter)]
	b.boots++
	if lines, err = scaleFigures(lines, b.run, scale); err != nil {
		return err
	}
	uart, err := os.OpenFile(b.uart, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	b.off.Store(false)
	go func() {
		defer uart.Close()
		for _, l := range lines {
			if _, err := uart.WriteString(l + "\r\n"); err != nil {
				b.played <- err
				return
			}
		}
		b.off.Store(true)
		b.played <- nil
	}()
	return nil
}

func (b *noisyBoard) Off(ctx context.Context) error { b.off.Store(true); return nil }

func (b *noisyBoard) PoweredOff(ctx context.Context) bool { return b.off.Load() }

// opensslFigure is a figure of openssl speed's table, after its blanks:
// " 10272.09k" (not the version, "0.9.8k").
var opensslFigure = regexp.MustCompile(`\s[0-9]+\.[0-9]+k\b`)

// scaleFigures scales every figure of the output the frames of run carry
// by scale, and gives the done frame the new output's digest.
func scaleFigures(lines []string, run string, scale float64) ([]string, error) {
	sum := sha256.New()
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l
		if !frame.IsFrame([]byte(l)) {
			continue
		}
		f, err := frame.Decode([]byte(l))
		if err != nil {
			return nil, err
		}
		var body any
		switch f.Type {
		case frame.Raw:
			var raw frame.RawBody
			if err := json.Unmarshal(f.Body, &raw); err != nil {
				return nil, err
			}
			data, err := base64.StdEncoding.DecodeString(raw.Data)
			if err != nil {
				return nil, err
			}
			data = opensslFigure.ReplaceAllFunc(data, func(m []byte) []byte {
				v, _ := strconv.ParseFloat(string(m[1:len(m)-1]), 64)
				return []byte(string(m[:1]) + strconv.FormatFloat(v*scale, 'f', 2, 64) + "k")
			})
			sum.Write(data)
			raw.Data = base64.StdEncoding.EncodeToString(data)
			body = raw
		case frame.Done:
			var done frame.DoneBody
			if err := json.Unmarshal(f.Body, &done); err != nil {
				return nil, err
			}
			done.SHA256 = hex.EncodeToString(sum.Sum(nil))
			body = done
		default:
			continue
		}
		if out[i], err = frame.Encode(run, f.Seq, f.Type, body); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// noisyRig is the rig of a noisy board pi1 at factor, scattered by
// scatter, and its store at db, and the job that measures it.
func noisyRig(t *testing.T, db string, factor float64, scatter []float64) (plan.Job, harness.Rig, *spooledStore) {
	t.Helper()
	a := plugAdapter(t)
	a.openBoard(t) // the board's end, raw, held open as a UART is
	dir := t.TempDir()
	kernel, image := filepath.Join(dir, "vmlinuz"), filepath.Join(dir, "image.cpio")
	for _, f := range []string{kernel, image} {
		if err := os.WriteFile(f, []byte("replayed"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := boards.Profile{Name: "replay", Arch: "arm64", Boot: boards.BootQEMUDirect, ImageFormat: boards.FormatCPIO,
		Console: "ttyAMA0", Baud: 115200, ClockMethod: boards.ClockCPUFreq}
	board := &noisyBoard{Wired: &harness.Wired{Port: a.host, Baud: 115200}, uart: a.board, factor: factor, scatter: scatter,
		recordings: map[boards.MHz]string{680: "testdata/throttle-680.console", 800: "testdata/throttle-800.console"},
		played:     make(chan error, 64)}
	s, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	st := &spooledStore{Store: s, name: filepath.Base(db), path: db, spool: spool.For(db)}
	job := plan.Job{Board: boards.Board{Name: "pi1", Profile: p, Console: a.host}, Kernel: kernel, Benchmark: benchmark.OpenSSL,
		BootTimeout: 10 * time.Second, RunTimeout: 10 * time.Second}
	rig := harness.Rig{Target: board, Store: st.saver(), Builders: plan.Builders{CacheDir: dir,
		BuildImage: func(context.Context, initramfs.Spec, string) (*initramfs.Image, error) {
			return &initramfs.Image{Path: image, Size: 8, Digest: "5eed", Cached: true}, nil
		}}}
	return job, rig, st
}

// captured runs fn with the process's stdout and stderr into files, as a
// command's output goes, and returns what it wrote there.
func captured(t *testing.T, fn func() error) (stdout, stderr string, err error) {
	t.Helper()
	dir := t.TempDir()
	out, _ := os.Create(filepath.Join(dir, "stdout"))
	errf, _ := os.Create(filepath.Join(dir, "stderr"))
	saved, savedErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = out, errf
	defer func() { os.Stdout, os.Stderr = saved, savedErr }()
	err = fn()
	o, _ := os.ReadFile(out.Name())
	e, _ := os.ReadFile(errf.Name())
	out.Close()
	errf.Close()
	return string(o), string(e), err
}

// scatter4 is a board whose figures scatter ±4 % and more, run to run;
// steady one whose figures stay within ±0.05 %.
var (
	scatter4 = []float64{1.04, 0.97, 1.01, 0.95, 1.03, 0.99, 1.05, 0.96, 1.02, 0.94, 1.0, 1.045}
	steady   = []float64{1.0, 1.0004, 0.9997, 1.0002, 0.9999, 1.0003}
)

// TestRepsAuto: run --clock 680,800 --reps auto on a steady replayed board
// stops as soon as the interval of the ratio is within the target, at the
// fewest runs that have one (4 a setting); on a noisy one it goes on to
// --max-reps, says so after each round, and ends naming the metric that
// did not converge, its spread and how many more runs would have done.
// results compare then prints the interval the runs stopped on.
func TestRepsAuto(t *testing.T) {
	auto := boards.Reps{Auto: true, Target: 0.01, Max: 6}
	tests := []struct {
		name    string
		scatter []float64
		runs    int
		stdout  []string
		stderr  []string
	}{
		{"steady: stops at 4 runs a setting", steady, 8,
			[]string{"\nreps auto: every interval within ±1 % after 4 runs of each setting (1 judged; widest ±"},
			nil},
		{"noisy: to the most and naming what did not converge", scatter4, 12,
			[]string{
				"\nreps auto: stopped at the most, 6 runs of each setting (--max-reps 6); 1 of 1 intervals did not come within ±1 %:\n",
				"  aes-128-cbc@1024  800 vs 680 MHz  ±",
				"its runs scatter ±", "(one standard deviation); about ", " more runs a side would bring it within ±1 %\n",
			},
			[]string{
				"bootbench: reps auto: after 1 run of each setting: no intervals yet (they need 4 runs of each setting); another round\n",
				"bootbench: reps auto: after 4 runs of each setting: 1 of 1 intervals wider than ±1 % (widest ±",
				"bootbench: reps auto: after 5 runs of each setting: ",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "results.db")
			job, rig, st := noisyRig(t, db, 1, tt.scatter)
			sw := plan.Sweep{Job: job, Clocks: []boards.MHz{680, 800}, Reps: auto}
			stdout, stderr, err := captured(t, func() error { return runSettings(context.Background(), sw, rig, st) })
			if err != nil {
				t.Fatalf("run: %v\n%s\n%s", err, stdout, stderr)
			}
			runs, err := st.Runs(context.Background(), results.Filter{Board: "pi1", Status: results.StatusOK})
			if err != nil || len(runs) != tt.runs {
				t.Fatalf("%d ok runs stored (%v), want %d", len(runs), err, tt.runs)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tt.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			// What stopped the runs is what results compare prints.
			cmp := bootbench(t, db, "results", "compare", "--by", "clock", "--board", "pi1", "--target-ci", "1%")
			interval := regexp.MustCompile(`±[0-9.]+ %`).FindString(stdout[strings.Index(stdout, "reps auto:"):])
			if cmp.code != 0 || interval == "" || !strings.Contains(cmp.stdout, interval) {
				t.Errorf("results compare does not print the interval %q the runs stopped on:\n%s%s", interval, cmp.stdout, cmp.stderr)
			}
			t.Logf("stdout's end:\n%s\nresults compare:\n%s", stdout[strings.Index(stdout, "stored in"):], cmp.stdout)
		})
	}
}

// TestCIUndecided: ci against a baseline of 8 runs of a noisy replayed
// board: a candidate 3 % slower, with 5 % allowed, has its ratio's
// interval straddle 0.95: undecided, not failed, and --reps auto runs it
// to the most; one 10 % slower fails as soon as its interval lies wholly
// below 0.95. The JUnit file and the summary say which metric was decided
// at how many runs.
func TestCIUndecided(t *testing.T) {
	noisy := []float64{1.03, 0.97, 1.015, 0.975, 1.025, 0.985, 1.0, 1.03}
	db := filepath.Join(t.TempDir(), "results.db")
	job, rig, st := noisyRig(t, db, 1, noisy)
	sw := plan.Sweep{Job: job, Clocks: []boards.MHz{800}, Reps: boards.Reps{Count: 8}}
	if _, stderr, err := captured(t, func() error { return runSettings(context.Background(), sw, rig, st) }); err != nil {
		t.Fatalf("baseline runs: %v\n%s", err, stderr)
	}
	base, err := st.Runs(context.Background(), results.Filter{Board: "pi1", Status: results.StatusOK})
	if err != nil || len(base) != 8 {
		t.Fatalf("baseline: %d runs, %v", len(base), err)
	}
	auto := boards.Reps{Auto: true, Target: 0.01, Max: 6}
	tests := []struct {
		name     string
		factor   float64
		exit     int // 0 passes
		runs     int
		summary  []string
		junit    []string
		progress string
	}{
		{"3 % slower: undecided and passes", 0.97, 0, 6,
			[]string{"### bootbench ci: pi1 passed", "No metric of 1 regressed.", "1 of 1 metrics undecided, not failed: the 95 % interval of the ratio straddles 5 % slower", "| aes-128-cbc@1024 |"},
			[]string{`skipped="1"`, `<skipped message="aes-128-cbc@1024: undecided: 3.0 % slower, and the 95 % interval`, `<property name="undecided" value="1">`},
			"ci: reps auto: stopped at the most, 6 runs (--max-reps 6), with 1 metric(s) undecided"},
		{"10 % slower: fails", 0.90, 1, 4,
			[]string{"### bootbench ci: pi1 **failed**", "1 of 1 metrics regressed:", "Decided:\n\n- at 4 runs: aes-128-cbc@1024 (regressed)"},
			[]string{`failures="1"`, `type="regression"`, "decided at 4 runs"},
			"ci: reps auto: every metric decided after 4 runs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cdb := filepath.Join(t.TempDir(), "cand.db")
			// The baseline's scatter in another order: its median
			// over the first 4 runs and over 6 is the baseline's.
			job, rig, st := noisyRig(t, cdb, tt.factor, []float64{1.015, 0.975, 1.03, 0.985, 1.0, 1.025})
			dir := t.TempDir()
			to := ciReports{junit: filepath.Join(dir, "junit.xml"), summary: filepath.Join(dir, "summary.md")}
			sw := plan.Sweep{Job: job, Clocks: []boards.MHz{800}, Reps: auto}
			opts := gate.Options{MaxRegression: 0.05, BaselineName: "board=pi1,clock=800"}
			stdout, stderr, err := captured(t, func() error { return runCI(context.Background(), sw, rig, st, base, opts, to) })
			if (err == nil) != (tt.exit == 0) {
				t.Fatalf("ci: %v, want exit %d\n%s\n%s", err, tt.exit, stdout, stderr)
			}
			runs, _ := st.Runs(context.Background(), results.Filter{Board: "pi1"})
			if len(runs) != tt.runs {
				t.Errorf("%d runs, want %d", len(runs), tt.runs)
			}
			md, _ := os.ReadFile(to.summary)
			for _, w := range tt.summary {
				if !strings.Contains(string(md), w) || !strings.Contains(stdout, w) {
					t.Errorf("summary (and stdout) lack %q:\n%s", w, md)
				}
			}
			junit := checkJUnitOf(t, to.junit, "pi1")
			for _, w := range tt.junit {
				if !strings.Contains(junit, w) {
					t.Errorf("JUnit lacks %q:\n%s", w, junit)
				}
			}
			if !strings.Contains(stderr, tt.progress) {
				t.Errorf("stderr lacks %q:\n%s", tt.progress, stderr)
			}
			t.Logf("summary:\n%s", md)
		})
	}
}

// checkJUnitOf validates a JUnit file against the schema (junitxsd) and
// returns it; its one suite must be the board's.
func checkJUnitOf(t *testing.T, path, board string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := junitxsd.Check(b); err != nil {
		t.Errorf("%s is not valid JUnit: %v", path, err)
	}
	if !strings.Contains(string(b), `<testsuite name="`+board+`"`) {
		t.Errorf("%s has no suite of %s:\n%s", path, board, b)
	}
	return string(b)
}
