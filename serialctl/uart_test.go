package serialctl

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/bootbench/bootbench/internal/testkit/needs"
)

// uart is a USB serial adapter without hardware: socat joins two ptys, one
// linked at DIR/ttyUSB0 (the host's end, opened like any adapter), the
// other at DIR/board-uart (what the board would write to).
type uart struct {
	t     *testing.T
	dir   string
	cmd   *exec.Cmd
	host  string
	board string
}

func newUART(t *testing.T, dir string) *uart {
	t.Helper()
	needs.Commands(t, "socat")
	u := &uart{t: t, dir: dir, host: filepath.Join(dir, "ttyUSB0"), board: filepath.Join(dir, "board-uart")}
	u.plug()
	t.Cleanup(func() { u.unplug(syscall.SIGKILL) })
	return u
}

// plug starts socat and waits for both links to point at a live pty. The
// board's old link goes first: a link left by a killed socat may point at
// a reused pty that socat has not unlocked yet.
func (u *uart) plug() {
	u.t.Helper()
	os.Remove(u.board)
	u.cmd = exec.Command("socat", "PTY,link="+u.host+",raw,echo=0", "PTY,link="+u.board+",raw,echo=0")
	if err := u.cmd.Start(); err != nil {
		u.t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, e1 := os.Stat(u.host) // Stat follows the link: a dangling one fails
		_, e2 := os.Stat(u.board)
		if e1 == nil && e2 == nil {
			return
		}
		if time.Now().After(deadline) {
			u.t.Fatalf("socat made no ptys at %s: %v %v", u.dir, e1, e2)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// unplug ends socat with sig: SIGTERM lets socat remove its links,
// SIGKILL leaves them, and the host's goes as a USB adapter's device node
// goes when it is unplugged. Left dangling, it pointed at whatever pty the
// kernel gave out next under the freed number: with make test's packages
// running side by side, once a QEMU board's console, which the console
// then reconnected to and read.
func (u *uart) unplug(sig syscall.Signal) {
	if u.cmd == nil {
		return
	}
	u.cmd.Process.Signal(sig)
	u.cmd.Wait()
	u.cmd = nil
	if sig == syscall.SIGKILL {
		os.Remove(u.host)
	}
}

// openBoard opens the board's end of the adapter.
func (u *uart) openBoard() *os.File {
	u.t.Helper()
	f, err := os.OpenFile(u.board, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		u.t.Fatal(err)
	}
	u.t.Cleanup(func() { f.Close() })
	// A UART is raw; socat may not have made its pty raw yet (a cooked
	// one turns "\n" into "\r\n").
	// Through SyscallConn: f.Fd() would make reads blocking, and the
	// tests' read deadlines would not work.
	rc, err := f.SyscallConn()
	if err == nil {
		rc.Control(func(fd uintptr) { _, err = term.MakeRaw(int(fd)) })
	}
	if err != nil {
		u.t.Fatal(err)
	}
	return f
}

// device is the pty the host's link points at now.
func (u *uart) device() string {
	u.t.Helper()
	d, err := filepath.EvalSymlinks(u.host)
	if err != nil {
		u.t.Fatal(err)
	}
	return d
}

// readLines collects n console lines or fails after d.
func readLines(t *testing.T, c *Console, n int, d time.Duration) []Line {
	t.Helper()
	var got []Line
	deadline := time.After(d)
	for len(got) < n {
		select {
		case l, ok := <-c.Lines():
			if !ok {
				t.Fatalf("lines ended after %q (err %v)", texts(got), c.Err())
			}
			got = append(got, l)
		case <-deadline:
			t.Fatalf("got %q in %v, want %d lines", texts(got), d, n)
		}
	}
	return got
}

func texts(ls []Line) []string {
	var s []string
	for _, l := range ls {
		s = append(s, string(l.Text))
	}
	return s
}

// waitQueued waits until n bytes the board wrote wait in the host end's
// input queue: socat carries them across in its own time, and a test that
// needs them there before the console opens must not guess how long.
func (u *uart) waitQueued(n int) {
	u.t.Helper()
	fd, err := unix.Open(u.host, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		u.t.Fatal(err)
	}
	defer unix.Close(fd)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		q, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
		if err != nil {
			u.t.Fatal(err)
		}
		if q >= n {
			return
		}
		if time.Now().After(deadline) {
			u.t.Fatalf("%d of %d bytes reached %s in 5s", q, n, u.host)
		}
	}
}
