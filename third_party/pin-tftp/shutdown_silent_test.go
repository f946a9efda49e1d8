package tftp

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestShutdownEndsSilentTransfer: Shutdown does not wait through all the
// retries of a transfer whose client went silent. The transfer gives up
// at its next timeout and tells the client the server is shutting down.
func TestShutdownEndsSilentTransfer(t *testing.T) {
	s := NewServer(func(_ string, rf io.ReaderFrom) error {
		_, err := rf.ReadFrom(bytes.NewReader(make([]byte, 1<<20)))
		return err
	}, nil)
	s.SetTimeout(200 * time.Millisecond)
	s.SetRetries(20) // 4 s of retries
	s.SetBackoff(func(int) time.Duration { return 0 })
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(conn) }()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.WriteToUDP([]byte("\x00\x01file\x00octet\x00"), conn.LocalAddr().(*net.UDPAddr))
	buf := make([]byte, 1024)
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if n, _, err := c.ReadFromUDP(buf); err != nil || n < 4 || buf[1] != byte(opDATA) {
		t.Fatalf("first answer %q (%v), want DATA", buf[:n], err)
	}
	// ... and never an ACK.
	start := time.Now()
	stopped := make(chan struct{})
	go func() { s.Shutdown(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(3 * time.Second):
		t.Fatal("Shutdown still waits for a silent client after 3 s")
	}
	// One timeout (200 ms), and room for a loaded host; all the retries
	// would take 4 s.
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Shutdown took %v with a silent client, want about one timeout (200 ms)", d)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	var last string
	for {
		c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		n, _, err := c.ReadFromUDP(buf)
		if err != nil {
			break
		}
		last = string(buf[:n])
	}
	if !strings.HasPrefix(last, "\x00\x05") || !strings.Contains(last, ErrServerShutdown.Error()) {
		t.Errorf("last packet %q, want an ERROR saying %q", last, ErrServerShutdown)
	}
}
