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

	"golang.org/x/sys/unix"
)

func TestHTTPServesAndConfines(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("host file"), 0o600)
	root := filepath.Join(outside, "root")
	os.MkdirAll(root, 0o755)
	os.WriteFile(filepath.Join(root, "vmlinuz"), []byte("kernel bytes"), 0o644)
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "link"))

	events := make(chan Event, 16)
	h, err := NewHTTP(root, func(e Event) { events <- e })
	if err != nil {
		t.Fatal(err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	go h.Serve(l)
	defer h.Shutdown()
	base := "http://" + l.Addr().String() + "/"

	resp, err := http.Get(base + "vmlinuz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "kernel bytes" || resp.ContentLength != 12 {
		t.Fatalf("GET vmlinuz: %d %q len %d", resp.StatusCode, body, resp.ContentLength)
	}
	for _, p := range []string{"../secret", "%2e%2e/secret", "link", "", "nothere"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 || strings.Contains(string(body), "host file") || strings.Contains(string(body), outside) {
			t.Errorf("GET %q: %d %q", p, resp.StatusCode, body)
		}
	}
	if first := <-events; first.Kind != "http-done" || first.Bytes != 12 || first.File != "vmlinuz" {
		t.Errorf("first event %+v", first)
	}
}

// TestHTTPNonRegularFiles: a FIFO in the served tree is refused at once,
// not opened (which blocks until a writer comes).
func TestHTTPNonRegularFiles(t *testing.T) {
	root := t.TempDir()
	if err := unix.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink("fifo", filepath.Join(root, "to-fifo"))
	base := startHTTP(t, root, nil, nil)
	client := &http.Client{Timeout: 3 * time.Second}
	for _, name := range []string{"fifo", "to-fifo"} {
		resp, err := client.Get(base + name)
		if err != nil {
			t.Errorf("GET %s: %v, want 404 at once", name, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", name, resp.StatusCode)
		}
	}
}

// startHTTP serves root on loopback until the test ends; adjust, if not
// nil, changes the server before it starts.
func startHTTP(t *testing.T, root string, report Reporter, adjust func(*HTTP)) string {
	t.Helper()
	h, err := NewHTTP(root, report)
	if err != nil {
		t.Fatal(err)
	}
	if adjust != nil {
		adjust(h)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { h.Serve(l); close(served) }()
	t.Cleanup(func() {
		stopped := make(chan struct{})
		go func() { h.Shutdown(); <-served; close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(10 * time.Second):
			t.Error("HTTP Shutdown did not return")
		}
	})
	return "http://" + l.Addr().String() + "/"
}

// bigFile makes a sparse file far larger than the loopback socket buffers,
// so a server writing it to a client that does not read blocks.
func bigFile(t *testing.T, dir, name string) int64 {
	t.Helper()
	const size = 256 << 20
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return size
}

// get sends a keep-alive GET on a raw connection.
func get(t *testing.T, base, name string) net.Conn {
	t.Helper()
	host := strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/")
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET /%s HTTP/1.1\r\nHost: %s\r\n\r\n", name, host)
	return c
}

// drain reads c to its end, for at most d; it says how many bytes came
// and whether the server closed the connection.
func drain(c net.Conn, d time.Duration) (int64, bool) {
	c.SetReadDeadline(time.Now().Add(d))
	n, err := io.Copy(io.Discard, c)
	var ne net.Error
	return n, !(errors.As(err, &ne) && ne.Timeout())
}

func TestHTTPClosesIdleConnections(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "boot.ipxe"), []byte("#!ipxe\n"), 0o644)
	base := startHTTP(t, root, nil, func(h *HTTP) { h.idle = 300 * time.Millisecond })
	c := get(t, base, "boot.ipxe")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle keep-alive connection after %.1fs: %v, want closed by the server", time.Since(start).Seconds(), err)
	}
}

func TestHTTPDropsStalledDownload(t *testing.T) {
	root := t.TempDir()
	size := bigFile(t, root, "vmlinuz")
	events := make(chan Event, 4)
	base := startHTTP(t, root, func(e Event) { events <- e }, func(h *HTTP) { h.stall = 300 * time.Millisecond })
	c := get(t, base, "vmlinuz") // and never read
	select {
	case e := <-events:
		if e.Kind != "http-error" || e.Bytes >= size {
			t.Errorf("event %+v, want an http-error for the stalled download", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a download whose client stopped reading is still open after 5s")
	}
	if n, closed := drain(c, 5*time.Second); !closed || n >= size {
		t.Errorf("client read %d of %d bytes, closed %v: want the connection cut", n, size, closed)
	}
}

func TestHTTPShutdownEndsDownloads(t *testing.T) {
	root := t.TempDir()
	size := bigFile(t, root, "vmlinuz")
	events := make(chan Event, 4)
	h, err := NewHTTP(root, func(e Event) { events <- e })
	if err != nil {
		t.Fatal(err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	served := make(chan struct{})
	go func() { h.Serve(l); close(served) }()
	c := get(t, "http://"+l.Addr().String()+"/", "vmlinuz") // and never read
	time.Sleep(300 * time.Millisecond)                      // the handler is blocked writing

	start := time.Now()
	stopped := make(chan struct{})
	go func() { h.Shutdown(); <-served; close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return")
	}
	if d := time.Since(start); d > h.grace+time.Second {
		t.Errorf("Shutdown took %.1fs with a stalled download, want about %v", d.Seconds(), h.grace)
	}
	select {
	case e := <-events:
		if e.Kind != "http-error" {
			t.Errorf("event %+v, want http-error for the cut download", e)
		}
	default:
		t.Error("Shutdown returned before the download's handler reported")
	}
	if n, closed := drain(c, 5*time.Second); !closed || n >= size {
		t.Errorf("after Shutdown the client read %d of %d bytes, closed %v: want the connection cut", n, size, closed)
	}
}

// TestHTTPEventsSafeToShow: the path a client asks for reaches the
// operator's terminal in the event: quoted when it is not plain.
func TestHTTPEventsSafeToShow(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "vmlinuz"), []byte("kernel"), 0o644)
	events := make(chan Event, 16)
	base := startHTTP(t, root, func(e Event) { events <- e }, nil)
	tests := []struct{ path, want string }{
		{"vmlinuz", "vmlinuz"},
		{"%1b%5b2J%1b%5d0;owned%07", `"\x1b[2J\x1b]0;owned\a"`},
		{"nul%00here", `"nul\x00here"`},
	}
	for _, tt := range tests {
		resp, err := http.Get(base + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		select {
		case e := <-events:
			if e.File != tt.want {
				t.Errorf("GET /%s: event names %q, want %q", tt.path, e.File, tt.want)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("GET /%s: no event", tt.path)
		}
	}
}
