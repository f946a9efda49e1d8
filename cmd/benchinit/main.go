// Command benchinit runs on the board as the image's uinit, started by u-root's
// init once /proc, /sys and /dev are mounted. It does one thing: report the
// system, run the benchmark, send its output to the host as checksummed frames
// on the console, and power off. Nothing else runs on the board meanwhile.
//
// Its parameters come from the kernel command line, so one image serves every
// run and the host can tell runs apart:
//
//	bootbench.run=<id>        run id echoed in every frame (required)
//	bootbench.bench=speed     benchmark to run (only "speed" is built in)
//	bootbench.seconds=0.5     seconds per algorithm and block size
//	bootbench.algs=md5,sha1   algorithms (default: the suite's defaults)
package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/bootbench/bootbench/internal/bootparam"
	"github.com/bootbench/bootbench/internal/frame"
	"github.com/bootbench/bootbench/speed"
	"golang.org/x/sys/unix"
)

func main() {
	// The console must carry our frames, not kernel chatter that could land
	// in the middle of one: keep only emergency messages.
	_ = os.WriteFile("/proc/sys/kernel/printk", []byte("1 4 1 7"), 0)

	cmdline, _ := os.ReadFile("/proc/cmdline")
	p := bootparam.Parse(string(cmdline))
	out := &frameWriter{w: os.Stdout, run: p.Run}
	code := run(out, p)
	unix.Sync()
	// Power off whatever happened: the host waits for "done" or "fail" and a
	// board left running would only heat the bench. If it returns, init
	// would respawn us; sleep instead and let the host's timeout decide.
	_ = unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	fmt.Fprintf(os.Stderr, "benchinit: power off failed (exit %d)\n", code)
	for {
		time.Sleep(time.Hour)
	}
}

func run(out *frameWriter, p bootparam.Params) int {
	if p.Run == "" {
		out.send(frame.Fail, frame.FailBody{Reason: "no bootbench.run= on the kernel command line"})
		return 2
	}
	out.send(frame.Hello, hello(p))
	if p.Bench != "speed" {
		out.send(frame.Fail, frame.FailBody{Run: p.Run, Reason: fmt.Sprintf("unknown benchmark %q (built in: speed)", p.Bench)})
		return 2
	}
	sum := sha256.New()
	raw := &rawWriter{f: out, sum: sum}
	opts := speed.Options{Duration: p.Seconds}
	if len(p.Algs) > 0 {
		opts.Algorithms = p.Algs
	}
	exit := 0
	if err := speed.Run(context.Background(), raw, opts); err != nil {
		fmt.Fprintf(raw, "benchinit: %v\n", err)
		exit = 1
	}
	raw.flush()
	out.send(frame.Done, frame.DoneBody{Run: p.Run, Chunks: raw.n, SHA256: hex.EncodeToString(sum.Sum(nil)), Exit: exit})
	return exit
}

func hello(p bootparam.Params) frame.HelloBody {
	h := frame.HelloBody{Run: p.Run, Arch: runtime.GOARCH, Bench: p.Bench}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	cpuinfo, _ := os.ReadFile("/proc/cpuinfo")
	h.CPU, h.BogoMIPS = parseCPUInfo(string(cpuinfo))
	return h
}

// parseCPUInfo picks the CPU's name and BogoMIPS out of /proc/cpuinfo, whose
// keys differ by architecture: x86 says "model name", MIPS "cpu model" (and
// "system type" for the SoC), older ARM "Processor", RISC-V "uarch".
func parseCPUInfo(cpuinfo string) (cpu, bogomips string) {
	for _, line := range strings.Split(cpuinfo, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch strings.ToLower(k) {
		case "model name", "cpu model", "processor", "cpu", "uarch":
			// "processor : 0" on x86 is an index, not a name.
			if cpu == "" && v != "" && !isDigits(v) {
				cpu = v
			}
		case "bogomips":
			if bogomips == "" {
				bogomips = v
			}
		}
	}
	return cpu, bogomips
}

func isDigits(s string) bool {
	return strings.Trim(s, "0123456789") == ""
}

// frameWriter sends frames on the console, one whole line per write so that
// a line is never split by another writer.
type frameWriter struct {
	w   *os.File
	run string
	seq int
}

func (f *frameWriter) send(typ string, body any) {
	line, err := frame.Encode(f.seq, typ, body)
	if err != nil {
		line, _ = frame.Encode(f.seq, frame.Fail, frame.FailBody{Run: f.run, Reason: err.Error()})
	}
	f.seq++
	_, _ = f.w.Write([]byte(line + "\n"))
}

// rawWriter cuts the benchmark's output into raw frames as it is produced,
// so the host sees progress and a board that dies midway still leaves what
// it printed in the transcript.
type rawWriter struct {
	f   *frameWriter
	sum interface{ Write([]byte) (int, error) }
	buf []byte
	n   int
}

// chunk keeps a raw frame well under a line a console tool shows whole.
const chunk = 384

func (r *rawWriter) Write(p []byte) (int, error) {
	r.sum.Write(p)
	r.buf = append(r.buf, p...)
	// Flush at line ends so progress is seen promptly, and at chunk size.
	for len(r.buf) >= chunk {
		r.emit(r.buf[:chunk])
		r.buf = r.buf[chunk:]
	}
	if i := strings.LastIndexByte(string(r.buf), '\n'); i >= 0 {
		r.emit(r.buf[:i+1])
		r.buf = r.buf[i+1:]
	}
	return len(p), nil
}

func (r *rawWriter) flush() {
	if len(r.buf) > 0 {
		r.emit(r.buf)
		r.buf = nil
	}
}

func (r *rawWriter) emit(b []byte) {
	r.f.send(frame.Raw, frame.RawBody{Run: r.f.run, N: r.n, Data: base64.StdEncoding.EncodeToString(b)})
	r.n++
}
