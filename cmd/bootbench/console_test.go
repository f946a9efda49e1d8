package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/needs"
	"github.com/bootbench/bootbench/internal/testkit/userenv"

	"github.com/bootbench/bootbench/internal/testkit/syncbuf"
	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// The console tests run `bootbench console` against a USB serial adapter
// without hardware: a socat pty pair, one end linked where the inventory's
// console is, the other where the board would write.

type adapter struct {
	host, board string // the links
	socat       *exec.Cmd
}

func plugAdapter(t *testing.T) *adapter {
	t.Helper()
	needs.Commands(t, "socat")
	dir := t.TempDir()
	a := &adapter{host: filepath.Join(dir, "ttyUSB0"), board: filepath.Join(dir, "board-uart")}
	a.socat = exec.Command("socat", "PTY,link="+a.host+",raw,echo=0", "PTY,link="+a.board+",raw,echo=0")
	if err := a.socat.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.socat.Process.Kill(); a.socat.Wait() })
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, e1 := os.Stat(a.host)
		_, e2 := os.Stat(a.board)
		if e1 == nil && e2 == nil {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("socat made no ptys: %v %v", e1, e2)
		}
	}
}

func (a *adapter) device(t *testing.T) string {
	d, err := filepath.EvalSymlinks(a.host)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (a *adapter) openBoard(t *testing.T) *os.File {
	f, err := os.OpenFile(a.board, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	// A UART is raw; socat may not have made its pty raw yet (a cooked
	// one turns "\n" into "\r\n").
	// Through SyscallConn: f.Fd() would make reads blocking, and the
	// tests' read deadlines would not work.
	rc, err := f.SyscallConn()
	if err == nil {
		rc.Control(func(fd uintptr) { _, err = term.MakeRaw(int(fd)) })
	}
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// oneBoardInventory writes a bench.yaml with board pc1 on console.
func oneBoardInventory(t *testing.T, console string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bench.yaml")
	inv := fmt.Sprintf(`bench:
  interface: bench0
  address: 198.18.5.1/24
boards:
  pc1:
    profile: pc-x86_64
    mac: "52:54:00:bb:05:20"
    address: 198.18.5.20
    console: %s
    power: {driver: command, on: "true", off: "true"}
`, console)
	if err := os.WriteFile(p, []byte(inv), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// lockedBuffer is what a test reads while something writes it.
type lockedBuffer = syncbuf.Buffer

// consoleProc is a `bootbench console` running in the background.
type consoleProc struct {
	cmd            *exec.Cmd
	stdin          io.WriteCloser
	stdout, stderr *lockedBuffer
	done           chan struct{}
}

func startConsole(t *testing.T, args ...string) *consoleProc {
	t.Helper()
	p := &consoleProc{cmd: userenv.Command(nil, bootbenchBin, append([]string{"console"}, args...)...),
		stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.cmd.Process.Kill(); <-p.done })
	return p
}

// waitStarted waits for the message that says the console is open.
func (p *consoleProc) waitStarted(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(p.stderr.String(), "bootbench: console of "); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("console did not start: stderr %q", p.stderr.String())
		}
	}
}

// waitOutput waits until stdout holds want.
func (p *consoleProc) waitOutput(t *testing.T, want string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(p.stdout.String(), want); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("console showed %q, not %q (stderr %q)", p.stdout.String(), want, p.stderr.String())
		}
	}
}

// exit waits for the process to end and returns its status.
func (p *consoleProc) exit(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(within):
		t.Fatalf("console still running after %v (stderr %q)", within, p.stderr.String())
		return -1
	}
}

func TestConsoleShowsBoardAndLocksPort(t *testing.T) {
	a := plugAdapter(t)
	inv := oneBoardInventory(t, a.host)
	dev := a.device(t)
	board := a.openBoard(t)

	first := startConsole(t, "pc1", "--inventory", inv)
	first.waitStarted(t) // what the board sends before then is dropped
	// The prompt has no newline: it must show all the same.
	board.WriteString("U-Boot 2023.01\r\n=> ")
	first.waitOutput(t, "U-Boot 2023.01\r\n=> ")
	if !strings.Contains(first.stderr.String(), "read-only; Ctrl-C ends it") {
		t.Errorf("start message %q does not say how to end it", first.stderr.String())
	}
	lockFile := "/run/lock/LCK.." + strings.ReplaceAll(strings.TrimPrefix(dev, "/dev/"), "/", "_")
	if b, err := os.ReadFile(lockFile); err != nil || string(b) != fmt.Sprintf("%10d\n", first.cmd.Process.Pid) {
		t.Errorf("lock file %s holds %q, %v; want the console's pid", lockFile, b, err)
	}

	start := time.Now()
	second := startConsole(t, "pc1", "--inventory", inv)
	code := second.exit(t, 5*time.Second)
	want := fmt.Sprintf("bootbench: console %s is in use by pid %d (bootbench console pc1 --inventory %s)\n", dev, first.cmd.Process.Pid, inv)
	// A console bootbench cannot have is a setup failure: exit 2, as
	// for run.
	if code != 2 || second.stderr.String() != want {
		t.Errorf("second console: exit %d, stderr %q; want 2, %q", code, second.stderr.String(), want)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a busy console took %v to refuse", d)
	}

	board.WriteString("still there\r\n")
	first.waitOutput(t, "=> still there\r\n")
	first.cmd.Process.Signal(syscall.SIGINT)
	if code := first.exit(t, 3*time.Second); code != 0 {
		t.Errorf("console ended by SIGINT: exit %d, want 0 (stderr %q)", code, first.stderr.String())
	}
	if _, err := os.Stat(lockFile); err == nil {
		t.Errorf("lock file %s left behind", lockFile)
	}
}

func TestConsoleWrite(t *testing.T) {
	a := plugAdapter(t)
	inv := oneBoardInventory(t, a.host)
	board := a.openBoard(t)

	p := startConsole(t, "pc1", "--inventory", inv, "--write")
	p.waitStarted(t)
	if !strings.Contains(p.stderr.String(), "Ctrl-] quits") {
		t.Errorf("start message %q does not say how to quit", p.stderr.String())
	}
	// Ctrl-C must reach the board (it stops U-Boot's autoboot); Ctrl-] quits
	// and what follows it is not sent.
	p.stdin.Write([]byte("\x03printenv\r"))
	got := make([]byte, 10)
	board.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(board, got); err != nil || string(got) != "\x03printenv\r" {
		t.Fatalf("the board got %q, %v", got, err)
	}
	board.WriteString("=> ")
	p.waitOutput(t, "=> ")
	p.stdin.Write([]byte("\x1dreboot\r"))
	if code := p.exit(t, 3*time.Second); code != 0 {
		t.Errorf("Ctrl-]: exit %d, want 0 (stderr %q)", code, p.stderr.String())
	}
	board.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, _ := board.Read(got); n > 0 {
		t.Errorf("sent after Ctrl-]: %q", got[:n])
	}
}

func TestConsoleErrors(t *testing.T) {
	a := plugAdapter(t)
	good := oneBoardInventory(t, a.host)
	gone := filepath.Join(t.TempDir(), "ttyUSB9")
	missing := oneBoardInventory(t, gone)
	broken := filepath.Join(t.TempDir(), "bench.yaml")
	os.WriteFile(broken, []byte("bench:\n  interface: bench0\nboards:\n  pc1: {profile: nosuch}\n"), 0o644)

	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"no board", nil, 2, "name one board"},
		{"two boards", []string{"pc1", "pc2", "--inventory", good}, 2, "name one board"},
		{"virtual board", []string{"qemu-x86_64"}, 2, "qemu-x86_64 is a virtual board: its console is QEMU's and exists only during a run"},
		{"unknown board", []string{"pc9", "--inventory", good}, 2, `unknown board "pc9"`},
		{"broken inventory", []string{"pc1", "--inventory", broken}, 2, "bench.yaml:"},
		{"port not there", []string{"pc1", "--inventory", missing}, 2, "no console " + gone + ": present: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := userenv.Command([]string{"BOOTBENCH_INVENTORY="}, bootbenchBin, append([]string{"console"}, tt.args...)...)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != tt.code || !strings.Contains(errb.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errb.String(), tt.code, tt.want)
			}
			if tt.name != "broken inventory" && strings.Count(strings.TrimSpace(errb.String()), "\n") > 0 {
				t.Errorf("error is not one line: %q", errb.String())
			}
		})
	}
}

// TestConsolePermission opens the console as a user who may not: the
// error says how to get the permission.
func TestConsolePermission(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run bootbench as another user")
	}
	a := plugAdapter(t)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	os.Chmod(filepath.Dir(dir), 0o755) // t.TempDir's parent is private too
	bin := filepath.Join(dir, "bootbench")
	b, err := os.ReadFile(bootbenchBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(dir, "bench.yaml")
	src, _ := os.ReadFile(oneBoardInventory(t, a.host))
	os.WriteFile(inv, src, 0o644)

	cmd := exec.Command(bin, "console", "pc1", "--inventory", inv)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err = cmd.Run()
	code := -1
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	want := fmt.Sprintf("bootbench: open console %s: permission denied (add the user to the dialout group: usermod -aG dialout nobody, then log in again)\n", a.device(t))
	if code != 2 || errb.String() != want {
		t.Errorf("exit %d (%v), stderr %q; want 2, %q", code, err, errb.String(), want)
	}
}
