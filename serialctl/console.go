// Package serialctl reads a board's serial console: it keeps the byte-exact
// transcript, splits it into timestamped lines, and decodes the checksummed
// result frames the board sends among the kernel's messages.
//
//	con, err := serialctl.Open("/dev/pts/3", 115200)
//	defer con.Close()
//	col := serialctl.NewCollector(runID)
//	for line := range con.Lines() { ev, err := col.Feed(line.Text) ... }
package serialctl

import (
	"bytes"
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
}

// Console reads a port in the background.
type Console struct {
	r      io.ReadCloser
	lines  chan Line
	closed chan struct{}
	done   chan struct{}

	mu         sync.Mutex
	transcript bytes.Buffer
	err        error
}

// pollInterval bounds how long a read waits, so Close is prompt: a serial
// read timeout returns (0, nil), never an error.
const pollInterval = 100 * time.Millisecond

// Open opens a serial port (a real UART or QEMU's pty) and starts reading.
// On a pty the modem control lines do not exist, so none are set.
func Open(name string, baud int) (*Console, error) {
	p, err := serial.Open(name, &serial.Mode{BaudRate: baud})
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
// retried; it never ends the stream.
func New(r io.ReadCloser) *Console {
	c := &Console{r: r, lines: make(chan Line, 1024), closed: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

func (c *Console) loop() {
	defer close(c.done)
	defer close(c.lines)
	buf := make([]byte, 4096)
	var partial []byte
	for {
		n, err := c.r.Read(buf)
		if n > 0 {
			now := time.Now()
			c.mu.Lock()
			c.transcript.Write(buf[:n])
			c.mu.Unlock()
			partial = append(partial, buf[:n]...)
			for {
				i := bytes.IndexByte(partial, '\n')
				if i < 0 {
					break
				}
				text := bytes.TrimRight(partial[:i], "\r")
				c.emit(Line{Time: now, Text: append([]byte(nil), text...)})
				partial = partial[i+1:]
			}
		}
		select {
		case <-c.closed:
			return
		default:
		}
		if err != nil {
			if len(partial) > 0 {
				c.emit(Line{Time: time.Now(), Text: partial})
			}
			if !errors.Is(err, io.EOF) {
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
			}
			return
		}
	}
}

func (c *Console) emit(l Line) {
	select {
	case c.lines <- l:
	case <-c.closed:
	}
}

// Lines delivers console lines as they complete. It is closed when the port
// ends or the console is closed.
func (c *Console) Lines() <-chan Line { return c.lines }

// Transcript returns a copy of every byte read so far, exactly as received.
func (c *Console) Transcript() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.transcript.Bytes())
}

// Err reports why reading stopped, if not at end of file or Close.
func (c *Console) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close stops reading and waits for the reader to finish.
func (c *Console) Close() error {
	select {
	case <-c.closed:
		<-c.done
		return nil
	default:
	}
	close(c.closed)
	err := c.r.Close()
	<-c.done
	return err
}
