package power

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"golang.org/x/sys/unix"
)

// screen is what the operator sees: written by the code under test while
// the test reads it.
type screen struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until the screen shows want.
func (s *screen) waitFor(t *testing.T, want string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(s.String(), want); {
		if time.Now().After(deadline) {
			t.Fatalf("screen %q never showed %q", s.String(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// openPTY makes a pseudo-terminal: the keyboard end (master) and the end a
// program reads as its terminal (slave), in canonical mode as a login
// terminal is.
func openPTY(t *testing.T) (keyboard, term *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	keyboard = os.NewFile(uintptr(fd), "/dev/ptmx")
	term, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { term.Close(); keyboard.Close() })
	return keyboard, term
}

// typeAhead types s and waits until the terminal has it queued (a pty
// passes input on asynchronously).
func typeAhead(t *testing.T, keyboard, term *os.File, s string) {
	t.Helper()
	if s == "" {
		return
	}
	keyboard.WriteString(s)
	conn, err := term.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		queued := 0
		conn.Control(func(fd uintptr) { queued, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) })
		if queued > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("typed input never reached the terminal")
		}
	}
}

type askResult struct {
	confirmed bool
	err       error
}

func askAsync(ctx context.Context, op Operator, msg string) <-chan askResult {
	done := make(chan askResult, 1)
	go func() {
		ok, err := op.Ask(ctx, msg)
		done <- askResult{ok, err}
	}()
	return done
}

func TestTerminalNotATerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	w.WriteString("\n") // input there is, but no operator at a terminal
	var out screen
	op := Terminal(r, &out)
	start := time.Now()
	ok, err := op.Ask(context.Background(), "Set the CPU clock of rb1 to 800 MHz")
	if ok || err != nil {
		t.Fatalf("Ask = %v, %v; want false, nil", ok, err)
	}
	if time.Since(start) > time.Second {
		t.Errorf("Ask waited %s with no terminal", time.Since(start))
	}
	if got := out.String(); got != "Set the CPU clock of rb1 to 800 MHz\n" {
		t.Errorf("screen %q", got)
	}
}

func TestTerminalAsk(t *testing.T) {
	tests := []struct {
		name string
		// before is typed before the question, after once it shows.
		before, after string
		cancel        bool
		want          askResult
	}{
		{"Enter confirms", "", "\n", false, askResult{true, nil}},
		{"Enter typed before the question is no answer", "\n", "\r", false, askResult{true, nil}},
		{"Ctrl-D: nobody confirms", "", "\x04", false, askResult{false, nil}},
		{"Ctrl-C cancels the wait", "", "", true, askResult{false, context.Canceled}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keyboard, term := openPTY(t)
			var out screen
			op := Terminal(term, &out)
			typeAhead(t, keyboard, term, tt.before)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := askAsync(ctx, op, "Power on rb1 now")
			out.waitFor(t, "Power on rb1 now — press Enter when done: ")
			select {
			case got := <-done:
				t.Fatalf("Ask returned %+v before any answer", got)
			case <-time.After(300 * time.Millisecond):
			}
			keyboard.WriteString(tt.after)
			if tt.cancel {
				cancel()
			}
			select {
			case got := <-done:
				if got.confirmed != tt.want.confirmed || !errors.Is(got.err, tt.want.err) {
					t.Errorf("Ask = %+v, want %+v", got, tt.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Ask still waits")
			}
		})
	}
}

func TestManualNoTerminal(t *testing.T) {
	var out screen
	d, err := New("rb1", boards.PowerSpec{Driver: boards.PowerManual}, Terminal(nil, &out))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := d.On(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.Off(ctx); err != nil {
		t.Fatal(err)
	}
	if err := Cycle(ctx, d, time.Hour); err != nil {
		t.Fatal(err)
	}
	want := "Power on rb1 now\nYou may power off rb1 now.\nPower-cycle rb1 now (off, a few seconds, on)\n"
	if out.String() != want {
		t.Errorf("screen %q, want %q", out.String(), want)
	}
}

func TestManualAtATerminal(t *testing.T) {
	keyboard, term := openPTY(t)
	var out screen
	d, err := New("rb1", boards.PowerSpec{Driver: boards.PowerManual}, Terminal(term, &out))
	if err != nil {
		t.Fatal(err)
	}
	on := make(chan error, 1)
	go func() { on <- d.On(context.Background()) }()
	out.waitFor(t, "Power on rb1 now — press Enter")
	select {
	case err := <-on:
		t.Fatalf("On returned %v before the operator pressed Enter", err)
	case <-time.After(200 * time.Millisecond):
	}
	keyboard.WriteString("\n")
	if err := <-on; err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { on <- Cycle(ctx, d, 0) }()
	out.waitFor(t, "Power-cycle rb1 now")
	cancel()
	if err := <-on; !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "rb1") {
		t.Errorf("cancelled Cycle: %v", err)
	}
}
