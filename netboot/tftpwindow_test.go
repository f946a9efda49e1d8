package netboot

import (
	"bytes"
	"crypto/sha256"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pin/tftp/v3"
)

// lossyLink stands between one TFTP client and the server, as a lossy
// network would: it relays every packet both ways and loses the given
// share of the server's DATA packets.
type lossyLink struct {
	front, back *net.UDPConn
	mu          sync.Mutex
	client      *net.UDPAddr // where the client sends from
	server      *net.UDPAddr // port 69's address; then the transfer's own
	data, lost  int
}

func newLossyLink(t *testing.T, server string, loss float64) *lossyLink {
	t.Helper()
	srv, err := net.ResolveUDPAddr("udp4", server)
	if err != nil {
		t.Fatal(err)
	}
	l := &lossyLink{}
	for _, c := range []**net.UDPConn{&l.front, &l.back} {
		if *c, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { l.front.Close(); l.back.Close() })
	go l.toServer(srv)
	go l.toClient(loss)
	return l
}

func (l *lossyLink) addr() string { return l.front.LocalAddr().String() }

func (l *lossyLink) toServer(port69 *net.UDPAddr) {
	buf := make([]byte, 65536)
	for {
		n, from, err := l.front.ReadFromUDP(buf)
		if err != nil {
			return
		}
		l.mu.Lock()
		l.client = from
		if n > 1 && buf[1] == opRRQ {
			l.server = port69
		}
		to := l.server
		l.mu.Unlock()
		l.back.WriteToUDP(buf[:n], to)
	}
}

func (l *lossyLink) toClient(loss float64) {
	rng := rand.New(rand.NewSource(7)) // the same losses each run, as far as timing allows
	buf := make([]byte, 65536)
	for {
		n, from, err := l.back.ReadFromUDP(buf)
		if err != nil {
			return
		}
		l.mu.Lock()
		l.server = from
		to := l.client
		drop := false
		if n > 1 && buf[1] == opDATA {
			l.data++
			if drop = rng.Float64() < loss; drop {
				l.lost++
			}
		}
		l.mu.Unlock()
		if !drop {
			l.front.WriteToUDP(buf[:n], to)
		}
	}
}

// TestTFTPWindowedWithLoss: with windowsize 16 and 5 % of the DATA packets
// lost on the way, every file arrives byte for byte: the client ACKs the
// last block it got in order and the server resends from there.
func TestTFTPWindowedWithLoss(t *testing.T) {
	dir := t.TempDir()
	sizes := map[string]int{"empty": 0, "one": 1, "window": 16 * 1468, "window+1": 16*1468 + 1,
		"small-blocks": 300 * 1024, "image": 2 << 20}
	want := map[string][32]byte{}
	rng := rand.New(rand.NewSource(1))
	for name, size := range sizes {
		data := make([]byte, size)
		rng.Read(data)
		want[name] = sha256.Sum256(data)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	addr, events := startTFTP(t, dir)
	link := newLossyLink(t, addr, 0.05)
	for name := range sizes {
		c, err := tftp.NewClient(link.addr())
		if err != nil {
			t.Fatal(err)
		}
		c.SetBlockSize(1468)
		if name == "small-blocks" {
			c.SetBlockSize(512)
		}
		c.SetWindowSize(16)
		c.SetTimeout(200 * time.Millisecond)
		c.SetRetries(20)
		c.SetBackoff(func(int) time.Duration { return 0 })
		var got bytes.Buffer
		wt, err := c.Receive(name, "octet")
		if err == nil {
			_, err = wt.WriteTo(&got)
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if sha256.Sum256(got.Bytes()) != want[name] || got.Len() != sizes[name] {
			t.Errorf("%s: got %d bytes that differ from the file's %d", name, got.Len(), sizes[name])
		}
	}
	link.mu.Lock()
	data, lost := link.data, link.lost
	link.mu.Unlock()
	if lost < data/40 {
		t.Errorf("the link lost %d of %d DATA packets, not the 5 %% the test is about", lost, data)
	}
	t.Logf("%d of %d DATA packets lost", lost, data)
	// The server's events say what was negotiated.
	deadline := time.Now().Add(3 * time.Second)
	for done := 0; done < len(sizes) && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		done = 0
		for _, e := range events() {
			if e.Kind == "tftp-done" {
				done++
			}
		}
	}
	for _, e := range events() {
		if e.Kind != "tftp-done" || !strings.Contains(e.Options, "windowsize=16") {
			t.Errorf("event %s %s: %v, options %q, want done with windowsize=16", e.Kind, e.File, e.Err, e.Options)
		}
	}
}
