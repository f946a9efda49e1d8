package tftp

import (
	"bytes"
	"io"
	"net"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestTransferIgnoresStrays: datagrams to a transfer's port from another
// port (a stale client, a scan) neither move the transfer on nor put
// off the resend that the client's silence is owed, one timeout after
// the block went out.
func TestTransferIgnoresStrays(t *testing.T) {
	s := NewServer(func(_ string, rf io.ReaderFrom) error {
		_, err := rf.ReadFrom(bytes.NewReader(make([]byte, 4096)))
		return err
	}, nil)
	s.SetTimeout(time.Second)
	s.SetRetries(3)
	s.SetBackoff(func(int) time.Duration { return 0 })
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(conn)
	defer s.Shutdown()
	client, stray := newRawPeer(t), newRawPeer(t)
	client.rrq(conn.LocalAddr().(*net.UDPAddr))
	op, block, _, ok := client.next(3 * time.Second)
	if !ok || op != opDATA || block != 1 {
		t.Fatalf("first answer op %d block %d (ok %v), want DATA 1", op, block, ok)
	}
	sent := time.Now()
	stray.peer = client.peer
	done := make(chan struct{})
	defer close(done)
	go func() {
		// ACKs of block 1 from elsewhere for 900 ms, then none: the
		// wait after the last is what is left of the timeout, not a
		// whole one (which would resend at 1.9 s).
		for i := 0; i < 18; i++ {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
				stray.ack(1)
			}
		}
	}()
	op, block, _, ok = client.next(3 * time.Second)
	waited := time.Since(sent)
	if !ok || op != opDATA || block != 1 {
		t.Fatalf("answer to silence op %d block %d (ok %v), want DATA 1 again", op, block, ok)
	}
	if waited < 900*time.Millisecond || waited > 1500*time.Millisecond {
		t.Errorf("DATA 1 came again after %v with strays arriving, want the 1 s timeout", waited)
	}
	client.ack(1)
	if op, block, _, ok := client.next(3 * time.Second); !ok || op != opDATA || block != 2 {
		t.Errorf("after the client's ACK op %d block %d (ok %v), want DATA 2", op, block, ok)
	}
	client.abort()
}

// TestBlockingReadWaitsWhatIsLeft: on a socket that takes datagrams from
// anywhere (a client's), a read after a datagram that came early times
// out when the deadline says, not a whole timeout later.
func TestBlockingReadWaitsWhatIsLeft(t *testing.T) {
	c, err := newClientConnection(nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	sa, err := syscall.Getsockname(c.(*blockingConnection).fd)
	if err != nil {
		t.Fatal(err)
	}
	to := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*syscall.SockaddrInet4).Port}
	peer := newRawPeer(t)
	start := time.Now()
	if err := c.setDeadline(time.Second); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(600 * time.Millisecond)
		peer.conn.WriteToUDP([]byte("early"), to)
	}()
	buf := make([]byte, 16)
	if n, from, err := c.readFrom(buf); err != nil || string(buf[:n]) != "early" || from.Port != peer.conn.LocalAddr().(*net.UDPAddr).Port {
		t.Fatalf("read %q from %v (%v), want early from the peer", buf[:n], from, err)
	}
	_, _, err = c.readFrom(buf)
	waited := time.Since(start)
	if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("second read: %v, want a timeout", err)
	}
	// A whole timeout after the datagram would be 1.6 s.
	if waited < time.Second || waited > 1400*time.Millisecond {
		t.Errorf("second read timed out %v after the deadline was set, want 1 s", waited)
	}
}

// TestTransferYields: a transfer that goes from block to block yields
// its processor every yieldEvery, no more often, so the runtime never
// sees a goroutine that has kept its processor for 10 ms.
func TestTransferYields(t *testing.T) {
	var yields []time.Time
	gosched = func() { yields = append(yields, time.Now()) }
	defer func() { gosched = runtime.Gosched }()
	c, err := newClientConnection(nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	start := time.Now()
	var calls []time.Time
	for time.Since(start) < 50*time.Millisecond {
		if err := c.setDeadline(time.Second); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, time.Now())
		time.Sleep(100 * time.Microsecond) // a block's round trip
	}
	var longestCall time.Duration // between two blocks
	for i := 1; i < len(calls); i++ {
		longestCall = max(longestCall, calls[i].Sub(calls[i-1]))
	}
	if len(yields) < 2 {
		t.Fatalf("%d yields in 50 ms of blocks, want one every %v", len(yields), yieldEvery)
	}
	for i := 1; i < len(yields); i++ {
		gap := yields[i].Sub(yields[i-1])
		if gap < yieldEvery {
			t.Errorf("yields %v apart, want at least %v", gap, yieldEvery)
		}
		if gap > yieldEvery+longestCall {
			t.Errorf("yields %v apart with blocks at most %v apart, want at most %v more than %v", gap, longestCall, longestCall, yieldEvery)
		}
	}
}
