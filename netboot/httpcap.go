package netboot

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// capListener admits connections within the HTTP server's caps, in all
// and from one client address: each holds a descriptor, and before the
// caps 500 connections took serve from 23 to 513. A client over its own
// cap gets a 503 and is closed at once, as a TFTP transfer over its caps
// gets "busy". When the server is full, a newcomer takes the place of the
// oldest connection that is doing nothing (it has not begun a request, or
// waits idle between two): a flood of silent connections from many
// addresses cannot lock out a board, which sends its request at once.
type capListener struct {
	net.Listener
	max, perClient int

	mu     sync.Mutex
	active map[string]int // connections open by client address
	conns  map[*countedConn]*connState
}

// connState is what the server knows of one open connection.
type connState struct {
	client string
	since  time.Time // when it began doing nothing
	idle   bool      // no request under way: new, or idle between two
}

func newCapListener(l net.Listener, max, perClient int) *capListener {
	return &capListener{Listener: l, max: max, perClient: perClient,
		active: map[string]int{}, conns: map[*countedConn]*connState{}}
}

// busyAnswer is all a connection over a cap gets.
const busyAnswer = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\nRetry-After: 5\r\n\r\n"

// Accept returns the next connection within the caps.
func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client := clientAddr(c)
		if victim := l.makeRoom(client); victim != nil {
			victim.Close()
		}
		if cc := l.admit(c, client); cc != nil {
			return cc, nil
		}
		// A fresh socket's send buffer is empty: the write does not wait,
		// and the deadline makes sure of it.
		c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		c.Write([]byte(busyAnswer))
		c.Close()
	}
}

func clientAddr(c net.Conn) string {
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	return host
}

// makeRoom picks, when the server is full and client is within its own
// cap, the connection to close for it: the one doing nothing longest.
func (l *capListener) makeRoom(client string) *countedConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.conns) < l.max || l.active[client] >= l.perClient {
		return nil
	}
	var victim *countedConn
	var since time.Time
	for c, st := range l.conns {
		if st.idle && (victim == nil || st.since.Before(since)) {
			victim, since = c, st.since
		}
	}
	return victim
}

// admit counts c in if the caps allow it.
func (l *capListener) admit(c net.Conn, client string) *countedConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.conns) >= l.max || l.active[client] >= l.perClient {
		return nil
	}
	cc := &countedConn{Conn: c}
	cc.release = func() { l.release(cc) }
	l.conns[cc] = &connState{client: client, since: time.Now(), idle: true}
	l.active[client]++
	return cc
}

func (l *capListener) release(cc *countedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.conns[cc]
	if st == nil {
		return
	}
	delete(l.conns, cc)
	if l.active[st.client]--; l.active[st.client] <= 0 {
		delete(l.active, st.client)
	}
}

// track follows what net/http does with each connection (its ConnState
// hook): only one with no request under way may give its place up.
func (l *capListener) track(c net.Conn, state http.ConnState) {
	cc, ok := c.(*countedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if st := l.conns[cc]; st != nil {
		idle := state == http.StateNew || state == http.StateIdle
		if idle && !st.idle {
			st.since = time.Now()
		}
		st.idle = idle
	}
}

// open is how many connections are admitted and not yet closed.
func (l *capListener) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// countedConn gives its place back when closed, once.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
