package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bootbench/bootbench/benchmark"
	"github.com/bootbench/bootbench/contract/bootparam"
	"github.com/bootbench/bootbench/speed"
	"golang.org/x/sys/unix"
)

// bench is the benchmark this boot runs: the built-in suite, or the
// external command the image describes.
type bench struct {
	p     bootparam.Params
	root  string   // where the board's file systems are ("/" on the board)
	argv  []string // nil for the built-in suite
	route bool     // the route benchmark, driven by the host
	dd    bool     // the dd benchmark, built in
}

// loadBench works out what bootbench.bench names. Anything but the
// built-in suite must be the benchmark the image was built with, so an
// image never runs something the host did not ask for.
func loadBench(root string, p bootparam.Params) (*bench, error) {
	if p.Bench == benchmark.Speed {
		return &bench{p: p}, nil
	}
	if p.Bench == benchmark.Route {
		return &bench{p: p, route: true}, nil
	}
	if p.Bench == benchmark.DD {
		return &bench{p: p, root: root, dd: true}, nil
	}
	data, err := os.ReadFile(filepath.Join(root, bootparam.BenchSpecPath))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("benchmark %q is not in this image: it has no %s (built in: speed, dd, route)", p.Bench, bootparam.BenchSpecPath)
	}
	if err != nil {
		return nil, fmt.Errorf("benchmark %q: %v", p.Bench, err)
	}
	spec, err := bootparam.ParseBenchSpec(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", bootparam.BenchSpecPath, err)
	}
	if spec.Name != p.Bench {
		return nil, fmt.Errorf("benchmark %q is not in this image: %s describes %q", p.Bench, bootparam.BenchSpecPath, spec.Name)
	}
	return &bench{p: p, argv: spec.Command(p)}, nil
}

// errTimeout is how a repetition that overran bootbench.timeout ends.
type errTimeout time.Duration

func (e errTimeout) Error() string {
	return fmt.Sprintf("timed out after %gs", time.Duration(e).Seconds())
}

// killWait bounds the wait for the output pipe once the benchmark is gone:
// a process it started that still holds the pipe must not hang the board.
// A variable so tests need not wait as long.
var killWait = 5 * time.Second

// runOnce runs one repetition with its output into w. A non-zero exit is
// the benchmark's own verdict and comes back as the status, to be reported
// in "done"; an error (timed out, crashed, could not start) means there is
// no result to report.
func (b *bench) runOnce(w io.Writer) (int, error) {
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if b.p.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, b.p.Timeout)
	}
	defer cancel()
	if b.dd {
		return b.runDD(ctx, w)
	}
	if b.argv == nil {
		return b.runSpeed(ctx, w)
	}
	return b.runCommand(ctx, w)
}

// runCommand runs the external benchmark. It uses os.StartProcess rather
// than os/exec, which costs the board binary some 75 kB for path search,
// environment handling and pipe plumbing that a fixed absolute command
// does not need.
func (b *bench) runCommand(ctx context.Context, w io.Writer) (int, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("running %s: %v", b.argv[0], err)
	}
	defer pr.Close()
	// One pipe as both stdout and stderr, so what the benchmark prints
	// arrives in the order it printed it.
	files := []*os.File{nil, pw, pw}
	if null, err := os.Open(os.DevNull); err == nil {
		defer null.Close()
		files[0] = null
	}
	proc, err := os.StartProcess(b.argv[0], b.argv, &os.ProcAttr{
		Files: files,
		// Its own process group, so a timeout also kills what a
		// wrapper script started.
		Sys: &syscall.SysProcAttr{Setpgid: true},
	})
	pw.Close()
	if err != nil {
		return 0, fmt.Errorf("cannot run %s: %v", b.argv[0], err)
	}
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(w, pr)
		copied <- err
	}()
	var timedOut atomic.Bool
	stop := context.AfterFunc(ctx, func() {
		timedOut.Store(true)
		syscall.Kill(-proc.Pid, syscall.SIGKILL)
	})
	st, err := proc.Wait()
	stop()
	if err != nil {
		return 0, fmt.Errorf("running %s: %v", b.argv[0], err)
	}
	// Nothing but the benchmark is meant to run: whatever it left behind
	// in its group goes too, and closes the pipe with it. Something that
	// left the group may still hold the pipe, so the wait is bounded.
	syscall.Kill(-proc.Pid, syscall.SIGKILL)
	pr.SetReadDeadline(time.Now().Add(killWait))
	copyErr := <-copied

	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		if timedOut.Load() {
			return 0, errTimeout(b.p.Timeout)
		}
		return 0, signalError(b.argv[0], ws.Signal())
	}
	if copyErr != nil {
		// The output may be cut short, so it cannot be a result.
		return 0, fmt.Errorf("%s exited with status %d, but reading its output failed: %v (a background process holding it?)", b.argv[0], st.ExitCode(), copyErr)
	}
	return st.ExitCode(), nil
}

func signalError(cmd string, sig syscall.Signal) error {
	msg := fmt.Sprintf("%s crashed: killed by signal %s (%v)", cmd, unix.SignalName(sig), sig)
	if sig == syscall.SIGKILL {
		// Nothing on the board sends SIGKILL but the kernel, and on a
		// board with little RAM that means the OOM killer.
		msg += ", out of memory?"
	}
	return errors.New(msg)
}

// runSpeed runs the built-in suite in this process.
func (b *bench) runSpeed(ctx context.Context, w io.Writer) (exit int, err error) {
	defer func() {
		// A panic in the suite is its crash; report it as one instead
		// of taking benchinit down without a word to the host.
		if v := recover(); v != nil {
			exit, err = 0, fmt.Errorf("built-in suite crashed: panic: %v", v)
		}
	}()
	opts := speed.Options{Duration: b.p.Seconds}
	if len(b.p.Algs) > 0 {
		opts.Algorithms = b.p.Algs
	}
	// Bad options: the suite's own message goes into its output, as a
	// command's would to its stderr.
	return b.builtInStatus(ctx, w, speed.Run(ctx, w, opts), "benchinit")
}

// builtInStatus ends a built-in benchmark as a command would end: status
// 0, the run's timeout, or its error as a line of its output (prefixed by
// the name it would print) and status 1.
func (b *bench) builtInStatus(ctx context.Context, w io.Writer, err error, name string) (int, error) {
	switch {
	case err == nil:
		return 0, nil
	case ctx.Err() != nil:
		return 0, errTimeout(b.p.Timeout)
	default:
		fmt.Fprintf(w, "%s: %v\n", name, err)
		return 1, nil
	}
}
