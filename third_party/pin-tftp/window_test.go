package tftp

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// windowServer serves data as any file name, granting windowsize up to
// max (0: not served).
func windowServer(t *testing.T, data []byte, max int) *net.UDPAddr {
	t.Helper()
	s := NewServer(func(_ string, rf io.ReaderFrom) error {
		_, err := rf.ReadFrom(bytes.NewReader(data))
		return err
	}, nil)
	s.SetTimeout(2 * time.Second)
	s.SetRetries(3)
	s.SetBackoff(func(int) time.Duration { return 0 })
	s.SetWindowSize(max)
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(conn)
	t.Cleanup(s.Shutdown)
	// Serve asks for each packet's interface (whose MTU caps blksize)
	// before it reads: a request queued before that would get 512.
	time.Sleep(100 * time.Millisecond)
	return conn.LocalAddr().(*net.UDPAddr)
}

// rawPeer writes and reads TFTP packets itself.
type rawPeer struct {
	t    *testing.T
	conn *net.UDPConn
	peer *net.UDPAddr
}

func newRawPeer(t *testing.T) *rawPeer {
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &rawPeer{t: t, conn: conn}
}

func (p *rawPeer) rrq(server *net.UDPAddr, opts ...string) {
	b := []byte("\x00\x01file\x00octet\x00")
	for _, o := range opts {
		b = append(append(b, o...), 0)
	}
	p.conn.WriteToUDP(b, server)
}

// abort ends the transfer with an ERROR, so the server need not time it out.
func (p *rawPeer) abort() {
	p.conn.WriteToUDP([]byte("\x00\x05\x00\x00done\x00"), p.peer)
}

func (p *rawPeer) ack(block uint16) {
	p.conn.WriteToUDP([]byte{0, byte(opACK), byte(block >> 8), byte(block)}, p.peer)
}

// next is the server's next packet: its opcode, block (DATA) or the
// option answer's text; ok is false after d of silence.
func (p *rawPeer) next(d time.Duration) (op, block uint16, text string, ok bool) {
	buf := make([]byte, 2048)
	p.conn.SetReadDeadline(time.Now().Add(d))
	n, from, err := p.conn.ReadFromUDP(buf)
	if err != nil {
		return 0, 0, "", false
	}
	p.peer = from
	op = binary.BigEndian.Uint16(buf)
	if op == opOACK {
		return op, 0, strings.ReplaceAll(string(buf[2:n]), "\x00", " "), true
	}
	return op, binary.BigEndian.Uint16(buf[2:]), "", true
}

func TestWindowSizeNegotiatedOnlyWhenAsked(t *testing.T) {
	data := make([]byte, 5000)
	for _, tc := range []struct {
		name string
		max  int
		opts []string
		want string // the option answer, whose order is the map's: sorted here
	}{
		{"asked", 16, []string{"windowsize", "8"}, "windowsize 8"},
		{"capped", 16, []string{"windowsize", "64", "blksize", "1468"}, "blksize 1468 windowsize 16"},
		{"not asked", 16, []string{"blksize", "1468"}, "blksize 1468"},
		{"not served", 0, []string{"windowsize", "16", "blksize", "1468"}, "blksize 1468"},
		{"capped by bytes", 64, []string{"windowsize", "64", "blksize", "65464"}, "blksize 65464 windowsize 16"},
		{"bad value", 16, []string{"windowsize", "0", "blksize", "1468"}, "blksize 1468"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newRawPeer(t)
			p.rrq(windowServer(t, data, tc.max), tc.opts...)
			op, _, text, ok := p.next(3 * time.Second)
			if !ok || op != opOACK {
				t.Fatalf("got op %d (ok %v), want an option answer", op, ok)
			}
			if got := sortPairs(text); got != tc.want {
				t.Errorf("option answer %q, want %q", got, tc.want)
			}
			p.abort()
		})
	}
}

func sortPairs(text string) string {
	f := strings.Fields(text)
	var pairs []string
	for i := 0; i+1 < len(f); i += 2 {
		pairs = append(pairs, f[i]+" "+f[i+1])
	}
	for i := range pairs { // a handful: insertion sort
		for j := i; j > 0 && pairs[j] < pairs[j-1]; j-- {
			pairs[j], pairs[j-1] = pairs[j-1], pairs[j]
		}
	}
	return strings.Join(pairs, " ")
}

// TestWindowRollback: the client ACKs the last block it got in order and
// the server resends the window from the block after it (RFC 7440 §4);
// an ACK of the block before the window resends it once, not once per
// duplicate.
func TestWindowRollback(t *testing.T) {
	p := newRawPeer(t)
	p.rrq(windowServer(t, make([]byte, 512*20+100), 4), "windowsize", "4")
	if op, _, _, ok := p.next(3 * time.Second); !ok || op != opOACK {
		t.Fatalf("no option answer")
	}
	window := func(want ...uint16) {
		t.Helper()
		for _, w := range want {
			op, b, _, ok := p.next(3 * time.Second)
			if !ok || op != opDATA || b != w {
				t.Fatalf("got op %d block %d (ok %v), want block %d of %v", op, b, ok, w, want)
			}
		}
	}
	p.ack(0)
	window(1, 2, 3, 4)
	p.ack(2) // 3 lost
	window(3, 4, 5, 6)
	p.ack(6)
	window(7, 8, 9, 10)
	p.ack(6) // 7 lost: the client re-ACKs 6
	window(7, 8, 9, 10)
	p.ack(6) // a duplicate: no window for it
	if op, b, _, ok := p.next(500 * time.Millisecond); ok {
		t.Fatalf("a duplicate ACK got op %d block %d", op, b)
	}
	window(7, 8, 9, 10) // the retry timeout's
	p.ack(10)
	window(11, 12, 13, 14)
	p.ack(14)
	window(15, 16, 17, 18)
	p.ack(18)
	window(19, 20, 21) // 21 holds the last 100 bytes
	p.ack(21)
	if op, b, _, ok := p.next(500 * time.Millisecond); ok {
		t.Fatalf("after the last ACK: op %d block %d", op, b)
	}
}

// lossyProxy relays one client's packets to a TFTP server and back,
// dropping the given share of the server's DATA packets.
func lossyProxy(t *testing.T, server *net.UDPAddr, drop float64, seed int64) *net.UDPAddr {
	t.Helper()
	front, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	back, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { front.Close(); back.Close() })
	var mu sync.Mutex
	var client, peer *net.UDPAddr
	go func() {
		buf := make([]byte, 65536)
		for {
			n, from, err := front.ReadFromUDP(buf)
			if err != nil {
				return
			}
			mu.Lock()
			client = from
			if n > 1 && buf[1] == 1 { // a new read request goes to the server's port
				peer = server
			}
			to := peer
			mu.Unlock()
			back.WriteToUDP(buf[:n], to)
		}
	}()
	go func() {
		rng := rand.New(rand.NewSource(seed))
		buf := make([]byte, 65536)
		for {
			n, from, err := back.ReadFromUDP(buf)
			if err != nil {
				return
			}
			if n > 1 && buf[1] == byte(opDATA) && rng.Float64() < drop {
				continue
			}
			mu.Lock()
			peer = from
			to := client
			mu.Unlock()
			front.WriteToUDP(buf[:n], to)
		}
	}()
	return front.LocalAddr().(*net.UDPAddr)
}

// TestWindowedTransferWithLoss: with 5 % of DATA lost, a window of 16
// still delivers every byte, at sizes around the block and window
// boundaries and past the 16-bit block number's wrap.
func TestWindowedTransferWithLoss(t *testing.T) {
	for _, tc := range []struct {
		size, blksize int
		drop          float64
	}{
		{0, 512, 0.05},
		{512 * 16, 512, 0.05},
		{512*16 + 1, 512, 0.05},
		{1468*300 + 7, 1468, 0.05},
		{512*65536 + 1000, 512, 0},
	} {
		data := make([]byte, tc.size)
		rand.New(rand.NewSource(int64(tc.size))).Read(data)
		server := lossyProxy(t, windowServer(t, data, 16), tc.drop, 1)
		c, err := NewClient(server.String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetBlockSize(tc.blksize)
		c.SetWindowSize(16)
		c.SetTimeout(300 * time.Millisecond)
		c.SetRetries(10)
		c.SetBackoff(func(int) time.Duration { return 0 })
		wt, err := c.Receive("file", "octet")
		if err != nil {
			t.Fatalf("size %d: %v", tc.size, err)
		}
		var got bytes.Buffer
		if _, err := wt.WriteTo(&got); err != nil {
			t.Fatalf("size %d: %v", tc.size, err)
		}
		if !bytes.Equal(got.Bytes(), data) {
			t.Errorf("size %d blksize %d: got %d bytes that differ", tc.size, tc.blksize, got.Len())
		}
	}
}
