package benchpage

import (
	"bytes"
	"embed"
	"io/fs"
	"net/http"

	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/export"
)

// assets are the page itself: plain HTML, CSS and script, no build step.
//
//go:embed assets
var assets embed.FS

// Handler serves the page: / (the page and its files), /events (its
// stream) and /history?board=NAME (the board's runs as the HTML report).
// It only reads: every other method is refused.
func (p *Page) Handler() http.Handler {
	files, _ := fs.Sub(assets, "assets")
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServerFS(files))
	mux.HandleFunc("GET /events", p.serveEvents)
	mux.HandleFunc("GET /history", p.serveHistory)
	return readOnly(mux)
}

// readOnly refuses every method but GET and HEAD, and keeps the page's
// own pages to what it serves.
func readOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "the bench page is read-only", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'self'")
		next.ServeHTTP(w, r)
	})
}

// serveHistory is one board's stored runs, drawn by the HTML report.
func (p *Page) serveHistory(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("board")
	p.mu.Lock()
	_, served := p.boards[name]
	p.mu.Unlock()
	if !served || p.store == nil {
		http.Error(w, "no such board on this bench", http.StatusNotFound)
		return
	}
	runs, err := p.store.Runs(r.Context(), results.Filter{Board: name})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := export.WriteHTML(&buf, runs); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(buf.Bytes())
}
