package netboot

import (
	"net"
	"sync"
	"time"
)

// capListener admits connections within the HTTP server's caps, in all
// and from one client address: each holds a descriptor, and before the
// caps 500 connections took serve from 23 to 513. A connection over a cap
// gets a 503 and is closed at once, as a TFTP transfer over its caps gets
// "busy".
type capListener struct {
	net.Listener
	max, perClient int

	mu     sync.Mutex
	total  int
	active map[string]int // connections open by client address
}

func newCapListener(l net.Listener, max, perClient int) *capListener {
	return &capListener{Listener: l, max: max, perClient: perClient, active: map[string]int{}}
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
		if l.admit(client) {
			return &countedConn{Conn: c, release: func() { l.release(client) }}, nil
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

func (l *capListener) admit(client string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total >= l.max || l.active[client] >= l.perClient {
		return false
	}
	l.total++
	l.active[client]++
	return true
}

func (l *capListener) release(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.active[client]--; l.active[client] <= 0 {
		delete(l.active, client)
	}
}

// open is how many connections are admitted and not yet closed.
func (l *capListener) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
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
