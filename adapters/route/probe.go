package route

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A Prober is a Router that can try its path through the board once,
// for a board whose readiness no frame reports (one under its own
// firmware).
type Prober interface {
	Probe(ctx context.Context) error
}

// probePort is the port a probe connects to on the server side: nothing
// listens there during a probe, and the refusal is the answer that the
// path forwards both ways.
const probePort = 9 // discard

// probeWait is how long one probe waits for an answer.
const probeWait = time.Second

// Probe tries the path from client to server once: a TCP connection from
// the client side's address to the server side's. A refusal or an
// accepted connection is an answer from the server's host, so the board
// forwarded both ways; silence, or the client's kernel finding no route,
// is an error saying which. This host may have no ping; a TCP probe
// needs nothing but the two namespaces.
func Probe(ctx context.Context, client, server Side) error {
	type result struct{ err error }
	done := make(chan result, 1)
	go func() {
		// The thread enters the client's namespace and is never
		// unlocked: it ends with the goroutine, namespace and all.
		runtime.LockOSThread()
		if err := enterNetns(client.Netns); err != nil {
			done <- result{err}
			return
		}
		done <- result{dialOnce(ctx, client.Addr, server.Addr)}
	}()
	return (<-done).err
}

// enterNetns moves this thread into the named network namespace ("" is
// this one).
func enterNetns(name string) error {
	if name == "" {
		return nil
	}
	f, err := os.Open(filepath.Join("/run/netns", name))
	if err != nil {
		return fmt.Errorf("probe: network namespace %s: %w", name, err)
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("probe: enter network namespace %s: %w", name, err)
	}
	return nil
}

func dialOnce(ctx context.Context, from, to string) error {
	d := net.Dialer{Timeout: probeWait, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	conn, err := d.DialContext(ctx, "tcp4", net.JoinHostPort(to, fmt.Sprint(probePort)))
	switch {
	case err == nil:
		conn.Close()
		return nil
	case errors.Is(err, syscall.ECONNREFUSED):
		return nil
	}
	return fmt.Errorf("no answer from %s to %s through the board: %w", from, to, err)
}
