package benchpage

import (
	"net/http"
	"time"
)

// subscriberBuffer is how many events a stream may fall behind before it
// is dropped: a boot's burst of console lines fits.
const subscriberBuffer = 1024

// subscriber is one page's stream.
type subscriber struct {
	ch   chan []byte
	gone chan struct{} // closed when the stream is dropped
}

// subscribe registers a stream and returns it with the snapshot it
// starts from; no event is lost between the two.
func (p *Page) subscribe() (*subscriber, []byte, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.subs) >= p.maxClients {
		return nil, nil, false
	}
	snap, err := encode("snapshot", p.snapshotLocked())
	if err != nil {
		return nil, nil, false
	}
	s := &subscriber{ch: make(chan []byte, subscriberBuffer), gone: make(chan struct{})}
	p.subs[s] = struct{}{}
	return s, snap, true
}

func (p *Page) unsubscribe(s *subscriber) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropLocked(s)
}

// dropLocked ends a stream; p.mu is held.
func (p *Page) dropLocked(s *subscriber) {
	if _, ok := p.subs[s]; ok {
		delete(p.subs, s)
		close(s.gone)
	}
}

// serveEvents is the page's one stream: a snapshot, then every change,
// with a heartbeat comment while nothing changes.
func (p *Page) serveEvents(w http.ResponseWriter, r *http.Request) {
	s, snap, ok := p.subscribe()
	if !ok {
		http.Error(w, "too many open pages, or serve is stopping", http.StatusServiceUnavailable)
		return
	}
	defer p.unsubscribe(s)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // a proxy in front must not hold events back
	rc := http.NewResponseController(w)
	send := func(b []byte) bool {
		rc.SetWriteDeadline(time.Now().Add(p.writeTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	// retry: how soon the browser reconnects after a drop or a restart.
	if !send(append([]byte("retry: 2000\n\n"), snap...)) {
		return
	}
	beat := time.NewTicker(p.heartbeat)
	defer beat.Stop()
	for {
		select {
		case m := <-s.ch:
			if !send(drain(m, s.ch)) {
				return
			}
		case <-beat.C:
			if !send([]byte(": heartbeat\n\n")) {
				return
			}
		case <-s.gone:
			return
		case <-r.Context().Done():
			return
		case <-p.quit:
			send(drain(nil, s.ch))
			return
		}
	}
}

// drain is m and every event waiting after it, for one write. The events
// are shared by every stream: they are copied, never appended to.
func drain(m []byte, ch chan []byte) []byte {
	buf := append([]byte(nil), m...)
	for {
		select {
		case more := <-ch:
			buf = append(buf, more...)
		default:
			return buf
		}
	}
}
