// Package serialctl reads a board's serial console: it keeps the byte-exact
// transcript and splits it into timestamped lines, among which the board's
// result frames come (contract/frame collects them). A console
// opened with OpenPort is locked to this process and survives its adapter
// being unplugged and plugged back in. Classify says which boot stage a
// line marks (a bootloader banner, the kernel starting, a panic).
//
//	con, err := serialctl.OpenPort(ctx, "usb:0403:6001:A50285BI", 115200, serialctl.PortOptions{})
//	defer con.Close()
//	col := frame.NewCollector(runID)
//	for line := range con.Lines() { ev, err := col.Feed(line.Text) ... }
package serialctl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"go.bug.st/serial"
)

// Line is one console line, without its line terminator.
type Line struct {
	Time time.Time
	Text []byte
	// Note marks a line bootbench wrote into the transcript (the console
	// was lost, or came back) rather than one the board sent.
	Note bool
	// Lost marks the note that the console went away (its adapter
	// unplugged, its pty's other end closed); Back the note that it is
	// there again.
	Lost, Back bool
	// Cut marks the text the console's loss cut off before its line end:
	// what the board sent of a line, never all of it (a frame's checksum
	// would fail on it, though nothing of the board's was wrong).
	Cut bool
}

// Console reads a port in the background.
type Console struct {
	src      source // nil: the console ends with its reader
	lines    chan Line
	closed   chan struct{}
	done     chan struct{} // the reader has finished
	released chan struct{} // the first Close has finished
	once     sync.Once
	stopCtx  func() bool

	// wmu is held while writing to the port and while closing it, so a
	// write never reaches a closed (and perhaps reused) descriptor.
	wmu sync.Mutex

	tee io.Writer // gets every byte as it arrives; nil for none

	mu         sync.Mutex
	cur        io.ReadCloser // the port being read; nil while lost or closed
	transcript bytes.Buffer
	// grown is closed when the transcript grows (and then replaced), so
	// Expect can wait for text that ends no line, like a prompt.
	grown chan struct{}
	err   error
}

// source is a console that can be found again after it went away.
type source interface {
	reopen() (io.ReadCloser, error)
	lost(err error) bool
	name() string
}

// pollInterval bounds how long a read waits, so Close is prompt: a serial
// read timeout returns (0, nil), never an error.
const pollInterval = 100 * time.Millisecond

// Open opens a serial port (a real UART or QEMU's pty) and starts reading.
// On a pty the modem control lines do not exist, so none are set. It takes
// no lock and does not reopen: OpenPort does, for a board's console.
func Open(name string, baud int) (*Console, error) {
	p, err := openNoInherit(name, &serial.Mode{BaudRate: baud})
	if err != nil {
		return nil, fmt.Errorf("open console %s: %w", name, err)
	}
	if err := p.SetReadTimeout(pollInterval); err != nil {
		p.Close()
		return nil, fmt.Errorf("set read timeout on %s: %w", name, err)
	}
	return New(p), nil
}

// New starts reading r. A read that returns (0, nil) is a timeout and is
// retried; it never ends the stream. A Device is reopened if it goes away.
func New(r io.ReadCloser) *Console {
	c := newConsole(r)
	if d, ok := r.(*Device); ok {
		c.cur, c.src = d.serialPort, d.o
	}
	go c.loop()
	return c
}

func newConsole(r io.ReadCloser) *Console {
	return &Console{cur: r, lines: make(chan Line, 1024), closed: make(chan struct{}), done: make(chan struct{}), released: make(chan struct{}), grown: make(chan struct{})}
}

func (c *Console) loop() {
	defer close(c.done)
	defer close(c.lines)
	var partial []byte
	for {
		c.mu.Lock()
		r := c.cur
		c.mu.Unlock()
		if r == nil {
			return // closed
		}
		err := c.read(r, &partial)
		if c.isClosed() {
			return
		}
		lost := c.src != nil && c.src.lost(err)
		if len(partial) > 0 {
			c.emit(Line{Time: time.Now(), Text: partial, Cut: lost})
			partial = nil
		}
		if !lost {
			if !errors.Is(err, io.EOF) {
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
			}
			return
		}
		c.drop(r)
		if !c.reconnect(err) {
			return
		}
	}
}

// read delivers what r sends until a read fails, and returns why.
func (c *Console) read(r io.Reader, partial *[]byte) error {
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			now := time.Now()
			c.mu.Lock()
			c.transcript.Write(buf[:n])
			c.grow()
			c.mu.Unlock()
			if c.tee != nil {
				c.tee.Write(buf[:n])
			}
			*partial = append(*partial, buf[:n]...)
			for {
				i := bytes.IndexByte(*partial, '\n')
				if i < 0 {
					break
				}
				text := bytes.TrimRight((*partial)[:i], "\r")
				c.emit(Line{Time: now, Text: append([]byte(nil), text...)})
				*partial = (*partial)[i+1:]
			}
		}
		if err != nil {
			return err
		}
		if c.isClosed() {
			return nil
		}
	}
}

// reconnect marks the loss in the transcript and looks for the console
// until it is back (true) or the console is closed (false).
func (c *Console) reconnect(cause error) bool {
	start := time.Now()
	c.note(Line{Lost: true}, fmt.Sprintf("console %s lost: %s", c.src.name(), lostReason(cause)))
	t := time.NewTicker(reconnectPoll)
	defer t.Stop()
	var said string
	for {
		select {
		case <-c.closed:
			return false
		case <-t.C:
		}
		r, err := c.src.reopen()
		if err != nil {
			// Not back yet, unless it is back but cannot be had: say so once.
			if (errors.Is(err, ErrBusy) || errors.Is(err, ErrPermission)) && err.Error() != said {
				said = err.Error()
				c.note(Line{}, fmt.Sprintf("console %s is back but cannot be opened: %v", c.src.name(), err))
			}
			continue
		}
		c.mu.Lock()
		if c.isClosed() {
			c.mu.Unlock()
			r.Close()
			return false
		}
		c.cur = r
		c.mu.Unlock()
		c.note(Line{Back: true}, fmt.Sprintf("console %s back after %.1fs", c.src.name(), time.Since(start).Seconds()))
		return true
	}
}

// note writes a line of bootbench's own into the transcript, on a line of
// its own, and delivers it as l (its Lost or Back set, if either).
func (c *Console) note(l Line, msg string) {
	text := "[bootbench: " + msg + "]"
	c.mu.Lock()
	t := c.transcript.Bytes()
	midLine := len(t) > 0 && t[len(t)-1] != '\n'
	if midLine {
		c.transcript.WriteByte('\n')
	}
	c.transcript.WriteString(text + "\n")
	c.mu.Unlock()
	if c.tee != nil {
		// A terminal in raw mode needs the carriage return.
		if midLine {
			io.WriteString(c.tee, "\r\n")
		}
		io.WriteString(c.tee, text+"\r\n")
	}
	l.Time, l.Text, l.Note = time.Now(), []byte(text), true
	c.emit(l)
}

// drop closes r unless Close already took it.
func (c *Console) drop(r io.ReadCloser) {
	c.mu.Lock()
	mine := c.cur == r
	if mine {
		c.cur = nil
	}
	c.mu.Unlock()
	if mine {
		c.wmu.Lock()
		r.Close()
		c.wmu.Unlock()
	}
}

func (c *Console) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

func (c *Console) emit(l Line) {
	select {
	case c.lines <- l:
	case <-c.closed:
	}
}

// grow wakes the waiters of Expect; c.mu is held.
func (c *Console) grow() {
	close(c.grown)
	c.grown = make(chan struct{})
}

// ErrNotSeen is what Expect returns when the text did not come in time.
var ErrNotSeen = errors.New("not seen on the console")

// Expect waits until the transcript from offset from on holds text, and
// returns the offset just past it: the next Expect starts there, so each
// waits for text that came after what the one before matched. Text need
// not end a line (a bootloader's prompt does not). It fails with
// ErrNotSeen when ctx ends first, or when the console ends.
func (c *Console) Expect(ctx context.Context, from int, text string) (int, error) {
	for {
		c.mu.Lock()
		b := c.transcript.Bytes()
		if from > len(b) {
			from = len(b)
		}
		i := bytes.Index(b[from:], []byte(text))
		grown := c.grown
		c.mu.Unlock()
		if i >= 0 {
			return from + i + len(text), nil
		}
		select {
		case <-grown:
		case <-ctx.Done():
			return from, fmt.Errorf("%q %w (%v)", text, ErrNotSeen, context.Cause(ctx))
		case <-c.done:
			return from, fmt.Errorf("%q %w: the console ended", text, ErrNotSeen)
		}
	}
}

// Lines delivers console lines as they complete. It is closed when the port
// ends or the console is closed.
func (c *Console) Lines() <-chan Line { return c.lines }

// Transcript returns a copy of every byte read so far, exactly as received,
// with bootbench's notes on lines of their own.
func (c *Console) Transcript() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.transcript.Bytes())
}

// Offset is how many bytes the transcript holds so far: a mark to take one
// boot's transcript from, on a console that stays open across boots.
func (c *Console) Offset() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.transcript.Len()
}

// TranscriptFrom returns a copy of the transcript from offset off on.
func (c *Console) TranscriptFrom(off int) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.transcript.Bytes()
	if off > len(b) {
		off = len(b)
	}
	return bytes.Clone(b[off:])
}

// Err reports why reading stopped, if not at end of file or Close.
func (c *Console) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// ErrClosed is what writing to a closed console returns.
var ErrClosed = errors.New("console closed")

// Write sends p to the board. While the console is lost it fails with
// ErrNoPort rather than wait.
func (c *Console) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	r := c.cur
	c.mu.Unlock()
	switch {
	case c.isClosed():
		return 0, ErrClosed
	case r == nil:
		return 0, fmt.Errorf("write to console: %w (it went away; waiting for it to come back)", ErrNoPort)
	}
	w, ok := r.(io.Writer)
	if !ok {
		return 0, errors.New("write to console: it is read-only")
	}
	return w.Write(p)
}

// Close stops reading, releases the port and waits for the reader to
// finish.
func (c *Console) Close() error {
	if c.stopCtx != nil {
		c.stopCtx()
	}
	return c.shutdown()
}

// shutdown closes the console once; every call returns when the port is
// closed and released and the reader has finished.
func (c *Console) shutdown() error {
	first := false
	c.once.Do(func() { first = true; close(c.closed) })
	if !first {
		<-c.released
		return nil
	}
	defer close(c.released)
	c.mu.Lock()
	r := c.cur
	c.cur = nil
	c.mu.Unlock()
	var err error
	if r != nil {
		c.wmu.Lock()
		err = r.Close()
		c.wmu.Unlock()
	}
	<-c.done
	return err
}
