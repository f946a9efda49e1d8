package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/contract/bootparam"
	"github.com/bootbench/bootbench/contract/frame"
)

// fakeBoard lays out the files benchinit reads on a board: /proc, a
// cpufreq policy, and, unless spec is empty, an external benchmark.
func fakeBoard(t *testing.T, spec string) string {
	t.Helper()
	root := fakeSys(t, fakeCPU{
		"scaling_available_governors": "ondemand userspace",
		"scaling_governor":            "ondemand",
		"scaling_setspeed":            "<unsupported>",
		"scaling_cur_freq":            "680000",
		"scaling_min_freq":            "400000",
		"scaling_max_freq":            "800000",
	})
	files := map[string]string{
		"proc/cpuinfo": "system type\t\t: Atheros AR7161 rev 2\nmachine\t\t\t: MikroTik RouterBOARD 450G\ncpu model\t\t: MIPS 24Kc V7.4\nBogoMIPS\t\t: 452.19\n",
		"proc/meminfo": "MemTotal:          61572 kB\n",
	}
	if spec != "" {
		files[strings.TrimPrefix(bootparam.BenchSpecPath, "/")] = spec
	}
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// shSpec describes an external benchmark that is a shell script.
func shSpec(name, script string, args ...string) string {
	b, _ := json.Marshal(bootparam.BenchSpec{Name: name, Argv: append([]string{"/bin/sh", "-c", script, "sh"}, args...)})
	return string(b)
}

// boardRun is what the host made of a run's console.
type boardRun struct {
	events []frame.Event
	hello  frame.HelloBody
	result frame.Result
	reason string // from "fail"
	output string // what arrived, verified or not
	done   frame.DoneBody
}

// runBoard runs benchinit's work against root and feeds its console to
// the host's collector, so every frame is checked the way the host will.
func runBoard(t *testing.T, p bootparam.Params, root string) boardRun {
	t.Helper()
	var console bytes.Buffer
	run(frame.NewWriter(&console, p.Run), p, root)
	col := frame.NewCollector(p.Run)
	var r boardRun
	for _, line := range strings.Split(strings.TrimSuffix(console.String(), "\n"), "\n") {
		ev, err := col.Feed([]byte(line))
		if err != nil {
			t.Fatalf("host rejects %q: %v", line, err)
		}
		r.events = append(r.events, ev)
		if f, err := frame.Decode([]byte(line)); err == nil && f.Type == frame.Done {
			json.Unmarshal(f.Body, &r.done)
		}
	}
	r.result, r.reason, r.output = col.Result(), col.Reason, string(col.Output())
	r.hello = r.result.Hello
	return r
}

func TestRun(t *testing.T) {
	defer func(d time.Duration) { killWait = d }(killWait)
	killWait = 300 * time.Millisecond
	params := func(bench string, mod func(*bootparam.Params)) bootparam.Params {
		p := bootparam.Params{Run: "r1", Bench: bench, Reps: 1}
		if mod != nil {
			mod(&p)
		}
		return p
	}
	tests := []struct {
		name   string
		spec   string
		p      bootparam.Params
		output string // exact, or with "~" first a substring
		exit   int
		reps   int    // in done
		fail   string // substring of the fail reason; "" = done expected
		needs  string // a command the script uses
	}{
		{
			name:   "one pipe keeps stdout and stderr in order",
			spec:   shSpec("openssl", `echo out1; echo err1 >&2; echo out2; printf tail`),
			p:      params("openssl", nil),
			output: "out1\nerr1\nout2\ntail",
			reps:   1,
		},
		{
			name:   "seconds token",
			spec:   shSpec("openssl", `echo "t=$1 $2"`, "{seconds}", "-s{seconds}"),
			p:      params("openssl", func(p *bootparam.Params) { p.Seconds = 2 * time.Second }),
			output: "t=2 -s2\n",
			reps:   1,
		},
		{
			name:   "repetitions are marked",
			spec:   shSpec("openssl", `echo hi`),
			p:      params("openssl", func(p *bootparam.Params) { p.Reps = 3 }),
			output: "--- bootbench rep 1 of 3 ---\nhi\n--- bootbench rep 2 of 3 ---\nhi\n--- bootbench rep 3 of 3 ---\nhi\n",
			reps:   3,
		},
		{
			name:   "non-zero exit is done, and ends the repetitions",
			spec:   shSpec("openssl", `echo bad option >&2; exit 3`),
			p:      params("openssl", func(p *bootparam.Params) { p.Reps = 2 }),
			output: "--- bootbench rep 1 of 2 ---\nbad option\n",
			exit:   3,
			reps:   1,
		},
		{
			name:   "crash names the signal",
			spec:   shSpec("openssl", `echo before; kill -SEGV $$`),
			p:      params("openssl", nil),
			output: "before\n",
			fail:   "killed by signal SIGSEGV",
		},
		{
			name:   "timeout kills the whole process group",
			spec:   shSpec("openssl", `echo start; sleep 30; echo never`),
			p:      params("openssl", func(p *bootparam.Params) { p.Timeout = 200 * time.Millisecond; p.Reps = 2 }),
			output: "--- bootbench rep 1 of 2 ---\nstart\n",
			fail:   "rep 1 of 2: timed out after 0.2s",
		},
		{
			name:   "what the benchmark leaves running is stopped",
			spec:   shSpec("openssl", `sleep 30 & echo main`),
			p:      params("openssl", nil),
			output: "main\n",
			reps:   1,
		},
		{
			name:   "output held open by an escaped process",
			spec:   shSpec("openssl", `setsid sleep 2 & sleep 0.1; echo main`),
			p:      params("openssl", nil),
			output: "main\n",
			fail:   "reading its output failed",
			needs:  "setsid",
		},
		{
			name: "command missing",
			spec: `{"name":"openssl","argv":["/nonexistent/openssl","speed"]}`,
			p:    params("openssl", nil),
			fail: "/nonexistent/openssl",
		},
		{
			name: "no bench.json",
			p:    params("openssl", nil),
			fail: `benchmark "openssl" is not in this image: it has no /etc/bootbench/bench.json`,
		},
		{
			name: "bench.json for another benchmark",
			spec: shSpec("iperf3", "true"),
			p:    params("openssl", nil),
			fail: `describes "iperf3"`,
		},
		{
			name: "broken bench.json",
			spec: `{"name":"openssl","argv":"/bin/openssl speed"}`,
			p:    params("openssl", nil),
			fail: bootparam.BenchSpecPath,
		},
		{
			name:   "built-in suite, repeated",
			p:      params("speed", func(p *bootparam.Params) { p.Algs = []string{"md5"}; p.Seconds = time.Millisecond; p.Reps = 2 }),
			output: "~--- bootbench rep 2 of 2 ---\nversion: bootbench-speed ",
			reps:   2,
		},
		{
			name:   "built-in suite, bad option",
			p:      params("speed", func(p *bootparam.Params) { p.Algs = []string{"md2"} }),
			output: "~unknown algorithm \"md2\"",
			exit:   1,
			reps:   1,
		},
		{
			name:   "built-in suite, timeout",
			p:      params("speed", func(p *bootparam.Params) { p.Seconds = time.Hour; p.Timeout = 50 * time.Millisecond }),
			output: "~Doing md5 for 3600s",
			fail:   "timed out after 0.05s",
		},
		{
			name: "no run id",
			p:    params("speed", func(p *bootparam.Params) { p.Run = "" }),
			fail: "no bootbench.run=",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := exec.LookPath(tt.needs); tt.needs != "" && err != nil {
				t.Skip(err)
			}
			start := time.Now()
			r := runBoard(t, tt.p, fakeBoard(t, tt.spec))
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v: something waited for a killed process", d)
			}
			last := r.events[len(r.events)-1]
			if tt.fail != "" {
				if last != frame.EventFailed || !strings.Contains(r.reason, tt.fail) {
					t.Fatalf("ended with event %v, reason %q; want a fail containing %q", last, r.reason, tt.fail)
				}
			} else {
				if last != frame.EventDone {
					t.Fatalf("ended with event %v (reason %q), want done", last, r.reason)
				}
				if r.result.Exit != tt.exit || r.done.Reps != tt.reps {
					t.Errorf("exit %d after %d reps, want %d after %d", r.result.Exit, r.done.Reps, tt.exit, tt.reps)
				}
			}
			if want, ok := strings.CutPrefix(tt.output, "~"); ok {
				if !strings.Contains(r.output, want) {
					t.Errorf("output %q does not contain %q", r.output, want)
				}
			} else if r.output != tt.output {
				t.Errorf("output %q, want %q", r.output, tt.output)
			}
		})
	}
}

// TestHello checks what the board reports before it runs, the requested
// clock applied first.
func TestHello(t *testing.T) {
	p := bootparam.Params{Run: "r1", Bench: "openssl", Reps: 5, ClockMHz: 800, Seconds: 1500 * time.Millisecond}
	root := fakeBoard(t, shSpec("openssl", "true", "{seconds}"))
	r := runBoard(t, p, root)
	h := r.hello
	want := frame.HelloBody{
		Arch: h.Arch, Kernel: h.Kernel, Bench: "openssl",
		CPU: "MIPS 24Kc V7.4", BogoMIPS: "452.19", Machine: "MikroTik RouterBOARD 450G",
		CPUInfo:       []string{"system type\t\t: Atheros AR7161 rev 2", "machine\t\t\t: MikroTik RouterBOARD 450G", "cpu model\t\t: MIPS 24Kc V7.4", "BogoMIPS\t\t: 452.19"},
		CPUFreqCurKHz: 680000, CPUFreqMinKHz: 400000, CPUFreqMaxKHz: 800000,
		ClockRequestedMHz: 800, ClockSet: "userspace 680000 kHz",
		MemTotalKB: 61572, Reps: 5,
		Argv:      []string{"/bin/sh", "-c", "true", "sh", "2"},
		GoRuntime: runtime.Version(), SleepProbeUS: h.SleepProbeUS, SleepProbeWantUS: 100000,
	}
	if h.Arch == "" || h.Kernel == "" {
		t.Errorf("hello lacks arch or kernel: %+v", h)
	}
	// This host's runtime sleeps right: never less than asked, and the
	// probe is the runtime's own sleep, not a stand-in.
	if h.SleepProbeUS < 99000 || h.SleepProbeUS > 1000000 {
		t.Errorf("sleep probe: %d µs for 100 ms of the runtime's sleeps", h.SleepProbeUS)
	}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("hello\n got %+v\nwant %+v", h, want)
	}
	// The watch ran with the benchmark: its first and last samples read
	// the clock the board ended up at.
	if s := r.result.Samples; len(s) < 2 || s[0].CurKHz[0] != 680000 || s[len(s)-1].CurKHz[0] != 680000 {
		t.Errorf("watch samples: %+v", s)
	}
	if got := readFake(t, root, 0, "scaling_setspeed"); got != "800000" {
		t.Errorf("scaling_setspeed = %q, want 800000", got)
	}
}
