// Command benchinit runs on the board as the image's uinit, started by u-root's
// init once /proc, /sys and /dev are mounted (it mounts them itself when it is
// the kernel's init instead). It does one thing: set the clock, report the
// system, run the benchmark, send its output to the host as checksummed frames
// on the console, and power off. Nothing else runs on the board meanwhile.
//
// Its parameters come from the kernel command line, so one image serves every
// run and the host can tell runs apart:
//
//	bootbench.run=<id>        run id echoed in every frame (required)
//	bootbench.bench=speed     benchmark: "speed" is built in; any other name
//	                          must be the one /etc/bootbench/bench.json describes
//	bootbench.seconds=0.5     seconds per algorithm and block size ({seconds}
//	                          in an external benchmark's argv, whole, at least 1)
//	bootbench.algs=md5,sha1   algorithms (default: the suite's defaults)
//	bootbench.reps=5          repetitions in this boot (default 1)
//	bootbench.clock=800       CPU clock in MHz, set through cpufreq (default:
//	                          leave it alone)
//	bootbench.timeout=600     seconds one repetition may take (default: no limit)
//	bootbench.ports=MAC@IP/N,MAC@IP/N
//	                          the route benchmark's two ports (bench "route")
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/bootbench/bootbench/contract/bootparam"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/contract/openwrtwiki"
	"golang.org/x/sys/unix"
)

func main() {
	const root = "/"
	mountErr := mountBasics(root)
	_ = quietConsole(root)

	cmdline, _ := os.ReadFile(filepath.Join(root, "proc/cmdline"))
	p := bootparam.Parse(string(cmdline))
	console := openConsole()
	out := frame.NewWriter(console, p.Run)
	code := 2
	if mountErr != nil && p.Run == "" {
		// Without /proc there is no command line, and "no run id" would
		// send the person debugging this the wrong way.
		out.Fail("benchinit: " + mountErr.Error())
	} else {
		if mountErr != nil {
			// Into the transcript: the run may still work without
			// what failed to mount.
			fmt.Fprintf(os.Stderr, "benchinit: %v\n", mountErr)
		}
		code = run(out, p, root)
	}
	// The frames written last may still sit in the kernel's tty buffer,
	// not yet sent by the UART: powering off now would lose the "done" the
	// host waits for. tcdrain waits until the UART has sent everything.
	_ = unix.IoctlSetInt(int(console.Fd()), unix.TCSBRK, 1)
	unix.Sync()
	// Power off whatever happened: the host waits for "done" or "fail" and a
	// board left running would only heat the bench. If it returns, init
	// would respawn us (or, were we init, the kernel would panic); sleep
	// instead and let the host's timeout decide.
	_ = unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	fmt.Fprintf(os.Stderr, "benchinit: power off failed (exit %d)\n", code)
	for {
		time.Sleep(time.Hour)
	}
}

// openConsole opens the kernel's console for the frames. Our stdout may be
// a pipe that u-root's init copies to every console: what is still in that
// pipe when we power off never reaches the host. Written to the console
// device, a frame is in the UART's hands, and tcdrain can wait for it.
func openConsole() *os.File {
	f, err := os.OpenFile("/dev/console", os.O_WRONLY|unix.O_NOCTTY, 0)
	if err != nil {
		return os.Stdout
	}
	return f
}

// run does the board's work, reading the system below root, and returns
// an exit status for the record.
func run(out *frame.Writer, p bootparam.Params, root string) int {
	if p.Run == "" {
		out.Fail("no bootbench.run= on the kernel command line")
		return 2
	}
	b, benchErr := loadBench(root, p)
	var commands *os.File
	if b != nil && b.route {
		// Before hello: the host answers hello with its first command,
		// and a console nobody has open for reading drops what it gets.
		commands, benchErr = openCommands()
		if commands != nil {
			defer commands.Close()
		}
	}
	out.Send(frame.Hello, hello(root, p, b))
	if benchErr != nil {
		out.Fail(benchErr.Error())
		return 2
	}
	w := startWatch(out, root, watchEvery, time.Now)
	if b.route {
		return routeBoot(out, p, root, commands, w)
	}
	exit, reps, err := runReps(out, p, b)
	// The watch's last frames go before the verdict: the host stops
	// reading at done or fail.
	w.Stop()
	if err != nil {
		// What was printed is in the raw frames already, for the
		// record; without "done" the host stores no result.
		out.Flush()
		out.Fail(err.Error())
		return 1
	}
	out.Done(exit, reps)
	return exit
}

// runReps runs the benchmark's repetitions with their output into out,
// and returns the last exit status and how many ran; an error means a
// repetition has no result to report.
func runReps(out *frame.Writer, p bootparam.Params, b *bench) (exit, reps int, err error) {
	for k := 1; k <= p.Reps; k++ {
		if p.Reps > 1 {
			// The host splits the stream on these; with one repetition
			// the stream is the benchmark's output and nothing else.
			fmt.Fprintf(out, "--- bootbench rep %d of %d ---\n", k, p.Reps)
		}
		exit, err = b.runOnce(out)
		if err != nil && p.Reps > 1 {
			return 0, reps, fmt.Errorf("rep %d of %d: %w", k, p.Reps, err)
		}
		if err != nil {
			return 0, reps, err
		}
		reps = k
		if exit != 0 {
			// A benchmark that failed once will fail again: stop, so a
			// slow board is not kept busy for nothing.
			break
		}
	}
	return exit, reps, nil
}

// routeBoot runs the route benchmark, driven by the host over the console.
func routeBoot(out *frame.Writer, p bootparam.Params, root string, commands io.Reader, w *watch) int {
	err := runRoute(out, p, root, commands)
	w.Stop()
	if err != nil {
		out.Flush()
		out.Fail(err.Error())
		return 1
	}
	out.Done(0, 1)
	return 0
}

// hello sets the requested clock, then reports the system as the
// benchmark will find it.
func hello(root string, p bootparam.Params, b *bench) frame.HelloBody {
	h := frame.HelloBody{Arch: runtime.GOARCH, Bench: p.Bench, Reps: p.Reps, ClockRequestedMHz: p.ClockMHz}
	if b != nil {
		h.Argv = b.argv
	}
	if p.ClockMHz > 0 {
		// A cpufreq driver may be a module the image carries (a
		// Raspberry Pi's, in Debian's arm64 kernel): load them first.
		if err := loadModules(filepath.Join(root, RouteModulesDir)); err != nil {
			h.ClockSet = err.Error()
		} else {
			h.ClockSet = setClock(root, p.ClockMHz)
		}
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	cpuinfo, _ := os.ReadFile(filepath.Join(root, "proc/cpuinfo"))
	c := parseCPUInfo(string(cpuinfo))
	h.CPU, h.Machine, h.BogoMIPS = c.model, c.machine, c.bogoMIPS
	h.CPUInfo = openwrtwiki.CPUInfoLines(string(cpuinfo))
	f := readCPUFreq(root)
	h.CPUFreqCurKHz, h.CPUFreqMinKHz, h.CPUFreqMaxKHz = f.curKHz, f.minKHz, f.maxKHz
	meminfo, _ := os.ReadFile(filepath.Join(root, "proc/meminfo"))
	h.MemTotalKB = memTotalKB(string(meminfo))
	h.GoRuntime, h.SleepProbeUS, h.SleepProbeWantUS = goRuntime(), sleepProbe(), probeSleeps*probeSleepUS
	h.ClockEvent, h.ClockSource = readTimers(root)
	return h
}
