package tftp

import (
	"encoding/binary"
	"net"
	"testing"
	"time"
)

// ackingConn is a connection whose peer ACKs every DATA block at once.
type ackingConn struct {
	peer *net.UDPAddr
	last uint16
}

func (c *ackingConn) sendTo(data []byte, _ *net.UDPAddr) error {
	c.last = binary.BigEndian.Uint16(data[2:])
	return nil
}

func (c *ackingConn) readFrom(b []byte) (int, *net.UDPAddr, error) {
	binary.BigEndian.PutUint16(b, opACK)
	binary.BigEndian.PutUint16(b[2:], c.last)
	return 4, c.peer, nil
}

func (c *ackingConn) setDeadline(time.Duration) error { return nil }
func (c *ackingConn) close()                          {}

// TestSendBlockAllocs: sending a block and reading its ACK allocates
// nothing, so a long transfer leaves the garbage collector nothing to do.
func TestSendBlockAllocs(t *testing.T) {
	peer := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1069}
	s := &sender{conn: &ackingConn{peer: peer}, addr: peer, tid: peer.Port,
		send: make([]byte, datagramLength), receive: make([]byte, datagramLength),
		retry: &backoff{}, timeout: time.Second, retries: 1, block: 1}
	binary.BigEndian.PutUint16(s.send, opDATA)
	allocs := testing.AllocsPerRun(1000, func() {
		binary.BigEndian.PutUint16(s.send[2:], s.block)
		if _, err := s.sendWithRetry(datagramLength); err != nil {
			t.Fatal(err)
		}
		s.block++
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations a block, want 0", allocs)
	}
}
