package serialctl

import (
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// timeoutReader behaves like a serial port with a read timeout: it returns
// (0, nil) when nothing arrives.
type timeoutReader struct {
	data   chan string
	closed chan struct{}
}

func (r *timeoutReader) Read(p []byte) (int, error) {
	select {
	case s, ok := <-r.data:
		if !ok {
			return 0, io.EOF
		}
		return copy(p, s), nil
	case <-r.closed:
		return 0, os.ErrClosed
	case <-time.After(20 * time.Millisecond):
		return 0, nil
	}
}

func (r *timeoutReader) Close() error { close(r.closed); return nil }

func TestConsoleLinesAndTranscript(t *testing.T) {
	r := &timeoutReader{data: make(chan string), closed: make(chan struct{})}
	c := New(r)
	chunks := []string{"iPXE init", "ializing\r\n", "tftp://198.18.0.1/x ok\r\n\r\nno newline"}
	go func() {
		for _, s := range chunks {
			r.data <- s
			time.Sleep(30 * time.Millisecond) // let timeouts happen between chunks
		}
		close(r.data)
	}()
	var got []string
	for l := range c.Lines() {
		got = append(got, string(l.Text))
	}
	want := []string{"iPXE initializing", "tftp://198.18.0.1/x ok", "", "no newline"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q, want %q", got, want)
	}
	if tr := string(c.Transcript()); tr != strings.Join(chunks, "") {
		t.Errorf("transcript %q is not byte-exact", tr)
	}
	c.Close()
}

func TestConsoleCloseWhileIdle(t *testing.T) {
	r := &timeoutReader{data: make(chan string), closed: make(chan struct{})}
	c := New(r)
	done := make(chan struct{})
	go func() { c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Close hung on a port that sends nothing")
	}
}

// TestOpenPTY reads through go.bug.st/serial from a pseudo-terminal, the way
// QEMU's -serial pty is read.
func TestOpenPTY(t *testing.T) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	defer master.Close()
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Open("/dev/pts/"+itoa(n), 115200)
	if err != nil {
		t.Fatal(err)
	}
	master.WriteString("@BB1 hello\r\nsecond line\r\n")
	deadline := time.After(3 * time.Second)
	var got []string
	for len(got) < 2 {
		select {
		case l := <-c.Lines():
			got = append(got, string(l.Text))
		case <-deadline:
			t.Fatalf("got %q before the deadline", got)
		}
	}
	if got[0] != "@BB1 hello" || got[1] != "second line" {
		t.Errorf("lines %q", got)
	}
	start := time.Now()
	c.Close()
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v", d)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
