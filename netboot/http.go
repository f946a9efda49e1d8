package netboot

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
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
	h := &HTTP{files: files, report: report, close: func() error { return nil }}
	h.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	return h
}

// Serve answers requests on l until Shutdown.
func (h *HTTP) Serve(l net.Listener) error {
	err := h.srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops the server, waiting briefly for transfers in flight.
func (h *HTTP) Shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.srv.Shutdown(ctx)
	h.close()
}

func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	name := strings.TrimLeft(r.URL.Path, "/")
	ev := Event{Kind: "http-done", File: name}
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
		n, err = io.Copy(w, f)
	}
	ev.Bytes, ev.Duration, ev.Time = n, time.Since(start), time.Now()
	if err != nil {
		ev.Kind, ev.Err = "http-error", err
	}
	h.report(ev)
}
