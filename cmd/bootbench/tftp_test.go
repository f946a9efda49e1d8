package main

import (
	"bytes"
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/userenv"

	"github.com/pin/tftp/v3"
)

// TestTFTPCommand: bootbench tftp serves a directory until Ctrl-C, one line
// per transfer, and exits 0 when interrupted.
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
		regexp.MustCompile(`^\d\d:\d\d:\d\d 127\.0\.0\.1 vmlinuz 100000 bytes in \S+ \([0-9.]+ MiB/s\)$`),
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
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit %d after Ctrl-C, want 0 (stderr %q)", code, stderr.String())
	}
	if !strings.HasSuffix(stderr.String(), "bootbench tftp: stopped\n") {
		t.Errorf("stderr %q: want it to say it stopped", stderr.String())
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
