package netboot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HTTP serves the same directory as the TFTP server to clients that can
// fetch over HTTP. iPXE can, and a kernel plus initramfs arrive several
// times faster over TCP than in TFTP's one-block-at-a-time lockstep.
type HTTP struct {
	files  Files
	close  func() error // what Shutdown releases besides the server
	srv    *http.Server
	report Reporter
	// idle ends a keep-alive connection nobody uses; stall ends a
	// download whose client stopped reading; grace is how long Shutdown
	// lets transfers in flight finish before it cuts them.
	idle, stall, grace time.Duration

	mu       sync.Mutex
	closing  bool
	handlers sync.WaitGroup // requests being answered
}

// NewHTTP serves the files under dir, read-only (see Dir).
func NewHTTP(dir string, report Reporter) (*HTTP, error) {
	d, err := OpenDir(dir)
	if err != nil {
		return nil, err
	}
	h := NewHTTPFrom(d, report)
	h.close = d.Close
	return h, nil
}

// NewHTTPFrom serves what files holds (a Booter's boots), read-only.
func NewHTTPFrom(files Files, report Reporter) *HTTP {
	if report == nil {
		report = func(Event) {}
	}
	h := &HTTP{files: files, report: report, close: func() error { return nil },
		idle: 30 * time.Second, stall: 30 * time.Second, grace: time.Second}
	h.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	return h
}

// Serve answers requests on l until Shutdown.
func (h *HTTP) Serve(l net.Listener) error {
	// A board fetches its files back to back; a connection idle longer
	// than that is nobody's, and each one holds a descriptor.
	h.srv.IdleTimeout = h.idle
	err := h.srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops the server: it lets transfers in flight finish for a
// moment, then closes every connection, stalled downloads included, and
// returns once every request's handler has returned.
func (h *HTTP) Shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), h.grace)
	defer cancel()
	if h.srv.Shutdown(ctx) != nil {
		h.srv.Close()
	}
	h.mu.Lock()
	h.closing = true
	h.mu.Unlock()
	h.handlers.Wait()
	h.close()
}

// begin counts a request in, unless the server is closing.
func (h *HTTP) begin() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return false
	}
	h.handlers.Add(1)
	return true
}

// ServeHTTP answers GET and HEAD with a regular file under the root.
func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.begin() {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	defer h.handlers.Done()
	start := time.Now()
	name := strings.TrimLeft(r.URL.Path, "/")
	ev := Event{Kind: "http-done", File: shown(name)}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		ev.IP = net.ParseIP(host)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	f, size, err := h.files.Open(name)
	if err != nil {
		// Generic answers: never a host path in an error.
		http.Error(w, "not found", http.StatusNotFound)
		ev.Kind, ev.Err, ev.Time = "http-error", ErrNotFound, time.Now()
		h.report(ev)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.Header().Set("Content-Type", "application/octet-stream")
	var n int64
	if r.Method == http.MethodGet {
		n, err = h.send(w, f)
	}
	ev.Bytes, ev.Duration, ev.Time = n, time.Since(start), time.Now()
	if err != nil {
		ev.Kind, ev.Err = "http-error", shownErr(err)
	}
	h.report(ev)
}

// send copies f to the client. Each write must finish within the stall
// time: a client that stopped reading would otherwise hold the handler,
// the file and the connection for good. A slow board that keeps reading is
// never cut. (net/http lifts the deadline once the answer is done.)
func (h *HTTP) send(w http.ResponseWriter, f io.Reader) (int64, error) {
	rc := http.NewResponseController(w)
	buf := make([]byte, 64<<10)
	var n int64
	for {
		m, rerr := f.Read(buf)
		if m > 0 {
			if err := rc.SetWriteDeadline(time.Now().Add(h.stall)); err != nil {
				return n, fmt.Errorf("set write deadline: %w", err)
			}
			k, err := w.Write(buf[:m])
			n += int64(k)
			if err != nil {
				return n, fmt.Errorf("send: %w", err)
			}
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, fmt.Errorf("read: %w", rerr)
		}
	}
}
