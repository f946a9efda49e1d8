package harness

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bootbench/bootbench/benchmark"
	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/internal/testkit/frametest"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/store"
)

// fakeTarget is a board that prints, on each power-on, the next of its
// scripted boots: the console lines a script makes for the run id the
// harness put on its command line. "<off>" powers it off; "<sleep 1s>"
// pauses, as a board busy with a test does.
type fakeTarget struct {
	boots []script

	mu      sync.Mutex
	run     string
	boot    int
	w       *io.PipeWriter
	off     atomic.Bool
	ons     int
	offs    int
	written sync.WaitGroup
}

var runParam = regexp.MustCompile(`bootbench\.run=(\S+)`)

// console is the host's end of a fake board's console: reads what the
// board prints, writes to it.
type console struct {
	io.ReadCloser
	io.Writer
}

func (f *fakeTarget) String() string { return "fake" }

func (f *fakeTarget) LoadDirect(kernel, initrd, cmdline string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.run = runParam.FindStringSubmatch(cmdline)[1]
}

func (f *fakeTarget) Console(ctx context.Context) (io.ReadWriteCloser, error) {
	r, w := io.Pipe()
	f.mu.Lock()
	f.w = w
	f.mu.Unlock()
	return console{r, io.Discard}, nil
}

func (f *fakeTarget) On(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ons++
	f.off.Store(false)
	var lines []string
	if f.boot < len(f.boots) && f.boots[f.boot] != nil {
		lines = f.boots[f.boot](f.run)
	}
	f.boot++
	w := f.w
	f.written.Add(1)
	go func() {
		defer f.written.Done()
		for _, l := range lines {
			if l == "<off>" {
				f.off.Store(true)
				return
			}
			if d, ok := strings.CutPrefix(l, "<sleep "); ok {
				pause, _ := time.ParseDuration(strings.TrimSuffix(d, ">"))
				time.Sleep(pause)
				continue
			}
			if _, err := fmt.Fprintf(w, "%s\r\n", l); err != nil {
				return
			}
		}
	}()
	return nil
}

func (f *fakeTarget) Off(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.offs++
	f.off.Store(true)
	f.w.Close()
	return nil
}

func (f *fakeTarget) PoweredOff(ctx context.Context) bool { return f.off.Load() }

// helloLine is a hello frame with the given clock report.
func helloLine(run string, h frame.HelloBody) string {
	h.Arch, h.Kernel, h.Bench = "amd64", "6.1.0", "speed"
	l, err := frame.Encode(run, 0, frame.Hello, h)
	if err != nil {
		panic(err)
	}
	return l
}

// resultLines are a raw and a done frame carrying out, numbered after hello.
func resultLines(run, out string) []string {
	raw, _ := frame.Encode(run, 1, frame.Raw, frame.RawBody{N: 0, Data: base64.StdEncoding.EncodeToString([]byte(out))})
	sum := sha256.Sum256([]byte(out))
	done, _ := frame.Encode(run, 2, frame.Done, frame.DoneBody{Chunks: 1, SHA256: hex.EncodeToString(sum[:])})
	return []string{raw, done}
}

func flipBit(line string) string {
	b := []byte(line)
	b[len(frame.Prefix)+20] ^= 0x04
	return string(b)
}

// fakeOptions runs a qemu-direct board (so no network is needed) whose
// image and kernel are small files, on target.
func fakeOptions(t *testing.T, target Target, p boards.Profile) config {
	t.Helper()
	dir := t.TempDir()
	kernel := filepath.Join(dir, "vmlinuz")
	os.WriteFile(kernel, []byte("kernel"), 0o644)
	image := filepath.Join(dir, "image.cpio")
	os.WriteFile(image, []byte("image"), 0o644)
	store, err := store.Open(filepath.Join(dir, "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	p.Name, p.Arch, p.Boot, p.ImageFormat, p.Console, p.Baud = "fakeboard", "amd64", boards.BootQEMUDirect, boards.FormatCPIO, "ttyS0", 115200
	return config{
		Job: plan.Job{
			Board: boards.Board{Name: "fake1", Profile: p}, Kernel: kernel, Benchmark: benchmark.Speed,
			BootTimeout: 2 * time.Second, RunTimeout: 2 * time.Second, Retries: 1,
		},
		Rig: Rig{
			Target: target, Store: store,
			Builders: plan.Builders{CacheDir: dir, BuildImage: func(context.Context, initramfs.Spec, string) (*initramfs.Image, error) {
				return &initramfs.Image{Path: image, Size: 5, Digest: "00", Cached: true}, nil
			}},
		},
	}
}

// script makes one boot's console lines for a run id.
type script func(run string) []string

// lines joins pieces of a boot: plain lines, and scripts for the frames.
func lines(parts ...any) script {
	return func(run string) []string {
		var out []string
		for _, p := range parts {
			switch p := p.(type) {
			case string:
				out = append(out, p)
			case script:
				out = append(out, p(run)...)
			}
		}
		return out
	}
}

func hello(h frame.HelloBody) script {
	return func(run string) []string { return []string{helloLine(run, h)} }
}

// result is the raw frame (index 0) and the done frame (index 1), or both.
func result(which ...int) script {
	return func(run string) []string {
		l := resultLines(run, speedOutput)
		if len(which) == 0 {
			return l
		}
		var out []string
		for _, i := range which {
			out = append(out, l[i])
		}
		return out
	}
}

// watched is a board that sends the suite's output with the throttling
// watch's samples of CPU 0's clock (kHz) before and after it, as
// benchinit does.
func watched(h frame.HelloBody, khz ...int) script {
	return func(run string) []string {
		var console strings.Builder
		w := frame.NewWriter(&console, run)
		h.Arch, h.Kernel, h.Bench = "amd64", "6.1.0", "speed"
		w.Send(frame.Hello, h)
		var samples []frame.WatchSample
		for i, k := range khz {
			samples = append(samples, frame.WatchSample{AtMS: int64(i) * 1000, CurKHz: []int{k}})
		}
		half := len(samples) / 2
		w.Send(frame.Watch, frame.WatchBody{Samples: samples[:half]})
		io.WriteString(w, speedOutput)
		w.Send(frame.Watch, frame.WatchBody{Samples: samples[half:]})
		w.Done(0, 1)
		return strings.Split(strings.TrimSuffix(console.String(), "\n"), "\n")
	}
}

func corruptRaw(run string) []string { return []string{flipBit(resultLines(run, speedOutput)[0])} }

func failFrame(run string) []string {
	return []string{mustEncode(run, 1, frame.Fail, frame.FailBody{Reason: "speed: out of memory"})}
}

// TestRunClassifies boots a fake board through every way a run can end and
// checks what is stored: status, reason, how many attempts.
func TestRunClassifies(t *testing.T) {
	const linux = "[    0.000000] Linux version 6.1.0"
	const panicLine = "[    1.234567] Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)"
	ok := lines(linux, hello(frame.HelloBody{}), result())
	rb450g, err := boards.Get("rb450g")
	if err != nil {
		t.Fatal(err)
	}
	// The clock held to BogoMIPS alone, as when it is set by hand: the
	// fake board has no firmware to type it into.
	rb450g.ClockMethod = boards.ClockManual
	stale := func(string) []string { return frametest.Board("20250101-000000-deadbeef", speedOutput) }
	tests := []struct {
		name    string
		profile boards.Profile
		clock   boards.MHz
		boots   []script
		// want is the stored status and a piece of the reason of each attempt, in order.
		want [][2]string
	}{
		{"ok", boards.Profile{}, 0, []script{ok},
			[][2]string{{"ok", ""}}},
		{"stale frames from an old boot are ignored", boards.Profile{}, 0, []script{lines(script(stale), ok)},
			[][2]string{{"ok", ""}}},
		{"boot timeout is retried", boards.Profile{}, 0, []script{lines(linux), ok},
			[][2]string{{"failed", "boot-timeout: no hello from the board within 2s (console silent for"}, {"ok", ""}}},
		{"a silent console says so", boards.Profile{}, 0, []script{nil, nil},
			[][2]string{{"failed", "its console stayed silent"}, {"failed", "its console stayed silent"}}},
		{"power-off before hello is retried", boards.Profile{}, 0, []script{lines(linux, "<off>"), ok},
			[][2]string{{"failed", "powered-off: the board powered off before its hello"}, {"ok", ""}}},
		{"power-off before done is not retried", boards.Profile{}, 0, []script{lines(hello(frame.HelloBody{}), result(0), "<off>"), ok},
			[][2]string{{"failed", "powered-off: the board powered off before its result"}}},
		{"corrupt after hello is retried", boards.Profile{}, 0, []script{lines(hello(frame.HelloBody{}), script(corruptRaw), result(1)), ok},
			[][2]string{{"corrupt", "corrupt: corrupt result frames"}, {"ok", ""}}},
		{"kernel panic, then a reboot or a power-off", boards.Profile{}, 0, []script{lines(linux, panicLine, "[    1.3] ---[ end Kernel panic ]---"), lines(linux, panicLine, "<off>")},
			[][2]string{{"failed", "kernel-panic: Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)"}, {"failed", "kernel-panic: Kernel panic - not syncing: VFS"}}},
		{"reset: a bootloader after the kernel", boards.Profile{}, 0, []script{lines(linux, "U-Boot 2023.01 (Jan 01 2023 - 00:00:00 +0000)"), ok},
			[][2]string{{"failed", "reset: the board reset: U-Boot 2023.01 started again after the kernel had (last line before: \"[    0.000000] Linux version 6.1.0\")"}, {"ok", ""}}},
		{"benchmark failure is not retried", boards.Profile{}, 0, []script{lines(hello(frame.HelloBody{}), script(failFrame)), ok},
			[][2]string{{"failed", "board-failed: board failed: speed: out of memory"}}},
		{"clock that did not take", boards.Profile{ClockMethod: boards.ClockCPUFreq}, 800,
			[]script{hello(frame.HelloBody{ClockRequestedMHz: 800, ClockSet: "no cpufreq in this kernel", BogoMIPS: "3990.00"})},
			[][2]string{{"clock-mismatch", "clock-mismatch: asked for 800 MHz, but the board reports no clock: the board says: no cpufreq in this kernel, BogoMIPS 3990.00"}}},
		{"clock off by cpufreq", boards.Profile{ClockMethod: boards.ClockCPUFreq}, 800,
			[]script{hello(frame.HelloBody{CPUFreqCurKHz: 680000, ClockSet: "scaling_max_freq 680000 kHz"})},
			[][2]string{{"clock-mismatch", "asked for 800 MHz, the board runs at 680 MHz (cpufreq; the board says: scaling_max_freq 680000 kHz)"}}},
		{"clock falls mid-run", boards.Profile{ClockMethod: boards.ClockCPUFreq}, 800,
			[]script{watched(frame.HelloBody{CPUFreqCurKHz: 800000, ClockRequestedMHz: 800}, 800000, 800000, 600000, 600000)},
			[][2]string{{"throttled", ""}}},
		{"clock holds through the run", boards.Profile{ClockMethod: boards.ClockCPUFreq}, 800,
			[]script{watched(frame.HelloBody{CPUFreqCurKHz: 800000, ClockRequestedMHz: 800}, 800000, 799999, 800000)},
			[][2]string{{"ok", ""}}},
		{"clock confirmed by cpufreq", boards.Profile{ClockMethod: boards.ClockCPUFreq}, 800,
			[]script{lines(hello(frame.HelloBody{CPUFreqCurKHz: 799999}), result())},
			[][2]string{{"ok", ""}}},
		// An RB450G asked for 800 MHz in RouterBOOT's menu, whose board
		// still runs at 680: 0.6656 BogoMIPS per MHz (the profile's).
		{"rb450g at 680 MHz when 800 was asked", rb450g, 800,
			[]script{hello(frame.HelloBody{BogoMIPS: "452.60"})},
			[][2]string{{"clock-mismatch", "clock-mismatch: asked for 800 MHz, the board's BogoMIPS 452.60 say about 680 MHz"}}},
		{"rb450g at 800 MHz", rb450g, 800,
			[]script{lines(hello(frame.HelloBody{BogoMIPS: "532.48"}), result())},
			[][2]string{{"ok", ""}}},
		// Stock Go on MIPS: 100 runtime sleeps of 1 ms took 5.8 ms.
		{"a Go runtime whose sleeps are too short", boards.Profile{}, 0,
			[]script{hello(frame.HelloBody{GoRuntime: "go1.26.8", SleepProbeUS: 5800, SleepProbeWantUS: 100000})},
			[][2]string{{"failed", "go-runtime: Go runtime go1.26.8: its sleeps took 5.8 ms for 100 ms asked (17× too short)"}}},
		{"sleeps too long cost a Go benchmark nothing", boards.Profile{}, 0,
			[]script{lines(hello(frame.HelloBody{GoRuntime: "go1.26.8", SleepProbeUS: 1000500, SleepProbeWantUS: 100000}), result())},
			[][2]string{{"ok", ""}}},
		{"a right runtime", boards.Profile{}, 0,
			[]script{lines(hello(frame.HelloBody{GoRuntime: "go1.26.8 +mips-usleep", SleepProbeUS: 101200, SleepProbeWantUS: 100000}), result())},
			[][2]string{{"ok", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ft := &fakeTarget{boots: tt.boots}
			o := fakeOptions(t, ft, tt.profile)
			o.Clock = tt.clock
			_, err := Run(context.Background(), o.Job, o.Rig)
			ft.written.Wait()
			runs, serr := o.Store.(*store.Store).Runs(context.Background(), results.Filter{})
			if serr != nil {
				t.Fatal(serr)
			}
			if len(runs) != len(tt.want) {
				t.Fatalf("%d runs stored, want %d (last error %v): %+v", len(runs), len(tt.want), err, runs)
			}
			for i, w := range tt.want {
				if runs[i].Status != w[0] || !strings.Contains(runs[i].Reason, w[1]) {
					t.Errorf("run %d: status %q reason %q; want %q with %q", i+1, runs[i].Status, runs[i].Reason, w[0], w[1])
				}
				// A throttled run measured: its figures are kept.
				measured := w[0] == "ok" || w[0] == "throttled"
				if measured && len(runs[i].Metrics) != 12 {
					t.Errorf("run %d: %d metrics, want 12", i+1, len(runs[i].Metrics))
				}
				if !measured && len(runs[i].Metrics) != 0 {
					t.Errorf("run %d: a %s run has metrics", i+1, w[0])
				}
				want := ""
				if w[0] == "throttled" {
					want = "the clock fell to 600 MHz (800 MHz asked) 2.0 s into the benchmark"
				}
				if got := runs[i].Throttle.String(); got != want {
					t.Errorf("run %d: throttle %q, want %q", i+1, got, want)
				}
			}
			last := tt.want[len(tt.want)-1][0]
			if (err == nil) != (last == "ok" || last == "throttled") {
				t.Errorf("Run returned %v", err)
			}
			if ft.ons != len(tt.want) || ft.offs != ft.ons {
				t.Errorf("powered on %d and off %d times, want %d each", ft.ons, ft.offs, len(tt.want))
			}
		})
	}
}

func mustEncode(run string, seq int, typ frame.Type, body any) string {
	l, err := frame.Encode(run, seq, typ, body)
	if err != nil {
		panic(err)
	}
	return l
}

// TestRunInterrupted cancels a run mid-boot: it is stored as interrupted,
// the board is powered off, and it is not retried.
func TestRunInterrupted(t *testing.T) {
	ft := &fakeTarget{boots: []script{lines("[    0.000000] Linux version 6.1.0")}}
	o := fakeOptions(t, ft, boards.Profile{})
	o.BootTimeout = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	rec, err := Run(ctx, o.Job, o.Rig)
	if err != ErrInterrupted || rec == nil || rec.Status != results.StatusInterrupted {
		t.Fatalf("Run = %+v, %v", rec, err)
	}
	if ft.ons != 1 || ft.offs != 1 {
		t.Errorf("on %d, off %d", ft.ons, ft.offs)
	}
}

// fakeOperator records what it was asked and answers with confirm.
type fakeOperator struct {
	confirm bool
	asked   []string
}

func (f *fakeOperator) Ask(ctx context.Context, msg string) (bool, error) {
	f.asked = append(f.asked, msg)
	return f.confirm, nil
}
func (f *fakeOperator) Tell(msg string) {}

// cmdlineTarget is a fakeTarget that keeps the command line it was given.
type cmdlineTarget struct {
	fakeTarget
	cmdline string
}

func (c *cmdlineTarget) LoadDirect(kernel, initrd, cmdline string) {
	c.cmdline = cmdline
	c.fakeTarget.LoadDirect(kernel, initrd, cmdline)
}

// TestClockMethods: each method gets the clock to the board its way, and
// the run stores what the board could confirm.
func TestClockMethods(t *testing.T) {
	tests := []struct {
		name        string
		profile     boards.Profile
		hello       frame.HelloBody
		wantCmdline string // a piece the command line must hold
		notCmdline  string
		wantAsked   bool
		wantCheck   string
		wantReport  boards.MHz
	}{
		{"cpufreq", boards.Profile{ClockMethod: boards.ClockCPUFreq}, frame.HelloBody{CPUFreqCurKHz: 800000},
			"bootbench.clock=800", "", false, results.ClockVerified, 800},
		{"config.txt, confirmed by cpufreq", boards.Profile{ClockMethod: boards.ClockConfigTxt}, frame.HelloBody{CPUFreqCurKHz: 800000},
			"bootbench.clock=800", "", false, results.ClockVerified, 800},
		{"cmdline template", boards.Profile{ClockMethod: boards.ClockCmdline, ClockCmdline: "cpu_mhz={mhz}"}, frame.HelloBody{},
			"cpu_mhz=800", "bootbench.clock=", false, results.ClockUnverified, 0},
		{"manual, confirmed by BogoMIPS", boards.Profile{ClockMethod: boards.ClockManual, BogoMIPSPerMHz: 0.5}, frame.HelloBody{BogoMIPS: "399.76"},
			"", "bootbench.clock=", true, results.ClockVerified, 800},
		{"manual, nothing on the board to confirm", boards.Profile{ClockMethod: boards.ClockManual}, frame.HelloBody{BogoMIPS: "532.48"},
			"", "bootbench.clock=", true, results.ClockUnverified, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct := &cmdlineTarget{fakeTarget: fakeTarget{boots: []script{lines(hello(tt.hello), result())}}}
			op := &fakeOperator{}
			o := fakeOptions(t, ct, tt.profile)
			o.Clock, o.Operator = 800, op
			rec, err := Run(context.Background(), o.Job, o.Rig)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if !strings.Contains(ct.cmdline, tt.wantCmdline) || (tt.notCmdline != "" && strings.Contains(ct.cmdline, tt.notCmdline)) {
				t.Errorf("command line %q: want %q, not %q", ct.cmdline, tt.wantCmdline, tt.notCmdline)
			}
			if asked := len(op.asked) > 0; asked != tt.wantAsked {
				t.Errorf("operator asked: %v (%q)", asked, op.asked)
			}
			if tt.wantAsked && !strings.Contains(op.asked[0], "Set fake1's CPU clock to 800 MHz") {
				t.Errorf("asked %q", op.asked[0])
			}
			if rec.ClockMHz != 800 || rec.ClockCheck != tt.wantCheck || rec.ClockReportedMHz != tt.wantReport {
				t.Errorf("stored clock %d, check %q, reported %d; want 800, %q, %d", rec.ClockMHz, rec.ClockCheck, rec.ClockReportedMHz, tt.wantCheck, tt.wantReport)
			}
		})
	}
}

// noConsole is a board whose console cannot be opened (the adapter is
// unplugged).
type noConsole struct{ *fakeTarget }

func (noConsole) Console(ctx context.Context) (io.ReadWriteCloser, error) {
	return nil, errors.New("open /dev/ttyUSB0: no such file or directory")
}

// TestSetupFailureNotStored: setup that fails before the board is switched
// on (no console, no image) stores nothing, is not retried, and says
// FailSetup, so the caller stops its plan.
func TestSetupFailureNotStored(t *testing.T) {
	tests := []struct {
		name  string
		setup func(o *config, ft *fakeTarget)
		says  string
	}{
		{"no console", func(o *config, ft *fakeTarget) { o.Target = noConsole{ft} }, "setup: open /dev/ttyUSB0"},
		{"no image", func(o *config, ft *fakeTarget) {
			o.Builders.BuildImage = func(context.Context, initramfs.Spec, string) (*initramfs.Image, error) {
				return nil, errors.New("no room in the cache")
			}
		}, "setup: no room in the cache"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ft := &fakeTarget{}
			o := fakeOptions(t, ft, boards.Profile{})
			tt.setup(&o, ft)
			rec, err := Run(context.Background(), o.Job, o.Rig)
			if rec != nil || Kind(err) != FailSetup || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("Run = %v, %v; want no run and a setup failure saying %q", rec, err, tt.says)
			}
			runs, serr := o.Store.(*store.Store).Runs(context.Background(), results.Filter{})
			if serr != nil {
				t.Fatal(serr)
			}
			if len(runs) != 0 || ft.ons != 0 {
				t.Errorf("%d runs stored, powered on %d times; want none", len(runs), ft.ons)
			}
		})
	}
}

// leakyTarget is a board whose power switch is named by a URL holding a
// password, and which fails to power on quoting it, as a driver's error
// might.
type leakyTarget struct{ fakeTarget }

const plantedSecret = "PlantedS3cret"

func (l *leakyTarget) String() string {
	return "curl -s http://admin:" + plantedSecret + "@198.18.5.7/cm?cmnd=Power%20On"
}

func (l *leakyTarget) On(ctx context.Context) error {
	// Retryable, so the retry line quotes it too.
	return &Failure{Kind: FailBootTimeout, BeforeHello: true,
		Err: fmt.Errorf("power on: Get \"http://admin:%s@198.18.5.7/cm\": connection refused", plantedSecret)}
}

// TestRunNeverShowsAPassword: what a run prints, the events it sends and
// the reason it stores mask the password of a URL they quote.
func TestRunNeverShowsAPassword(t *testing.T) {
	lt := &leakyTarget{}
	o := fakeOptions(t, lt, boards.Profile{})
	var progress strings.Builder
	var events []string
	o.Progress = &progress
	o.Events = func(e Event) { events = append(events, e.Msg) }
	rec, err := Run(context.Background(), o.Job, o.Rig)
	if err == nil || rec == nil {
		t.Fatalf("Run = %+v, %v; want a failed run", rec, err)
	}
	stored, serr := o.Store.(*store.Store).Run(context.Background(), rec.ID)
	if serr != nil {
		t.Fatal(serr)
	}
	for what, text := range map[string]string{
		"progress": progress.String(), "events": strings.Join(events, "\n"),
		"stored reason": stored.Reason, "returned reason": rec.Reason,
	} {
		if strings.Contains(text, plantedSecret) {
			t.Errorf("%s shows the password:\n%s", what, text)
		}
	}
	if !strings.Contains(stored.Reason, "http://admin:xxxxx@198.18.5.7/cm") {
		t.Errorf("stored reason %q: want the URL with its password masked", stored.Reason)
	}
}
