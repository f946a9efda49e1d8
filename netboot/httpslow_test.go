package netboot

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dialFrom opens a connection to the server at base from local (an address
// on loopback, so a test can be several clients).
func dialFrom(t *testing.T, base, local string) (net.Conn, error) {
	t.Helper()
	host := strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/")
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 3 * time.Second}
	c, err := d.Dial("tcp", host)
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

// closedWithin reports whether the server closed c within d, reading and
// dropping whatever it sent first.
func closedWithin(c net.Conn, d time.Duration) (bool, string) {
	c.SetReadDeadline(time.Now().Add(d))
	b, err := io.ReadAll(io.LimitReader(c, 1<<20))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false, string(b)
	}
	first, _, _ := strings.Cut(string(b), "\r\n")
	return true, first
}

// TestHTTPSlowClients: no client holds a connection, its descriptor and
// its handler for longer than its request's deadlines: a body declared and
// never sent, a header that never ends, a connection that never asks.
func TestHTTPSlowClients(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "boot.ipxe"), []byte("#!ipxe\n"), 0o644)
	base := startHTTP(t, root, nil, func(h *HTTP) { h.header, h.request = 300*time.Millisecond, 500*time.Millisecond })
	tests := []struct {
		name    string
		send    string
		trickle bool   // then one more header byte every 100 ms
		status  string // the answer's first line, "" for none
	}{
		{"GET declares a body and sends none", "GET /boot.ipxe HTTP/1.1\r\nHost: b\r\nContent-Length: 10\r\n\r\n", false, "HTTP/1.1 400 Bad Request"},
		{"POST declares a body and sends none", "POST /boot.ipxe HTTP/1.1\r\nHost: b\r\nContent-Length: 10\r\n\r\n", false, "HTTP/1.1 400 Bad Request"},
		{"a chunked body that never ends", "GET /boot.ipxe HTTP/1.1\r\nHost: b\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", false, "HTTP/1.1 400 Bad Request"},
		{"a connection that never asks", "", false, ""},
		{"half a header", "GET /boot.ipxe HTTP/1.1\r\nHost: b\r\n", false, ""},
		{"a header trickled forever", "GET /boot.ipxe HTTP/1.1\r\nX-Slow: ", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := dialFrom(t, base, "127.0.0.1")
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(c, tt.send)
			if tt.trickle {
				go func() {
					for i := 0; i < 50; i++ {
						time.Sleep(100 * time.Millisecond)
						if _, err := c.Write([]byte("x")); err != nil {
							return
						}
					}
				}()
			}
			start := time.Now()
			closed, first := closedWithin(c, 3*time.Second)
			if !closed {
				t.Fatalf("the connection is still open after %v", time.Since(start).Round(time.Millisecond))
			}
			if tt.status != "" && first != tt.status {
				t.Errorf("answer %q, want %q", first, tt.status)
			}
		})
	}
}

// TestHTTPCutsTrickleReader: a client that keeps reading, but at a trickle,
// does not escape the stall time: its answer's own deadline (its size at
// the floor rate) cuts it.
func TestHTTPCutsTrickleReader(t *testing.T) {
	root := t.TempDir()
	size := bigFile(t, root, "vmlinuz")
	events := make(chan Event, 4)
	base := startHTTP(t, root, func(e Event) { events <- e }, func(h *HTTP) {
		h.answerGrace, h.floorRate = 300*time.Millisecond, 1<<30 // an answer time of 0.55 s
	})
	c := get(t, base, "vmlinuz")
	start := time.Now()
	var n int64
	buf := make([]byte, 16<<10)
	read := func() error {
		c.SetReadDeadline(time.Now().Add(time.Second))
		k, err := c.Read(buf)
		n += int64(k)
		return err
	}
	var cut Event
	for cut.Kind == "" {
		select {
		case cut = <-events:
		default:
			if err := read(); err != nil || time.Since(start) > 10*time.Second {
				t.Fatalf("read %d of %d bytes in %v, then %v; want the answer cut after about 0.55 s", n, size, time.Since(start).Round(time.Millisecond), err)
			}
			time.Sleep(20 * time.Millisecond) // some 800 KiB/s: every write within the stall time
		}
	}
	if d := time.Since(start); d > 3*time.Second || cut.Kind != "http-error" || !errors.Is(cut.Err, errSlowClient) {
		t.Errorf("after %v: event %+v, want an http-error saying the download was too slow after about 0.55 s", d.Round(time.Millisecond), cut)
	}
	t.Logf("event: %s %v", cut.IP, cut.Err)
	// What was in flight still comes, then the end: the connection is closed.
	if got, closed := drain(c, 5*time.Second); !closed || n+got >= size {
		t.Errorf("client read %d of %d bytes, closed %v: want the connection cut", n+got, size, closed)
	}
}

// TestHTTPCapsConnections: a client cannot hold more than its share of
// connections (one more gets a 503 at once); when the server is full, a
// newcomer takes the place of the connection idle longest, and gets a 503
// only when every connection is busy with a request.
func TestHTTPCapsConnections(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "boot.ipxe"), []byte("#!ipxe\n"), 0o644)
	bigFile(t, root, "vmlinuz")
	base := startHTTP(t, root, nil, func(h *HTTP) { h.maxConns, h.maxPerClient = 4, 2 })
	const busy = "HTTP/1.1 503 Service Unavailable"
	state := func(c net.Conn) string {
		if closed, first := closedWithin(c, 300*time.Millisecond); closed {
			if first == "" {
				return "closed"
			}
			return first
		}
		return "open"
	}
	dial := func(client string) net.Conn {
		c, err := dialFrom(t, base, client)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	var idle []net.Conn
	for i, tt := range []struct{ client, want string }{
		{"127.0.0.2", "open"}, {"127.0.0.2", "open"}, {"127.0.0.2", busy}, // its own cap
		{"127.0.0.3", "open"}, {"127.0.0.3", "open"}, // the server is full
	} {
		c := dial(tt.client)
		if got := state(c); got != tt.want {
			t.Errorf("connection %d from %s: %q, want %q", i+1, tt.client, got, tt.want)
		}
		if tt.want == "open" {
			idle = append(idle, c)
		}
	}
	// A board: it takes the place of the connection idle longest.
	board := dial("127.0.0.4")
	host := strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/")
	fmt.Fprintf(board, "GET /boot.ipxe HTTP/1.1\r\nHost: %s\r\n\r\n", host)
	board.SetReadDeadline(time.Now().Add(3 * time.Second))
	if resp, err := http.ReadResponse(bufio.NewReader(board), nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("a board with the server full of idle connections: %v %v, want the file", resp, err)
	}
	if got := state(idle[0]); got != "closed" {
		t.Errorf("the connection idle longest: %q, want closed for the board", got)
	}
	for _, c := range idle[1:] {
		if got := state(c); got != "open" {
			t.Errorf("a younger idle connection: %q, want open", got)
		}
	}
	// Every place busy with a request (downloads nobody reads): a newcomer
	// gets a 503.
	for _, c := range idle[1:] {
		c.Close()
	}
	board.Close()
	time.Sleep(100 * time.Millisecond)
	for _, client := range []string{"127.0.0.5", "127.0.0.6", "127.0.0.7", "127.0.0.8"} {
		get := dial(client)
		fmt.Fprintf(get, "GET /vmlinuz HTTP/1.1\r\nHost: %s\r\n\r\n", host)
	}
	time.Sleep(200 * time.Millisecond)
	if got := state(dial("127.0.0.9")); got != busy {
		t.Errorf("with every connection busy: %q, want %q", got, busy)
	}
}
