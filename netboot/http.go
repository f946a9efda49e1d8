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
	// Every request has deadlines: header for its header to arrive,
	// request for the whole of it (a body is never read: it is refused),
	// and its answer, once the file is known, answerGrace plus the file's
	// size at floorRate (bytes a second), as a TFTP transfer has.
	header, request, answerGrace time.Duration
	floorRate                    int64
	// maxConns and maxPerClient cap the connections open, in all and from
	// one client address.
	maxConns, maxPerClient int
	conns                  *capListener // once serving

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
		idle: 30 * time.Second, stall: 30 * time.Second, grace: time.Second,
		header: 10 * time.Second, request: 15 * time.Second, answerGrace: 30 * time.Second,
		floorRate: slowestBoard, maxConns: 128, maxPerClient: 8}
	h.srv = &http.Server{Handler: h}
	return h
}

// Serve answers requests on l until Shutdown.
func (h *HTTP) Serve(l net.Listener) error {
	// A board fetches its files back to back; a connection idle longer
	// than that is nobody's, and each one holds a descriptor.
	h.srv.IdleTimeout = h.idle
	h.srv.ReadHeaderTimeout, h.srv.ReadTimeout = h.header, h.request
	h.mu.Lock()
	h.conns = newCapListener(l, h.maxConns, h.maxPerClient)
	h.mu.Unlock()
	h.srv.ConnState = h.conns.track
	err := h.srv.Serve(h.conns)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// openConns is how many connections the server holds open.
func (h *HTTP) openConns() int {
	h.mu.Lock()
	c := h.conns
	h.mu.Unlock()
	if c == nil {
		return 0
	}
	return c.open()
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
	if r.ContentLength != 0 {
		// Nothing here takes a body. Left unread, net/http would wait for
		// it after the answer (up to 256 KiB of it, until the request's
		// deadline): the read deadline now and closing the connection
		// spare it that.
		w.Header().Set("Connection", "close")
		http.Error(w, "a request with a body", http.StatusBadRequest)
		http.NewResponseController(w).SetReadDeadline(time.Now())
		ev.Kind, ev.Err, ev.Time = "http-error", errBody, time.Now()
		h.report(ev)
		return
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
		n, err = h.send(w, f, size, start)
	}
	ev.Bytes, ev.Duration, ev.Time = n, time.Since(start), time.Now()
	if err != nil {
		ev.Kind, ev.Err = "http-error", shownErr(err)
	}
	h.report(ev)
}

// errBody and errSlowClient are what an event says of a request refused
// for its body and of an answer cut for its time.
var (
	errBody       = errors.New("request with a body refused")
	errSlowClient = errors.New("download too slow, cut")
)

// answerTime is how long the answer of a file of size bytes may take.
func (h *HTTP) answerTime(size int64) time.Duration {
	return h.answerGrace + time.Duration(size)*time.Second/time.Duration(h.floorRate)
}

// send copies f (size bytes) to the client, the request having started
// at start. The whole answer must be sent within its answer time, and each
// write within the stall time: a client that stopped reading would
// otherwise hold the handler, the file and the connection until the answer
// time is up, and one reading a trickle for good. (net/http lifts the
// deadline once the answer is done.)
func (h *HTTP) send(w http.ResponseWriter, f io.Reader, size int64, start time.Time) (int64, error) {
	rc := http.NewResponseController(w)
	deadline := start.Add(h.answerTime(size))
	tooSlow := func(n int64) error {
		return fmt.Errorf("%w after %s: %d of %d bytes sent, below %d KiB/s", errSlowClient, time.Since(start).Round(time.Millisecond), n, size, h.floorRate>>10)
	}
	buf := make([]byte, 64<<10)
	var n int64
	for {
		m, rerr := f.Read(buf)
		if m > 0 {
			wd := time.Now().Add(h.stall)
			if deadline.Before(wd) {
				wd = deadline
			}
			if err := rc.SetWriteDeadline(wd); err != nil {
				return n, fmt.Errorf("set write deadline: %w", err)
			}
			k, err := w.Write(buf[:m])
			n += int64(k)
			if err != nil && !time.Now().Before(deadline) {
				return n, tooSlow(n)
			}
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
