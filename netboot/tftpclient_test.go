package netboot

import (
	"bytes"
	"encoding/binary"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TFTP opcodes (RFC 1350, RFC 2347).
const (
	opRRQ   = 1
	opDATA  = 3
	opACK   = 4
	opERROR = 5
	opOACK  = 6
)

// rawClient is a TFTP client that writes the packets itself, so tests can
// send what a real boot ROM or an attacker sends (upper-case modes and
// options, requests it never follows up) and see exactly what comes back.
type rawClient struct {
	t      *testing.T
	conn   *net.UDPConn
	peer   *net.UDPAddr // the server's transfer socket, once it answered
	closed bool
}

// newRawClient opens a client socket on local (an IP on loopback, so tests
// can be several clients).
func newRawClient(t *testing.T, local string) *rawClient {
	t.Helper()
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(local)})
	if err != nil {
		t.Fatal(err)
	}
	c := &rawClient{t: t, conn: conn}
	t.Cleanup(c.close)
	return c
}

// rrq sends a read request: name, mode, then option name/value pairs.
func (c *rawClient) rrq(server string, name, mode string, opts ...string) {
	c.t.Helper()
	p := []byte{0, opRRQ}
	for _, s := range append([]string{name, mode}, opts...) {
		p = append(append(p, s...), 0)
	}
	addr, err := net.ResolveUDPAddr("udp4", server)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.conn.WriteToUDP(p, addr); err != nil {
		c.t.Fatal(err)
	}
}

// packet is one packet from the server.
type packet struct {
	op    uint16
	block uint16            // DATA
	data  []byte            // DATA
	opts  map[string]string // OACK
	msg   string            // ERROR
}

// read waits up to d for the server's next packet; ok is false on timeout.
func (c *rawClient) read(d time.Duration) (packet, bool) {
	c.t.Helper()
	buf := make([]byte, 65536)
	c.conn.SetReadDeadline(time.Now().Add(d))
	n, from, err := c.conn.ReadFromUDP(buf)
	if err != nil {
		return packet{}, false
	}
	c.peer = from
	b := buf[:n]
	if len(b) < 4 {
		c.t.Fatalf("short packet % x", b)
	}
	p := packet{op: binary.BigEndian.Uint16(b)}
	switch p.op {
	case opDATA:
		p.block, p.data = binary.BigEndian.Uint16(b[2:]), b[4:]
	case opERROR:
		p.msg = string(bytes.TrimRight(b[4:], "\x00"))
	case opOACK:
		p.opts = map[string]string{}
		f := bytes.Split(bytes.TrimRight(b[2:], "\x00"), []byte{0})
		for i := 0; i+1 < len(f); i += 2 {
			p.opts[string(f[i])] = string(f[i+1])
		}
	}
	return p, true
}

// ack acknowledges block n (0 for an OACK).
func (c *rawClient) ack(n uint16) {
	c.t.Helper()
	c.send([]byte{0, opACK, byte(n >> 8), byte(n)})
}

// abort sends an ERROR with msg to the transfer.
func (c *rawClient) abort(msg string) {
	c.send(append(append([]byte{0, opERROR, 0, 0}, msg...), 0))
}

func (c *rawClient) send(p []byte) {
	if c.peer == nil {
		return
	}
	if _, err := c.conn.WriteToUDP(p, c.peer); err != nil {
		c.t.Fatal(err)
	}
}

// close ends an open transfer the way a client that gives up does, so the
// server need not wait out its retries.
func (c *rawClient) close() {
	if c.closed {
		return
	}
	c.abort("client gone")
	c.conn.Close()
	c.closed = true
}

// receive runs a whole transfer after rrq: it acknowledges an OACK and
// every block, and returns the options acknowledged, the bytes and the
// block sizes as they came, or the server's error message.
func (c *rawClient) receive() (opts map[string]string, data []byte, blocks []int, errMsg string) {
	c.t.Helper()
	blksize, next := 512, uint16(1)
	for {
		p, ok := c.read(3 * time.Second)
		if !ok {
			c.t.Fatalf("no answer from the server after block %d", next-1)
		}
		switch p.op {
		case opOACK:
			opts = p.opts
			for k, v := range opts {
				if n, err := strconv.Atoi(v); err == nil && strings.EqualFold(k, "blksize") {
					blksize = n
				}
			}
			c.ack(0)
		case opERROR:
			return opts, data, blocks, p.msg
		case opDATA:
			if p.block != next {
				continue // a retransmission
			}
			data = append(data, p.data...)
			blocks = append(blocks, len(p.data))
			c.ack(p.block)
			next++
			if len(p.data) < blksize {
				return opts, data, blocks, ""
			}
		}
	}
}
