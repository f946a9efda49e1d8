package netboot

import (
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
	base := startHTTP(t, root, nil)
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

// startHTTP serves root on loopback until the test ends.
func startHTTP(t *testing.T, root string, report Reporter) string {
	t.Helper()
	h, err := NewHTTP(root, report)
	if err != nil {
		t.Fatal(err)
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
