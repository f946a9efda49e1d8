package tftp

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
)

// RFC 7440 windowsize, sending side. The server sends a
// window of up to windowsize blocks, then waits for an ACK. The client ACKs
// the window's last block, or, once a block is missing, the last one it got
// in order: the next window starts after the block it ACKed (rollback).

// maxWindowBytes bounds the data a windowed transfer holds for resending:
// a client asking for 64 blocks of 64 KiB gets a smaller window.
const maxWindowBytes = 1 << 20

// negotiateWindow answers the client's windowsize option: at most the
// server's maximum and maxWindowBytes of blocks. With no maximum set the
// option is not served and is left out of the option answer.
func (s *sender) negotiateWindow(value string) bool {
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 || n > 65535 || s.maxWindow < 1 {
		return false
	}
	if n > s.maxWindow {
		n = s.maxWindow
	}
	s.window = n
	return true
}

// capWindow applies maxWindowBytes once the block size is known (the
// options come in no particular order).
func (s *sender) capWindow() {
	if s.window < 1 {
		return
	}
	if most := maxWindowBytes / len(s.send); s.window > most {
		s.window = most
		if s.window < 1 {
			s.window = 1
		}
	}
	s.opts["windowsize"] = strconv.Itoa(s.window)
}

// window is the blocks a windowed transfer has read and not yet had
// acknowledged, in a ring: block start+i is in bufs[(head+i)%len(bufs)].
type window struct {
	bufs  [][]byte
	lens  []int
	head  int
	count int
	start uint16 // the first unacknowledged block
	last  bool   // the final (short) block is in the ring
}

func (w *window) at(i int) []byte {
	k := (w.head + i) % len(w.bufs)
	return w.bufs[k][:w.lens[k]]
}

// fill reads blocks into the ring until it is full or the file ends.
func (w *window) fill(r io.Reader) (int64, error) {
	var n int64
	for w.count < len(w.bufs) && !w.last {
		k := (w.head + w.count) % len(w.bufs)
		b := w.bufs[k]
		l, err := io.ReadFull(r, b[4:])
		n += int64(l)
		switch err {
		case nil:
		case io.EOF, io.ErrUnexpectedEOF:
			w.last = true
		default:
			return n, err
		}
		binary.BigEndian.PutUint16(b[0:2], opDATA)
		binary.BigEndian.PutUint16(b[2:4], w.start+uint16(w.count))
		w.lens[k] = 4 + l
		w.count++
	}
	return n, nil
}

// advance drops the first n blocks, acknowledged.
func (w *window) advance(n int) {
	w.head = (w.head + n) % len(w.bufs)
	w.count -= n
	w.start += uint16(n)
}

func (s *sender) readFromWindowed(r io.Reader) (n int64, err error) {
	w := &window{bufs: make([][]byte, s.window), lens: make([]int, s.window), start: 1}
	for i := range w.bufs {
		w.bufs[i] = make([]byte, len(s.send))
	}
	for {
		read, err := w.fill(r)
		n += read
		if err != nil {
			s.abort(err)
			return n, err
		}
		acked, err := s.sendWindowWithRetry(w)
		if err != nil {
			s.abort(err)
			return n, err
		}
		w.advance(acked)
		if w.last && w.count == 0 {
			if s.hook != nil {
				s.hook.OnSuccess(s.buildTransferStats())
			}
			return n, nil
		}
	}
}

// sendWindowWithRetry sends the window's blocks and returns how many of
// them the client acknowledged, resending them all after each timeout.
func (s *sender) sendWindowWithRetry(w *window) (int, error) {
	s.retry.reset()
	rolledBack := false
	for {
		acked, err := s.sendWindow(w, &rolledBack)
		if _, ok := err.(net.Error); ok && s.stop != nil && s.stop.Err() != nil {
			return 0, ErrServerShutdown
		}
		if _, ok := err.(net.Error); ok && s.retry.count() < s.retries {
			s.retry.backoff()
			continue
		}
		if err == nil && acked == 0 {
			continue // the client asked for the whole window again
		}
		return acked, err
	}
}

// sendWindow sends the window once and waits for an ACK of one of its
// blocks. An ACK of the block before the window says the client got none
// of it: the window goes again at once, but only for the first such ACK,
// since a client that ACKs every block after a gap sends many of them.
func (s *sender) sendWindow(w *window, rolledBack *bool) (int, error) {
	if err := s.conn.setDeadline(s.timeout); err != nil {
		return 0, err
	}
	for i := 0; i < w.count; i++ {
		if err := s.conn.sendTo(w.at(i), s.addr); err != nil {
			return 0, err
		}
		s.datagramsSent++
	}
	for {
		n, addr, err := s.conn.readFrom(s.receive)
		if err != nil {
			return 0, err
		}
		if !addr.IP.Equal(s.addr.IP) || (s.tid != 0 && addr.Port != s.tid) {
			continue
		}
		p, err := parsePacket(s.receive[:n])
		if err != nil {
			continue
		}
		s.tid = addr.Port
		switch p := p.(type) {
		case pACK:
			got := int(p.block() - (w.start - 1)) // uint16: block numbers wrap
			if got >= 1 && got <= w.count {
				s.datagramsAcked++
				return got, nil
			}
			if got == 0 && !*rolledBack {
				*rolledBack = true
				return 0, nil
			}
		case pERROR:
			return 0, fmt.Errorf("sending block %d: code=%d, error: %s",
				w.start, p.code(), p.message())
		}
	}
}
