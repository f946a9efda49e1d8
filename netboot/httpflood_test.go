package netboot

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// floodEnv makes the test binary the flood of TestHTTPFloodOfSilentClients,
// in a process of its own, so that the descriptors counted in the test's
// process are the server's; floodSendEnv says what each connection sends.
const (
	floodEnv     = "NETBOOT_HTTP_FLOOD_TO"
	floodSendEnv = "NETBOOT_HTTP_FLOOD_SEND"
)

const (
	floodConns   = 500
	floodClients = 100 // source addresses 127.0.1.1 to 127.0.1.100
)

// TestHTTPFloodOfSilentClients: 500 connections from 100 addresses that
// each declare a body and send none, or send nothing at all, hold no more
// of the server's descriptors than its connection cap, none once their
// deadline has passed, and a board's download in the middle of them
// succeeds. (Before the deadlines and caps, 100 such requests took serve
// from 23 to 123 descriptors, still held 70 s later, and 500 plain
// connections to 513.)
func TestHTTPFloodOfSilentClients(t *testing.T) {
	if to := os.Getenv(floodEnv); to != "" {
		flood(to, os.Getenv(floodSendEnv))
		return
	}
	root := t.TempDir()
	kernel := make([]byte, 8<<20)
	for i := range kernel {
		kernel[i] = byte(i * 7)
	}
	os.WriteFile(filepath.Join(root, "vmlinuz"), kernel, 0o644)
	for _, send := range []string{"body", "nothing"} {
		t.Run(send, func(t *testing.T) { floodServer(t, root, kernel, send) })
	}
}

// floodServer serves root, floods it from another process, sending send,
// and fetches kernel amid the flood.
func floodServer(t *testing.T, root string, kernel []byte, send string) {
	var h *HTTP
	base := startHTTP(t, root, nil, func(s *HTTP) { h, s.header, s.request = s, time.Second, 2*time.Second })

	cmd := exec.Command(os.Args[0], "-test.run=^TestHTTPFloodOfSilentClients$")
	cmd.Env = []string{floodEnv + "=" + base[len("http://"):len(base)-1], floodSendEnv + "=" + send}
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close() // the flood ends when its input does
	lines := bufio.NewScanner(stdout)

	baseline := openFDs(t)
	var mu sync.Mutex
	peak := baseline
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if n := openFDs(t); n > peak {
				mu.Lock()
				peak = n
				mu.Unlock()
			}
			select {
			case <-stopSampling:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	fmt.Fprintln(stdin, "go")
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("the flood did not start: %q %v", lines.Text(), lines.Err())
	}
	// Every flood connection is open on the client's side: a board boots.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(base + "vmlinuz")
	if err != nil {
		t.Fatalf("a board's download amid the flood: %v", err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || string(got) != string(kernel) {
		t.Fatalf("a board's download amid the flood: %d, %d of %d bytes, %v", resp.StatusCode, len(got), len(kernel), err)
	}
	close(stopSampling)
	<-sampled
	// The cap, one connection being accepted (before it is admitted, takes
	// an idle one's place or is turned away), and the board's own end of
	// its download, in this process too.
	if limit := baseline + h.maxConns + 2; peak > limit {
		t.Errorf("%d descriptors open at the peak of the flood, baseline %d: over the cap of %d connections", peak, baseline, h.maxConns)
	}
	deadline := time.Now().Add(h.request + time.Second)
	now := openFDs(t)
	for now > baseline && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		now = openFDs(t)
	}
	if now > baseline {
		t.Errorf("%d descriptors open %v after the flood's requests, baseline %d (%d connections the server counts open)", now, h.request+time.Second, baseline, h.openConns())
	}
	t.Logf("descriptors: baseline %d, peak %d, after %d; %d flood connections still open on the client's side", baseline, peak, now, floodConns)
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// flood opens floodConns connections to addr from floodClients addresses,
// each sending a request that declares a 10-byte body and never sends it
// (send "body") or nothing at all, says "ready" once all are open, and
// holds them until its input ends.
func flood(addr, send string) {
	in := bufio.NewReader(os.Stdin)
	in.ReadString('\n')
	conns := make([]net.Conn, 0, floodConns)
	for i := 0; i < floodConns; i++ {
		local := &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(1+i%floodClients))}
		d := net.Dialer{LocalAddr: local, Timeout: 3 * time.Second}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "flood:", err)
			continue
		}
		if send == "body" {
			fmt.Fprintf(c, "GET /vmlinuz HTTP/1.1\r\nHost: %s\r\nContent-Length: 10\r\n\r\n", addr)
		}
		conns = append(conns, c)
	}
	fmt.Println("ready")
	io.Copy(io.Discard, in)
	for _, c := range conns {
		c.Close()
	}
}
