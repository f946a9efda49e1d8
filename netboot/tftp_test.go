package netboot

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pin/tftp/v3"
	"golang.org/x/sys/unix"
)

func startTFTP(t *testing.T, dir string) (addr string, events func() []Event) {
	t.Helper()
	var mu sync.Mutex
	var evs []Event
	srv, err := NewTFTP(dir, func(e Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { srv.Serve(conn); close(done) }()
	t.Cleanup(func() { srv.Shutdown(); <-done })
	return conn.LocalAddr().String(), func() []Event { mu.Lock(); defer mu.Unlock(); return append([]Event(nil), evs...) }
}

func TestTFTPServesFiles(t *testing.T) {
	root := t.TempDir()
	payload := make([]byte, 3*512+17) // several blocks and a short last one
	rand.Read(payload)
	os.MkdirAll(filepath.Join(root, "run1"), 0o755)
	os.WriteFile(filepath.Join(root, "run1", "initramfs.cpio"), payload, 0o644)
	addr, events := startTFTP(t, root)

	for _, name := range []string{"run1/initramfs.cpio", "/run1/initramfs.cpio", `run1\initramfs.cpio`} {
		c, _ := tftp.NewClient(addr)
		c.RequestTSize(true)
		wt, err := c.Receive(name, "octet")
		if err != nil {
			t.Fatalf("Receive(%q): %v", name, err)
		}
		if n, ok := wt.(tftp.IncomingTransfer).Size(); !ok || n != int64(len(payload)) {
			t.Errorf("%q: tsize %d (%v), want %d", name, n, ok, len(payload))
		}
		var got bytes.Buffer
		if _, err := wt.WriteTo(&got); err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if !bytes.Equal(got.Bytes(), payload) {
			t.Errorf("%q: content differs", name)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for len(events()) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	evs := events()
	if len(evs) != 3 || evs[0].Kind != "tftp-done" || evs[0].Bytes != int64(len(payload)) {
		t.Errorf("events %+v", evs)
	}
}

func TestTFTPConfined(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	os.WriteFile(secret, []byte("host file"), 0o600)
	root := filepath.Join(outside, "root")
	os.MkdirAll(filepath.Join(root, "sub"), 0o755)
	os.Symlink(secret, filepath.Join(root, "link"))
	os.Symlink("../secret", filepath.Join(root, "rel"))
	addr, _ := startTFTP(t, root)

	for _, name := range []string{"../secret", "/../secret", `..\secret`, "sub/../../secret", "link", "rel", "sub", "nothere", secret} {
		c, _ := tftp.NewClient(addr)
		c.SetTimeout(time.Second)
		c.SetRetries(1)
		wt, err := c.Receive(name, "octet")
		if err == nil {
			_, err = wt.WriteTo(io.Discard)
		}
		if err == nil {
			t.Errorf("%q: served a file outside the root", name)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, outside) || strings.Contains(msg, "secret") && !strings.Contains(name, "secret") {
			t.Errorf("%q: error leaks host detail: %v", name, msg)
		}
	}
}

func TestTFTPRefusesWrite(t *testing.T) {
	root := t.TempDir()
	addr, events := startTFTP(t, root)
	c, _ := tftp.NewClient(addr)
	c.SetTimeout(time.Second)
	c.SetRetries(1)
	rf, err := c.Send("upload", "octet")
	if err == nil {
		_, err = rf.ReadFrom(strings.NewReader("data"))
	}
	if err == nil {
		t.Fatal("write request accepted")
	}
	if _, err := os.Stat(filepath.Join(root, "upload")); err == nil {
		t.Fatal("file written into the root")
	}
	// The refusal is reported, as every transfer is, with the client.
	evs := events()
	if len(evs) != 1 || evs[0].Kind != "tftp-error" || evs[0].File != "upload" || !errors.Is(evs[0].Err, ErrReadOnly) || !evs[0].IP.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Errorf("events %+v; want one tftp-error for upload from 127.0.0.1 saying the server is read-only", evs)
	}
}

// TestTFTPNonRegularFiles: a FIFO in the served tree (or a link to one)
// must be refused at once. Opened for reading, a FIFO without a writer
// blocks forever, and the server's Shutdown waits for that transfer.
func TestTFTPNonRegularFiles(t *testing.T) {
	root := t.TempDir()
	if err := unix.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink("fifo", filepath.Join(root, "to-fifo"))
	if err := unix.Mknod(filepath.Join(root, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Logf("no character device in the test (%v)", err)
	}
	srv, err := NewTFTP(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { srv.Serve(conn); close(served) }()

	for _, name := range []string{"fifo", "to-fifo", "null"} {
		c, _ := tftp.NewClient(conn.LocalAddr().String())
		c.SetTimeout(2 * time.Second)
		c.SetRetries(1)
		start := time.Now()
		wt, err := c.Receive(name, "octet")
		if err == nil {
			_, err = wt.WriteTo(io.Discard)
		}
		if err == nil || !strings.Contains(err.Error(), "file not found") {
			t.Errorf("%s: %v after %.1fs, want file not found at once", name, err, time.Since(start).Seconds())
		}
	}
	stopped := make(chan struct{})
	go func() { srv.Shutdown(); <-served; close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown did not return: a transfer is stuck opening a FIFO")
	}
}

// TestTFTPCapsTransfers: a client cannot hold more than its share of
// transfers, nor all clients together more than the server's: a flood of
// requests that are never acknowledged would otherwise pile up sockets,
// files and goroutines for as long as the retries last.
func TestTFTPCapsTransfers(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "vmlinuz"), make([]byte, 64<<10), 0o644)
	srv, err := NewTFTP(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.maxTransfers, srv.maxPerClient = 4, 2
	addr := serveTFTP(t, srv)

	tests := []struct {
		client string
		want   string // "data" or "error"
	}{
		{"127.0.0.2", "data"}, {"127.0.0.2", "data"}, {"127.0.0.2", "error"}, // per client
		{"127.0.0.3", "data"}, {"127.0.0.3", "data"}, {"127.0.0.3", "error"},
		{"127.0.0.4", "error"}, // the server is full
	}
	var open []*rawClient
	for i, tt := range tests {
		c := newRawClient(t, tt.client)
		c.rrq(addr, "vmlinuz", "octet")
		p, ok := c.read(3 * time.Second)
		got := map[uint16]string{opDATA: "data", opERROR: "error"}[p.op]
		if !ok || got != tt.want {
			t.Errorf("request %d from %s: got %q (op %d %q), want %s", i+1, tt.client, got, p.op, p.msg, tt.want)
		}
		if got == "data" {
			open = append(open, c)
		}
	}
	// A transfer that ends frees its place.
	open[0].close()
	time.Sleep(100 * time.Millisecond)
	c := newRawClient(t, "127.0.0.4")
	c.rrq(addr, "vmlinuz", "octet")
	if _, data, _, msg := c.receive(); msg != "" || len(data) != 64<<10 {
		t.Errorf("after a transfer ended: %d bytes, error %q; want the file", len(data), msg)
	}
}

// serveTFTP runs srv on loopback until the test ends.
func serveTFTP(t *testing.T, srv *TFTP) string {
	t.Helper()
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { srv.Serve(conn); close(done) }()
	t.Cleanup(func() {
		stopped := make(chan struct{})
		go func() { srv.Shutdown(); <-done; close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(15 * time.Second):
			t.Error("TFTP Shutdown did not return")
		}
	})
	return conn.LocalAddr().String()
}

// TestTFTPModesAndOptions: transfer modes and option names are
// case-insensitive (RFC 1350 section 5, RFC 2347), a netascii transfer
// converts line ends and its tsize counts the bytes actually sent (RFC
// 2349), and a mode the server does not serve is refused.
func TestTFTPModesAndOptions(t *testing.T) {
	text := []byte(strings.Repeat("line\r\nbare\n", 200) + "end\r")
	var ascii []byte // RFC 1350 netascii: LF -> CR LF, CR -> CR NUL
	for _, b := range text {
		switch b {
		case '\n':
			ascii = append(ascii, '\r', '\n')
		case '\r':
			ascii = append(ascii, '\r', 0)
		default:
			ascii = append(ascii, b)
		}
	}
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "notes.txt"), text, 0o644)
	addr := serveTFTP(t, mustTFTP(t, root))

	tests := []struct {
		name    string
		mode    string
		opts    []string
		want    []byte
		wantOpt map[string]string // acknowledged, names compared case-insensitively
		block   int
		wantErr bool
	}{
		{name: "octet with tsize", mode: "octet", opts: []string{"tsize", "0"}, want: text, wantOpt: map[string]string{"tsize": fmt.Sprint(len(text))}, block: 512},
		{name: "netascii with tsize", mode: "netascii", opts: []string{"tsize", "0"}, want: ascii, wantOpt: map[string]string{"tsize": fmt.Sprint(len(ascii))}, block: 512},
		{name: "NETASCII", mode: "NETASCII", opts: []string{"tsize", "0"}, want: ascii, wantOpt: map[string]string{"tsize": fmt.Sprint(len(ascii))}, block: 512},
		{name: "BLKSIZE", mode: "OcTeT", opts: []string{"BLKSIZE", "1024"}, want: text, wantOpt: map[string]string{"blksize": "1024"}, block: 1024},
		{name: "TSIZE", mode: "octet", opts: []string{"TSIZE", "0"}, want: text, wantOpt: map[string]string{"tsize": fmt.Sprint(len(text))}, block: 512},
		{name: "blksize 1468", mode: "octet", opts: []string{"blksize", "1468"}, want: text, wantOpt: map[string]string{"blksize": "1468"}, block: 1468},
		{name: "mail", mode: "mail", wantErr: true},
		{name: "no such mode", mode: "binary", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newRawClient(t, "127.0.0.1")
			c.rrq(addr, "notes.txt", tt.mode, tt.opts...)
			opts, data, blocks, msg := c.receive()
			if tt.wantErr {
				if msg == "" {
					t.Fatalf("mode %q served (%d bytes), want an error", tt.mode, len(data))
				}
				return
			}
			if msg != "" {
				t.Fatalf("error %q", msg)
			}
			if !bytes.Equal(data, tt.want) {
				t.Errorf("got %d bytes, want %d (converted: %v)", len(data), len(tt.want), bytes.Equal(tt.want, ascii))
			}
			got := map[string]string{}
			for k, v := range opts {
				got[strings.ToLower(k)] = v
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.wantOpt) {
				t.Errorf("acknowledged %v, want %v", opts, tt.wantOpt)
			}
			if blocks[0] != tt.block {
				t.Errorf("blocks of %d bytes, want %d", blocks[0], tt.block)
			}
		})
	}
}

func mustTFTP(t *testing.T, root string) *TFTP {
	t.Helper()
	srv, err := NewTFTP(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestTFTPEventsSafeToShow: a client chooses the file name and the text of
// an ERROR it sends; the events carry both to the operator's terminal, so
// they must hold no control characters (NUL, escape sequences) and a name
// that is not plain must be quoted.
func TestTFTPEventsSafeToShow(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "vmlinuz"), make([]byte, 4096), 0o644)
	events := make(chan Event, 16)
	srv, err := NewTFTP(root, func(e Event) { events <- e })
	if err != nil {
		t.Fatal(err)
	}
	addr := serveTFTP(t, srv)
	next := func() Event {
		select {
		case e := <-events:
			return e
		case <-time.After(3 * time.Second):
			t.Fatal("no event")
		}
		return Event{}
	}

	tests := []struct{ name, want string }{
		{"vmlinuz", "vmlinuz"},
		{"/vmlinuz", "vmlinuz"}, // the name resolved, as the file served
		{"\x1b[2J\x1b]0;owned\x07", `"\x1b[2J\x1b]0;owned\a"`},
		{"boot file", `"boot file"`},
	}
	for _, tt := range tests {
		c := newRawClient(t, "127.0.0.1")
		c.rrq(addr, tt.name, "octet")
		c.receive()
		if e := next(); e.File != tt.want {
			t.Errorf("request for %q: event names %q, want %q", tt.name, e.File, tt.want)
		}
	}

	// The client aborts with an error message of its own.
	c := newRawClient(t, "127.0.0.1")
	c.rrq(addr, "vmlinuz", "octet")
	c.read(3 * time.Second)
	c.abort("\x1b[31mred\x00")
	e := next()
	if e.Err == nil || strings.ContainsFunc(e.Err.Error(), unsafeRune) {
		t.Errorf("event error %q: want the client's message escaped", e.Err)
	}
}

// unsafeRune is what must not reach a terminal from a client.
func unsafeRune(r rune) bool { return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 }

// TestTFTPShutdownEndsTransfers: Shutdown does not wait for a slow client
// to fetch a whole file: the transfer ends with an error at its next block.
func TestTFTPShutdownEndsTransfers(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "vmlinuz"), make([]byte, 1<<20), 0o644)
	events := make(chan Event, 4)
	srv, err := NewTFTP(root, func(e Event) { events <- e })
	if err != nil {
		t.Fatal(err)
	}
	conn, _ := net.ListenPacket("udp4", "127.0.0.1:0")
	served := make(chan struct{})
	go func() { srv.Serve(conn); close(served) }()

	c := newRawClient(t, "127.0.0.1")
	c.rrq(conn.LocalAddr().String(), "vmlinuz", "octet")
	stopped := make(chan struct{})
	var last packet
	for i := 0; ; i++ {
		p, ok := c.read(3 * time.Second)
		if !ok {
			t.Fatal("the server went silent instead of ending the transfer")
		}
		if last = p; p.op != opDATA {
			break
		}
		if i == 5 {
			go func() { srv.Shutdown(); <-served; close(stopped) }()
		}
		time.Sleep(20 * time.Millisecond) // a slow board: 2048 blocks take 40 s
		c.ack(p.block)
	}
	if last.op != opERROR {
		t.Errorf("transfer ended with op %d, want an ERROR", last.op)
	}
	select {
	case <-stopped:
	case <-time.After(3 * time.Second):
		t.Fatal("Shutdown waits for the slow transfer to finish")
	}
	if e := <-events; e.Kind != "tftp-error" {
		t.Errorf("event %+v, want tftp-error", e)
	}
}

// TestTFTPCutsSlowTransfers: a client that acknowledges each block just
// within the retry timeout cannot hold its slot for longer than the
// transfer's size allows at the floor rate; the event says who was cut. A
// client at full speed gets the same file.
func TestTFTPCutsSlowTransfers(t *testing.T) {
	root := t.TempDir()
	const size = 64 << 10 // 128 blocks: 19 s at one ACK every 150 ms
	os.WriteFile(filepath.Join(root, "vmlinuz"), make([]byte, size), 0o644)
	var mu sync.Mutex
	var events []Event
	srv, err := NewTFTP(root, func(e Event) { mu.Lock(); events = append(events, e); mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	srv.floorRate, srv.grace = 64<<10, 300*time.Millisecond // a limit of 1.3 s
	addr := serveTFTP(t, srv)

	fast := newRawClient(t, "127.0.0.1")
	fast.rrq(addr, "vmlinuz", "octet")
	if _, data, _, msg := fast.receive(); msg != "" || len(data) != size {
		t.Fatalf("a client at full speed: %d bytes, error %q; want the file", len(data), msg)
	}

	slow := newRawClient(t, "127.0.0.5")
	slow.rrq(addr, "vmlinuz", "octet")
	start := time.Now()
	blocks := 0
	for {
		p, ok := slow.read(3 * time.Second)
		if !ok {
			t.Fatalf("no answer after %d blocks", blocks)
		}
		if p.op == opERROR {
			if !strings.Contains(p.msg, "too slow") {
				t.Errorf("the slow client was told %q", p.msg)
			}
			break
		}
		if p.op == opDATA && int(p.block) == blocks+1 {
			blocks++
			time.Sleep(150 * time.Millisecond)
			slow.ack(p.block)
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the slow transfer still runs after %v and %d blocks", time.Since(start), blocks)
		}
	}
	if d := time.Since(start); d > 3*time.Second || blocks*512 >= size {
		t.Errorf("cut after %v and %d blocks, want about 1.3 s and part of the file", d, blocks)
	}
	// The server reports the cut once its sender has returned, which may
	// be a moment after the client read the ERROR.
	var last Event
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		last = events[len(events)-1]
		mu.Unlock()
		if last.IP.String() == "127.0.0.5" {
			break
		}
	}
	if last.Kind != "tftp-error" || last.IP.String() != "127.0.0.5" || !strings.Contains(fmt.Sprint(last.Err), "too slow") {
		t.Errorf("event %+v, want a tftp-error naming 127.0.0.5 as cut", last)
	}
	t.Logf("event: %s %v", last.IP, last.Err)
}

// TestTFTPShutdownEndsStalledTransfers: a client that went silent in the
// middle of a transfer does not hold Shutdown for all its retries (8 s):
// the transfer gives up at its next retry, told "shutting down".
func TestTFTPShutdownEndsStalledTransfers(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "vmlinuz"), make([]byte, 1<<20), 0o644)
	srv := mustTFTP(t, root)
	conn, _ := net.ListenPacket("udp4", "127.0.0.1:0")
	served := make(chan struct{})
	go func() { srv.Serve(conn); close(served) }()
	c := newRawClient(t, "127.0.0.1")
	c.rrq(conn.LocalAddr().String(), "vmlinuz", "octet")
	if p, ok := c.read(3 * time.Second); !ok || p.op != opDATA {
		t.Fatalf("first answer %+v, want DATA", p)
	}
	// ... and never an ACK.
	start := time.Now()
	stopped := make(chan struct{})
	go func() { srv.Shutdown(); <-served; close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown still waits for a silent client after 5 s")
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("Shutdown took %v with a silent client, want at most one retry timeout (1 s)", d.Round(time.Millisecond))
	}
	var last packet
	for p, ok := c.read(time.Second); ok; p, ok = c.read(100 * time.Millisecond) {
		last = p
	}
	if last.op != opERROR || !strings.Contains(last.msg, "shutting down") {
		t.Errorf("last packet %+v, want an ERROR saying the server is shutting down", last)
	}
}

// TestTFTPStraysNeitherAdvanceNorDelay: datagrams to a transfer's port
// from another port (a stale client, a scan) are ignored: an ACK from
// there does not move the transfer on, and a stream of them does not put
// off the resend that the client's silence is owed, one timeout (1 s)
// after the block went out.
func TestTFTPStraysNeitherAdvanceNorDelay(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "vmlinuz"), make([]byte, 4096), 0o644)
	srv := mustTFTP(t, root)
	conn, _ := net.ListenPacket("udp4", "127.0.0.1:0")
	go srv.Serve(conn)
	t.Cleanup(srv.Shutdown)
	c := newRawClient(t, "127.0.0.1")
	c.rrq(conn.LocalAddr().String(), "vmlinuz", "octet")
	first, ok := c.read(3 * time.Second)
	if !ok || first.op != opDATA || first.block != 1 {
		t.Fatalf("first answer %+v, want DATA 1", first)
	}
	sent := time.Now()
	stray := newRawClient(t, "127.0.0.1")
	stray.peer = c.peer
	done := make(chan struct{})
	defer close(done)
	go func() {
		// Strays for 600 ms, then none: the wait after the last
		// is what is left of the timeout, not a whole one.
		for i := 0; i < 12; i++ {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
				stray.conn.WriteToUDP([]byte{0, opACK, 0, 1}, stray.peer)
			}
		}
	}()
	again, ok := c.read(3 * time.Second)
	waited := time.Since(sent)
	if !ok || again.op != opDATA || again.block != 1 {
		t.Fatalf("answer to silence %+v, want DATA 1 again", again)
	}
	if waited < 900*time.Millisecond || waited > 1300*time.Millisecond {
		t.Errorf("DATA 1 came again after %v with strays arriving, want the 1 s timeout", waited.Round(time.Millisecond))
	}
	c.ack(1)
	if p, ok := c.read(3 * time.Second); !ok || p.op != opDATA || p.block != 2 {
		t.Errorf("after the client's ACK %+v, want DATA 2", p)
	}
}
