package tftp

import (
	"encoding/binary"
	"io"
	"net"
	"strconv"
)

// RFC 7440 windowsize, receiving side of a client's read: ACK every
// window-th block, and once a block is missing ACK the last one received
// in order, once per gap, so the server resends from there; on a timeout
// ACK it again.

// SetWindowSize asks the server for windowsize n (RFC 7440) on reads; a
// server that does not serve it sends a block at a time.
func (c *Client) SetWindowSize(n int) {
	if n < 1 || n > 65535 {
		n = 0
	}
	c.window = n
}

// acceptWindow takes the server's answer to the windowsize asked for.
func (r *receiver) acceptWindow(value string) {
	n, err := strconv.Atoi(value)
	if err == nil && n >= 1 && n <= r.askedWindow {
		r.window = n
	}
}

func (r *receiver) writeToWindowed(w io.Writer) (n int64, err error) {
	last := r.block // acknowledged: 0 after the option answer
	binary.BigEndian.PutUint16(r.send[0:2], opACK)
	ack := func() error {
		binary.BigEndian.PutUint16(r.send[2:4], last)
		r.datagramsSent++
		return r.conn.sendTo(r.send[:4], r.addr)
	}
	if err := ack(); err != nil {
		r.abort(err)
		return 0, err
	}
	inRow, nacked := 0, false
	r.retry.reset()
	for {
		if err := r.conn.setDeadline(r.timeout); err != nil {
			r.abort(err)
			return n, err
		}
		c, addr, err := r.conn.readFrom(r.receive)
		if _, ok := err.(net.Error); ok && r.retry.count() < r.retries {
			r.retry.backoff()
			inRow = 0
			if err := ack(); err != nil {
				r.abort(err)
				return n, err
			}
			continue
		}
		if err != nil {
			r.abort(err)
			return n, err
		}
		if !addr.IP.Equal(r.addr.IP) || (r.tid != 0 && addr.Port != r.tid) {
			continue
		}
		p, err := parsePacket(r.receive[:c])
		if err != nil {
			continue
		}
		switch p := p.(type) {
		case pERROR:
			return n, &remoteError{code: p.code(), message: p.message()}
		case pDATA:
			ahead := p.block() - last // uint16: block numbers wrap
			if ahead == 0 || ahead > uint16(r.window) {
				continue // a block received before, or stray
			}
			if ahead > 1 {
				if !nacked {
					nacked, inRow = true, 0
					if err := ack(); err != nil {
						r.abort(err)
						return n, err
					}
				}
				continue
			}
			l, err := w.Write(r.receive[4:c])
			n += int64(l)
			if err != nil {
				r.abort(err)
				return n, err
			}
			last, nacked = p.block(), false
			r.datagramsAcked++
			r.retry.reset()
			if c < len(r.receive) {
				r.block = last
				if r.autoTerm {
					r.terminate()
				}
				return n, nil
			}
			if inRow++; inRow == r.window {
				inRow = 0
				if err := ack(); err != nil {
					r.abort(err)
					return n, err
				}
			}
		}
	}
}

// remoteError is the peer's ERROR packet.
type remoteError struct {
	code    uint16
	message string
}

func (e *remoteError) Error() string {
	return "code: " + strconv.Itoa(int(e.code)) + ", message: " + e.message
}
