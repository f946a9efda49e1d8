package netboot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// HTTP serves the same directory as the TFTP server to clients that can
// fetch over HTTP. iPXE can, and a kernel plus initramfs arrive several
// times faster over TCP than in TFTP's one-block-at-a-time lockstep.
type HTTP struct {
	root   *os.Root
	srv    *http.Server
	report Reporter
}

// NewHTTP serves the files under dir, read-only, confined with os.OpenRoot.
func NewHTTP(dir string, report Reporter) (*HTTP, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open HTTP root: %w", err)
	}
	if report == nil {
		report = func(Event) {}
	}
	h := &HTTP{root: root, report: report}
	h.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	return h, nil
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
	h.root.Close()
}

func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	name := strings.TrimLeft(r.URL.Path, "/")
	ev := Event{Kind: "http-done", File: name}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	f, st, err := openRegular(h.root, name)
	if err != nil {
		// Generic answers: never a host path in an error.
		http.Error(w, "not found", http.StatusNotFound)
		ev.Kind, ev.Err, ev.Time = "http-error", errNotFound, time.Now()
		h.report(ev)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Length", strconv.FormatInt(st.Size(), 10))
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
