package power

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Operator is the person at the bench, for drivers (and clock settings)
// that need one.
type Operator interface {
	// Ask shows msg and waits until the operator confirms (Enter on a
	// terminal). confirmed is false when nobody can confirm (no terminal,
	// or its input ended): msg was shown, nothing was waited for.
	Ask(ctx context.Context, msg string) (confirmed bool, err error)
	// Tell shows msg without waiting.
	Tell(msg string)
}

// Terminal is the Operator at a terminal: it asks on out and reads Enter
// from in. When in is nil or not a terminal, Ask shows the message and
// returns (false, nil) at once. Ctrl-C (ctx cancelled) ends a wait with
// ctx.Err().
func Terminal(in *os.File, out io.Writer) Operator {
	return &terminal{in: in, out: out}
}

type terminal struct {
	in  *os.File
	out io.Writer
	mu  sync.Mutex // one message at a time on out
}

func (t *terminal) Tell(msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintln(t.out, msg)
}

func (t *terminal) Ask(ctx context.Context, msg string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	conn, err := t.in.SyscallConn()
	if err != nil || !isTerminal(conn) {
		t.Tell(msg)
		return false, nil
	}
	// An Enter typed before the question is no answer to it.
	_ = conn.Control(func(fd uintptr) { _ = unix.IoctlSetInt(int(fd), unix.TCFLSH, unix.TCIFLUSH) })
	t.mu.Lock()
	fmt.Fprintf(t.out, "%s — press Enter when done: ", msg)
	t.mu.Unlock()
	ok, err := waitEnter(ctx, conn)
	if !ok {
		t.Tell("") // only the operator's Enter ended the prompt's line
	}
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, fmt.Errorf("read the operator's answer from the terminal: %w", err)
	}
	return ok, nil
}

func isTerminal(conn rawConn) bool {
	is := false
	_ = conn.Control(func(fd uintptr) {
		_, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
		is = err == nil
	})
	return is
}

// pollSlice bounds how long a cancelled wait goes unnoticed.
const pollSlice = 100 * time.Millisecond

type rawConn interface{ Control(func(fd uintptr)) error }

// waitEnter reads the terminal until a line ends. It polls in slices rather
// than blocking in read, so that a cancelled ctx ends it and no reader is
// left behind. false, nil means the input ended (Ctrl-D, terminal gone).
func waitEnter(ctx context.Context, conn rawConn) (bool, error) {
	buf := make([]byte, 256)
	for ctx.Err() == nil {
		var n int
		var rerr error
		if err := conn.Control(func(fd uintptr) { n, rerr = readReady(int(fd), buf) }); err != nil {
			return false, err
		}
		switch {
		case rerr == unix.EIO || (n == 0 && rerr == nil):
			return false, nil // the terminal hung up, or input ended
		case rerr == unix.EAGAIN || rerr == unix.EINTR:
			continue
		case rerr != nil:
			return false, rerr
		}
		if bytes.ContainsAny(buf[:n], "\r\n") {
			return true, nil
		}
	}
	return false, ctx.Err()
}

// readReady reads fd if it becomes readable within pollSlice; EAGAIN when
// it did not.
func readReady(fd int, buf []byte) (int, error) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	ready, err := unix.Poll(fds, int(pollSlice/time.Millisecond))
	if err != nil {
		return -1, err
	}
	if ready == 0 {
		return -1, unix.EAGAIN
	}
	return unix.Read(fd, buf)
}
