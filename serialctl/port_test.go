package serialctl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/syncbuf"
)

func TestOpenPortReadsWritesAndFlushes(t *testing.T) {
	dir := t.TempDir()
	u := newUART(t, dir)
	board := u.openBoard()
	// What the board sent before the console was opened belongs to no run.
	board.WriteString("stale boot noise\r\n")
	u.waitQueued(len("stale boot noise\r\n"))

	tee := &syncBuffer{}
	c, err := OpenPort(context.Background(), u.host, 115200, PortOptions{LockDir: dir, Tee: tee})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	board.WriteString("U-Boot 2023.01\r\n=> ")
	deadline := time.Now().Add(3 * time.Second)
	for tee.String() != "U-Boot 2023.01\r\n=> " && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := tee.String(); got != "U-Boot 2023.01\r\n=> " {
		t.Errorf("Tee got %q; it must have the prompt before its line ends (and no stale input)", got)
	}
	board.WriteString("\r\n")
	got := texts(readLines(t, c, 2, 3*time.Second))
	if want := []string{"U-Boot 2023.01", "=> "}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q, want %q (stale input must be dropped on open)", got, want)
	}

	if n, err := c.Write([]byte("dhcp\r")); n != 5 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	buf := make([]byte, 5)
	board.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.ReadFull(board, buf); err != nil || string(buf) != "dhcp\r" {
		t.Errorf("the board read %q, %v; want %q", buf, err, "dhcp\r")
	}
}

func TestOpenPortLocks(t *testing.T) {
	dir := t.TempDir()
	u := newUART(t, dir)
	// A second name for the same adapter, as /dev/serial/by-id/ gives.
	byID := filepath.Join(dir, "usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0")
	if err := os.Symlink(u.host, byID); err != nil {
		t.Fatal(err)
	}
	dev := u.device()
	lockFile := filepath.Join(dir, "LCK.."+strings.ReplaceAll(strings.TrimPrefix(dev, "/dev/"), "/", "_"))

	c, err := OpenPort(context.Background(), u.host, 115200, PortOptions{LockDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(lockFile)
	if want := fmt.Sprintf("%10d\n", os.Getpid()); err != nil || string(b) != want {
		t.Errorf("lock file %s holds %q, %v; want %q", lockFile, b, err, want)
	}
	for _, spec := range []string{u.host, byID, dev} {
		start := time.Now()
		_, err := OpenPort(context.Background(), spec, 115200, PortOptions{LockDir: dir})
		var be *BusyError
		if !errors.As(err, &be) || !errors.Is(err, ErrBusy) {
			t.Fatalf("second open of %s: %v, want a BusyError", spec, err)
		}
		if be.PID != os.Getpid() || !strings.Contains(be.Command, filepath.Base(os.Args[0])) {
			t.Errorf("busy error names pid %d (%s), want %d (%s)", be.PID, be.Command, os.Getpid(), os.Args[0])
		}
		if want := fmt.Sprintf("console %s is in use by pid %d (", dev, os.Getpid()); !strings.HasPrefix(err.Error(), want) {
			t.Errorf("error %q, want it to start %q", err, want)
		}
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("a busy port took %v to refuse", d)
		}
	}
	c.Close()
	if _, err := os.Stat(lockFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file left after Close: %v", err)
	}
	c, err = OpenPort(context.Background(), byID, 115200, PortOptions{LockDir: dir})
	if err != nil {
		t.Fatalf("open after Close: %v", err)
	}
	c.Close()
}

// TestOpenPortOtherHolders: the locks other programs take are honoured, and
// a dead program's lock file is not.
func TestOpenPortOtherHolders(t *testing.T) {
	dir := t.TempDir()
	u := newUART(t, dir)
	dev := u.device()
	lockFile := filepath.Join(dir, "LCK.."+strings.ReplaceAll(strings.TrimPrefix(dev, "/dev/"), "/", "_"))

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		setup    func(t *testing.T) // takes the port the way another program does
		wantBusy string             // "" when the open must succeed
	}{
		{name: "stale lock file of a dead process", setup: func(t *testing.T) {
			writeLock(t, lockFile, dead.Process.Pid)
		}},
		{name: "garbage lock file left long ago", setup: func(t *testing.T) {
			os.WriteFile(lockFile, []byte("junk"), 0o644)
			old := time.Now().Add(-time.Hour)
			os.Chtimes(lockFile, old, old)
		}},
		{name: "lock file of a live process (minicom, cu)", setup: func(t *testing.T) {
			p := startHolder(t, "", "sleep", "30")
			writeLock(t, lockFile, p)
		}, wantBusy: "(sleep 30)"},
		{name: "flock on the device (picocom)", setup: func(t *testing.T) {
			startHolder(t, "locked", "flock", dev, "-c", "echo locked; exec sleep 30")
		}, wantBusy: "(flock " + dev + " -c echo locked; exec sleep 30)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(lockFile)
			tt.setup(t)
			c, err := OpenPort(context.Background(), u.host, 115200, PortOptions{LockDir: dir})
			if tt.wantBusy == "" {
				if err != nil {
					t.Fatal(err)
				}
				if pid, _ := readLockFile(lockFile); pid != os.Getpid() {
					t.Errorf("the stale lock was not replaced: it names pid %d", pid)
				}
				c.Close()
				return
			}
			if err == nil {
				c.Close()
				t.Fatal("opened a port another program holds")
			}
			if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), tt.wantBusy) {
				t.Errorf("error %q, want ErrBusy naming %q", err, tt.wantBusy)
			}
		})
	}
}

// syncBuffer is what a test reads while something writes it.
type syncBuffer = syncbuf.Buffer

func writeLock(t *testing.T, path string, pid int) {
	t.Helper()
	if err := os.WriteFile(path, fmt.Appendf(nil, "%10d\n", pid), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startHolder starts a program that holds the port until the test ends;
// with ready set, it waits for that line on the program's stdout.
func startHolder(t *testing.T, ready string, name string, args ...string) int {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // flock's child holds the lock too
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	if ready != "" {
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || strings.TrimSpace(line) != ready {
			t.Fatalf("%s said %q, %v", name, line, err)
		}
	}
	// Until its exec is done the holder is still a copy of this test; the
	// kernel shows the new program (/proc/PID/exe) a moment before its
	// command line (/proc/PID/cmdline is empty in between).
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", cmd.Process.Pid))
		args, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cmd.Process.Pid))
		if filepath.Base(exe) == filepath.Base(name) && len(args) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) did not start: its program is %q, its arguments %q", name, cmd.Process.Pid, exe, args)
		}
	}
	return cmd.Process.Pid
}

func TestOpenPortErrors(t *testing.T) {
	dir := t.TempDir()
	dangling := filepath.Join(dir, "gone")
	os.Symlink("/dev/pts/9999", dangling)
	tests := []struct {
		spec    string
		is      error
		mention []string
	}{
		{filepath.Join(dir, "ttyUSB7"), ErrNoPort, []string{"no console " + filepath.Join(dir, "ttyUSB7"), "present"}},
		{dangling, ErrNoPort, []string{"no console " + dangling}},
		{"usb:0403:6001:NOSUCH", ErrNoPort, []string{"no console usb:0403:6001:NOSUCH"}},
	}
	for _, tt := range tests {
		_, err := OpenPort(context.Background(), tt.spec, 115200, PortOptions{LockDir: dir})
		if !errors.Is(err, tt.is) {
			t.Errorf("OpenPort(%s): %v, want %v", tt.spec, err, tt.is)
			continue
		}
		for _, m := range tt.mention {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("OpenPort(%s): %q does not mention %q", tt.spec, err, m)
			}
		}
	}
}

// TestReconnect unplugs the adapter mid-stream and plugs it back: the
// lines after the gap arrive and the transcript marks the gap, whether the
// console was opened by OpenPort or is a Device read by New.
func TestReconnect(t *testing.T) {
	opens := []struct {
		name string
		open func(spec, lockDir string) (*Console, error)
	}{
		{"OpenPort", func(spec, lockDir string) (*Console, error) {
			return OpenPort(context.Background(), spec, 115200, PortOptions{LockDir: lockDir})
		}},
		{"New(OpenDevice)", func(spec, lockDir string) (*Console, error) {
			d, err := OpenDevice(spec, 115200, lockDir)
			if err != nil {
				return nil, err
			}
			return New(d), nil
		}},
	}
	for _, o := range opens {
		for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
			t.Run(o.name+"/"+sig.String(), func(t *testing.T) { testReconnect(t, o.open, sig) })
		}
	}
}

func testReconnect(t *testing.T, open func(spec, lockDir string) (*Console, error), sig syscall.Signal) {
	dir := t.TempDir()
	u := newUART(t, dir)
	board := u.openBoard()
	c, err := open(u.host, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	board.WriteString("Linux version 6.1.0\r\nhalf a li")
	readLines(t, c, 1, 3*time.Second)
	// The half line is read, not yet a line.
	seen, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	_, err = c.Expect(seen, 0, "half a li")
	cancel()
	if err != nil {
		t.Fatalf("the half line never arrived: %v", err)
	}

	u.unplug(sig)
	board.Close()
	lost := readLines(t, c, 2, 3*time.Second)
	if lost[0].Note || string(lost[0].Text) != "half a li" || !lost[0].Cut || !lost[1].Note || !lost[1].Lost || lost[1].Back ||
		!strings.HasPrefix(string(lost[1].Text), "[bootbench: console "+u.host) ||
		!strings.HasSuffix(string(lost[1].Text), " lost: hung up]") {
		t.Fatalf("after unplugging: %q", texts(lost))
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, ErrNoPort) {
		t.Errorf("Write while lost: %v, want ErrNoPort", err)
	}

	time.Sleep(time.Second)
	u.plug()
	board = u.openBoard()
	back := readLines(t, c, 1, 3*time.Second)
	if !back[0].Note || !back[0].Back || back[0].Lost || !strings.Contains(string(back[0].Text), " back after ") {
		t.Fatalf("after plugging back: %q", texts(back))
	}
	board.WriteString("after the gap\r\n")
	after := readLines(t, c, 1, 3*time.Second)
	if string(after[0].Text) != "after the gap" {
		t.Errorf("after the gap: %q", texts(after))
	}
	if _, err := c.Write([]byte("ok")); err != nil {
		t.Errorf("Write after reconnecting: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "LCK.."+strings.ReplaceAll(strings.TrimPrefix(u.device(), "/dev/"), "/", "_"))); err != nil {
		t.Errorf("no lock after reconnecting: %v", err)
	}

	tr := string(c.Transcript())
	i := strings.Index(tr, "half a li\n[bootbench: console ")
	j := strings.Index(tr, " back after ")
	if i < 0 || j < i || !strings.HasSuffix(tr, "s]\nafter the gap\r\n") {
		t.Errorf("transcript does not mark the gap: %q", tr)
	}
	if c.Err() != nil {
		t.Errorf("Err = %v", c.Err())
	}
}

// TestCloseWhileLost: Close stops looking for a lost adapter at once and
// leaves no lock behind.
func TestCloseWhileLost(t *testing.T) {
	dir := t.TempDir()
	u := newUART(t, dir)
	c, err := OpenPort(context.Background(), u.host, 115200, PortOptions{LockDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	u.unplug(syscall.SIGKILL)
	readLines(t, c, 1, 3*time.Second) // the "lost" note
	start := time.Now()
	c.Close()
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("Close took %v while the console was lost", d)
	}
	if _, ok := <-c.Lines(); ok {
		t.Error("lines still open after Close")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "LCK..*")); len(m) > 0 {
		t.Errorf("lock files left: %v", m)
	}
}

// TestOpenPortContext: the console stops when its context ends.
func TestOpenPortContext(t *testing.T) {
	dir := t.TempDir()
	u := newUART(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	c, err := OpenPort(ctx, u.host, 115200, PortOptions{LockDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cancel()
	select {
	case _, ok := <-c.Lines():
		if ok {
			t.Error("a line arrived from a silent port")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the console kept reading after its context ended")
	}
	// Close, racing the context's own shutdown, returns only once the port
	// is released.
	c.Close()
	if m, _ := filepath.Glob(filepath.Join(dir, "LCK..*")); len(m) > 0 {
		t.Errorf("lock files left after Close: %v", m)
	}
	if _, err := OpenPort(ctx, u.host, 115200, PortOptions{LockDir: dir}); !errors.Is(err, context.Canceled) {
		t.Errorf("OpenPort with an ended context: %v", err)
	}
}

// TestPortNotInherited: a process started while the console is open (a
// power command, QEMU) gets none of its descriptors: none of its open files
// is the console's device. (Comparing its whole descriptor table with one
// started before races with what the child opens as it starts: sleep reads
// the locale's files.)
func TestPortNotInherited(t *testing.T) {
	dir := t.TempDir()
	u := newUART(t, dir)
	device, err := filepath.EvalSymlinks(u.host)
	if err != nil {
		t.Fatal(err)
	}
	c, err := OpenPort(context.Background(), u.host, 115200, PortOptions{LockDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		// Until exec is done the child still has Go's own descriptors.
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", cmd.Process.Pid)); strings.HasSuffix(exe, "/sleep") || time.Now().After(deadline) {
			break
		}
	}
	fdDir := fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid)
	fds, err := os.ReadDir(fdDir)
	if err != nil || len(fds) == 0 {
		t.Fatalf("the child's descriptors: %v", err)
	}
	for _, fd := range fds {
		if target, _ := os.Readlink(filepath.Join(fdDir, fd.Name())); target == device {
			t.Errorf("a child started with the console open has %s as descriptor %s", device, fd.Name())
		}
	}
}

// TestSweepLock: the lock file of a process that is gone is removed and
// named; a live one's, and ours, are left.
func TestSweepLock(t *testing.T) {
	dir := t.TempDir()
	u := newUART(t, dir)
	lockFile := filepath.Join(dir, "LCK.."+strings.ReplaceAll(strings.TrimPrefix(u.device(), "/dev/"), "/", "_"))
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	writeLock(t, lockFile, dead.Process.Pid)
	if got, want := SweepLock(u.host, dir), fmt.Sprintf("%s of pid %d, which is gone", lockFile, dead.Process.Pid); got != want {
		t.Errorf("SweepLock = %q, want %q", got, want)
	}
	if _, err := os.Stat(lockFile); err == nil {
		t.Error("the dead process's lock is still there")
	}
	for _, pid := range []int{startHolder(t, "", "sleep", "30"), os.Getpid()} {
		writeLock(t, lockFile, pid)
		if got := SweepLock(u.host, dir); got != "" {
			t.Errorf("SweepLock of pid %d's lock = %q, want it left", pid, got)
		}
		if _, err := os.Stat(lockFile); err != nil {
			t.Errorf("pid %d's lock was removed", pid)
		}
	}
	if got := SweepLock(filepath.Join(dir, "nothing"), dir); got != "" {
		t.Errorf("SweepLock of a port that is not there = %q", got)
	}
}
