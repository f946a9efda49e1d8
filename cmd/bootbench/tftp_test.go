package main

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/userenv"

	"github.com/pin/tftp/v3"
)

// TestTFTPCommand: bootbench tftp serves a directory until Ctrl-C, one line
// per transfer, and exits 130 when interrupted, as every command does.
func TestTFTPCommand(t *testing.T) {
	root := t.TempDir()
	blob := make([]byte, 100_000)
	rand.Read(blob)
	os.WriteFile(filepath.Join(root, "vmlinuz"), blob, 0o644)

	cmd := userenv.Command(nil, bootbenchBin, "tftp", "--root", root, "--listen", "127.0.0.1:0")
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })

	started := regexp.MustCompile(`^bootbench tftp: serving .* read-only on (127\.0\.0\.1:\d+); Ctrl-C stops\n`)
	var addr string
	for deadline := time.Now().Add(5 * time.Second); addr == ""; time.Sleep(20 * time.Millisecond) {
		if m := started.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("not serving after 5s: stderr %q", stderr.String())
		}
	}

	c, _ := tftp.NewClient(addr)
	c.SetTimeout(time.Second)
	c.SetBlockSize(1468)
	c.SetWindowSize(16)
	var got bytes.Buffer
	wt, err := c.Receive("/vmlinuz", "octet")
	if err == nil {
		_, err = wt.WriteTo(&got)
	}
	if err != nil || !bytes.Equal(got.Bytes(), blob) {
		t.Fatalf("fetch vmlinuz: %v, %d bytes of %d", err, got.Len(), len(blob))
	}
	if wt, err := c.Receive("nothere", "octet"); err == nil {
		_, err = wt.WriteTo(io.Discard)
		t.Errorf("nothere: served (%v)", err)
	}

	want := []*regexp.Regexp{
		regexp.MustCompile(`^\d\d:\d\d:\d\d 127\.0\.0\.1 vmlinuz 100000 bytes in \S+ \([0-9.]+ MiB/s\) blksize=1468 windowsize=16$`),
		regexp.MustCompile(`^\d\d:\d\d:\d\d 127\.0\.0\.1 nothere: file not found$`),
	}
	var lines []string
	for deadline := time.Now().Add(3 * time.Second); len(lines) < len(want) && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		lines = strings.Split(strings.TrimSpace(stdout.String()), "\n")
	}
	if len(lines) != len(want) {
		t.Fatalf("stdout %q: want one line per transfer", stdout.String())
	}
	// The server logs a transfer once its last block is acknowledged,
	// and the client asks for the next file as soon as it has sent that
	// acknowledgement: the two lines may come in either order.
	for _, re := range want {
		if !slices.ContainsFunc(lines, re.MatchString) {
			t.Errorf("no line matches %s in %q", re, lines)
		}
	}

	cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("still serving 10s after Ctrl-C")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d after Ctrl-C, want 130 (stderr %q)", code, stderr.String())
	}
	if !strings.HasSuffix(stderr.String(), "bootbench: tftp: interrupted; stopped\n") {
		t.Errorf("stderr %q: want it to say it stopped", stderr.String())
	}
}

// startTFTPCommand runs bootbench tftp on root until the test ends and
// returns where it serves, its stderr and a channel closed when it exits.
func startTFTPCommand(t *testing.T, root string) (addr string, stderr *lockedBuffer, cmd *exec.Cmd, done chan struct{}) {
	t.Helper()
	cmd = userenv.Command(nil, bootbenchBin, "tftp", "--root", root, "--listen", "127.0.0.1:0")
	stderr = &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done = make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	started := regexp.MustCompile(`serving .* read-only on (127\.0\.0\.1:\d+); Ctrl-C stops\n`)
	for deadline := time.Now().Add(5 * time.Second); addr == ""; time.Sleep(20 * time.Millisecond) {
		if m := started.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("not serving after 5s: stderr %q", stderr.String())
		}
	}
	return addr, stderr, cmd, done
}

// stallTransfer starts a transfer of name from addr and goes silent after
// its first block: a board that hung mid-boot.
func stallTransfer(t *testing.T, addr, name string) {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	server, _ := net.ResolveUDPAddr("udp4", addr)
	c.WriteToUDP([]byte("\x00\x01"+name+"\x00octet\x00"), server)
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	buf := make([]byte, 600)
	if n, _, err := c.ReadFromUDP(buf); err != nil || n < 4 || buf[1] != 3 {
		t.Fatalf("first block: %v % x", err, buf[:n])
	}
}

// TestTFTPCommandStops: with a client gone silent mid-transfer, one Ctrl-C
// stops bootbench tftp within a retry (it took 9 s), and a second one exits
// at once; both exit 130.
func TestTFTPCommandStops(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "vmlinuz"), make([]byte, 1<<20), 0o644)
	tests := []struct {
		name    string
		signals int
		within  time.Duration
		says    string
	}{
		{"one Ctrl-C", 1, 2 * time.Second, "bootbench: tftp: interrupted; stopped\n"},
		{"two Ctrl-Cs", 2, 500 * time.Millisecond, "bootbench: tftp: interrupted again; exiting without waiting for transfers in flight\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, stderr, cmd, done := startTFTPCommand(t, root)
			stallTransfer(t, addr, "vmlinuz")
			start := time.Now()
			for i := 0; i < tt.signals; i++ {
				cmd.Process.Signal(syscall.SIGINT)
				time.Sleep(50 * time.Millisecond)
			}
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("still serving 15 s after Ctrl-C")
			}
			if d := time.Since(start); d > tt.within {
				t.Errorf("exited %v after the first Ctrl-C, want within %v", d.Round(time.Millisecond), tt.within)
			}
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Errorf("exit %d, want 130", code)
			}
			if !strings.HasSuffix(stderr.String(), tt.says) {
				t.Errorf("stderr %q, want it to end %q", stderr.String(), tt.says)
			}
		})
	}
}

// TestTFTPCommandUsage: bad usage is exit 2 with one line; --help teaches.
func TestTFTPCommandUsage(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, nil, 0o644)
	tests := []struct {
		args     []string
		code     int
		inStderr string
		inStdout string
	}{
		{[]string{"tftp"}, 2, "tftp: --root DIR and --listen ADDR are both required", ""},
		{[]string{"tftp", "--root", t.TempDir()}, 2, "both required", ""},
		{[]string{"tftp", "--root", notDir, "--listen", "127.0.0.1:0"}, 2, "is not a directory", ""},
		{[]string{"tftp", "--root", t.TempDir(), "--listen", "localhost:69"}, 2, `--listen "localhost:69" is not IP[:PORT]`, ""},
		{[]string{"tftp", "--root", t.TempDir(), "--listen", "127.0.0.1:0", "extra"}, 2, `unexpected argument "extra"`, ""},
		{[]string{"tftp", "--port", "69"}, 2, "flag provided but not defined: -port", ""},
		{[]string{"tftp", "--root", t.TempDir(), "--listen", "198.18.255.254:0"}, 1, "the address is not on this host", ""},
		{[]string{"tftp", "--help"}, 0, "", "curl -o vmlinuz --tftp-blksize 1468 tftp://"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := bootbench(t, "", tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", r.code, tt.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.inStderr) || !strings.Contains(r.stdout, tt.inStdout) {
				t.Errorf("stderr %q stdout %q; want %q / %q", r.stderr, r.stdout, tt.inStderr, tt.inStdout)
			}
			if tt.code != 0 && strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("error is more than one line:\n%s", r.stderr)
			}
		})
	}
}
