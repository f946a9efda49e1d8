package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bootbench/bootbench/benchmark"
	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/store"
)

// The throttling watch's acceptance: recorded consoles of a board that
// ran openssl at 680 and 800 MHz, and once at 800 MHz while its clock
// fell to 600 mid-run, are replayed into a USB serial adapter (a socat pty
// pair) and go through the host's harness, collector and store as a run
// does; then `results compare`, run as a user runs it, leaves the
// throttled run out and says so, or pools it when asked.
//
// The recordings in testdata/throttle-*.console are benchinit's own
// console, made by its run against a fake /sys whose thermal zone warms
// up and whose CPU 0 clock an external benchmark lowered from 800000 to
// 600000 kHz four seconds in, behind an arm64 board's kernel lines.

// recordedRun is the run id the recordings were made with.
const recordedRun = "20261203-101500-5eed0001"

var runOnCmdline = regexp.MustCompile(`bootbench\.run=(\S+)`)

// replayBoard is a board whose console is a recording. The host loads
// its kernel directly, with the command line naming the run; powered on,
// it prints the recording into its UART, each frame signed for that run
// as the board would sign it, and powers itself off after its last line,
// as benchinit does.
type replayBoard struct {
	*harness.Wired // the console: the adapter's host end
	t              *testing.T
	uart           string // the adapter's board end
	recording      string
	run            string
	off            atomic.Bool
	played         chan error
}

func (b *replayBoard) String() string { return "replay of " + filepath.Base(b.recording) }

func (b *replayBoard) LoadDirect(kernel, initrd, cmdline string) {
	b.run = runOnCmdline.FindStringSubmatch(cmdline)[1]
}

func (b *replayBoard) On(ctx context.Context) error {
	lines, err := resign(b.recording, b.run)
	if err != nil {
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

func (b *replayBoard) Off(ctx context.Context) error { b.off.Store(true); return nil }

func (b *replayBoard) PoweredOff(ctx context.Context) bool { return b.off.Load() }

// resign reads a recording and signs its frames for run.
func resign(path, run string) ([]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	for i, l := range lines {
		if !frame.IsFrame([]byte(l)) {
			continue
		}
		f, err := frame.Decode([]byte(l))
		if err != nil || f.Run != recordedRun {
			return nil, fmt.Errorf("%s line %d: not a frame of run %s: %v", path, i+1, recordedRun, err)
		}
		if lines[i], err = frame.Encode(run, f.Seq, f.Type, f.Body); err != nil {
			return nil, err
		}
	}
	return lines, nil
}

// replayRun replays recording as a run of board pi1 at clock through the
// harness into the store at db.
func replayRun(t *testing.T, db, recording string, clock boards.MHz) *results.Run {
	t.Helper()
	a := plugAdapter(t)
	a.openBoard(t) // the board's end, raw, held open as a UART is
	dir := t.TempDir()
	kernel := filepath.Join(dir, "vmlinuz")
	image := filepath.Join(dir, "image.cpio")
	for _, f := range []string{kernel, image} {
		if err := os.WriteFile(f, []byte("replayed"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := boards.Profile{Name: "replay", Arch: "arm64", Boot: boards.BootQEMUDirect, ImageFormat: boards.FormatCPIO,
		Console: "ttyAMA0", Baud: 115200, ClockMethod: boards.ClockCPUFreq}
	board := &replayBoard{Wired: &harness.Wired{Port: a.host, Baud: 115200}, t: t, uart: a.board,
		recording: filepath.Join("testdata", recording), played: make(chan error, 1)}
	store, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	job := plan.Job{Board: boards.Board{Name: "pi1", Profile: p, Console: a.host}, Kernel: kernel, Benchmark: benchmark.OpenSSL,
		Clock: clock, BootTimeout: 10 * time.Second, RunTimeout: 10 * time.Second}
	rig := harness.Rig{Target: board, Store: store, Builders: plan.Builders{CacheDir: dir,
		BuildImage: func(context.Context, initramfs.Spec, string) (*initramfs.Image, error) {
			return &initramfs.Image{Path: image, Size: 8, Digest: "5eed", Cached: true}, nil
		}}}
	rec, err := harness.Run(context.Background(), job, rig)
	if err != nil {
		t.Fatalf("replay of %s: %v", recording, err)
	}
	if err := <-board.played; err != nil {
		t.Fatalf("replay of %s: %v", recording, err)
	}
	return rec
}

func TestThrottledRunLeftOutOfCompare(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	replayRun(t, db, "throttle-680.console", 680)
	steady := replayRun(t, db, "throttle-800.console", 800)
	hot := replayRun(t, db, "throttle-800-falls.console", 800)
	if steady.Status != results.StatusOK || hot.Status != results.StatusThrottled {
		t.Fatalf("stored %s and %s, want ok and throttled", steady.Status, hot.Status)
	}
	// The clock fell between the samples at 4.0 and 5.0 s into the run.
	want := results.Throttle{Clock: &results.ClockDrop{AskedMHz: 800, LowestMHz: 600, AtMS: 5002}}
	if hot.Throttle == nil || !jsonEqual(*hot.Throttle, want) || len(hot.Metrics) == 0 {
		t.Fatalf("throttled run: %+v, %d metrics; want %+v with its figures", hot.Throttle, len(hot.Metrics), want)
	}

	show := bootbench(t, db, "results", "show", string(hot.ID))
	for _, w := range []string{"status   throttled\n", "throttle the clock fell to 600 MHz (800 MHz asked) 5.0 s into the benchmark; left out of comparisons unless --include-throttled\n"} {
		if show.code != 0 || !strings.Contains(show.stdout, w) {
			t.Errorf("results show: exit %d, stdout lacks %q:\n%s%s", show.code, w, show.stdout, show.stderr)
		}
	}
	list := bootbench(t, db, "results", "list")
	if !regexp.MustCompile(string(hot.ID) + `\s+pi1\s+800 MHz\s+throttled\s.*the clock fell to 600 MHz`).MatchString(list.stdout) {
		t.Errorf("results list does not mark the throttled run:\n%s", list.stdout)
	}

	left := bootbench(t, db, "results", "compare", "--by", "clock", "--board", "pi1")
	for _, w := range []string{"pi1: 680 MHz (baseline, 1 run) vs 800 MHz (1 run)", "\nleft out 1 throttled run (pi1 at 800 MHz ×1); --include-throttled pools them too\n"} {
		if left.code != 0 || !strings.Contains(left.stdout, w) {
			t.Errorf("compare: exit %d, stdout lacks %q:\n%s%s", left.code, w, left.stdout, left.stderr)
		}
	}
	in := bootbench(t, db, "results", "compare", "--by", "clock", "--board", "pi1", "--include-throttled")
	for _, w := range []string{"pi1: 680 MHz (baseline, 1 run) vs 800 MHz (2 runs)", "(1 throttled)", "\nincluded 1 throttled run (pi1 at 800 MHz ×1), as asked\n"} {
		if in.code != 0 || !strings.Contains(in.stdout, w) {
			t.Errorf("compare --include-throttled: exit %d, stdout lacks %q:\n%s%s", in.code, w, in.stdout, in.stderr)
		}
	}
	for _, tt := range []struct {
		flag      []string
		left, inc int
	}{{nil, 1, 0}, {[]string{"--include-throttled"}, 0, 1}} {
		js := bootbench(t, db, append([]string{"results", "compare", "--by", "clock", "--board", "pi1", "--format", "json"}, tt.flag...)...)
		var c struct {
			Throttled struct {
				LeftOut  int `json:"left_out"`
				Included int `json:"included"`
			} `json:"throttled"`
			Comparisons []struct {
				Candidate struct{ Runs int } `json:"candidate"`
			} `json:"comparisons"`
		}
		if err := json.Unmarshal([]byte(js.stdout), &c); err != nil || js.code != 0 {
			t.Fatalf("compare --format json %v: exit %d, %v:\n%s%s", tt.flag, js.code, err, js.stdout, js.stderr)
		}
		if c.Throttled.LeftOut != tt.left || c.Throttled.Included != tt.inc || len(c.Comparisons) != 1 || c.Comparisons[0].Candidate.Runs != 1+tt.inc {
			t.Errorf("compare --format json %v: %+v", tt.flag, c)
		}
	}
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
