package power

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/internal/testkit/needs"
)

// pdudaemonBin finds Debian's pdudaemon (in /usr/sbin, which a user's PATH
// may lack). Without it the test skips, or fails under BOOTBENCH_E2E=1.
func pdudaemonBin(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("pdudaemon"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/pdudaemon"); err == nil {
		return "/usr/sbin/pdudaemon"
	}
	needs.Unmet(t, "pdudaemon is not installed (apt-get install pdudaemon)")
	return ""
}

// startPDUDaemon runs a real pdudaemon on a free loopback port with one
// PDU, "bench", whose localcmdline driver appends "on N" or "off N" to the
// returned file. It is stopped, with anything it started, when the test
// ends.
func startPDUDaemon(t *testing.T) (url, calls string) {
	bin := pdudaemonBin(t)
	dir := t.TempDir()
	calls = filepath.Join(dir, "calls")
	relay := filepath.Join(dir, "relay")
	if err := os.WriteFile(relay, []byte("#!/bin/sh\necho \"$1 $2\" >> "+calls+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	conf := map[string]any{
		"daemon": map[string]any{"hostname": "127.0.0.1", "port": port, "listener": "http", "logging_level": "DEBUG"},
		"pdus": map[string]any{"bench": map[string]any{
			"driver": "localcmdline", "cmd_on": relay + " on %s", "cmd_off": relay + " off %s",
		}},
	}
	confPath := filepath.Join(dir, "pdudaemon.conf")
	b, _ := json.Marshal(conf)
	if err := os.WriteFile(confPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "pdudaemon.log")
	cmd := exec.Command(bin, "--conf", confPath, "--logfile", logPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start pdudaemon: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { stopPDUDaemon(t, cmd, exited, logPath) })

	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr, calls
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("pdudaemon exited before listening: %v\n%s", err, readLog(logPath))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("pdudaemon does not listen on %s\n%s", addr, readLog(logPath))
		}
	}
}

// stopPDUDaemon stops it as its service manager would (SIGTERM), kills its
// process group if it lingers, and checks nothing of it is left.
func stopPDUDaemon(t *testing.T, cmd *exec.Cmd, exited chan error, logPath string) {
	pgid := cmd.Process.Pid
	syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Errorf("pdudaemon ignored SIGTERM for 10s; killed\n%s", readLog(logPath))
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-exited
	}
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		syscall.Kill(-pgid, syscall.SIGKILL)
		t.Errorf("pdudaemon left processes behind (kill -0: %v)", err)
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func readLog(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func TestPDUDaemon(t *testing.T) {
	url, calls := startPDUDaemon(t)
	ctx := context.Background()
	newDriver := func(pdu string, port int, delay time.Duration) Driver {
		d, err := New("rb1", boards.PowerSpec{Driver: boards.PowerPDUDaemon, URL: url, PDU: pdu, Port: port, Delay: delay}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	ranSoFar := func() string { b, _ := os.ReadFile(calls); return string(b) }

	d := newDriver("bench", 3, 1500*time.Millisecond)
	if err := d.On(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.Off(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ranSoFar(); got != "on 3\noff 3\n" {
		t.Fatalf("the PDU was driven %q, want on 3, off 3", got)
	}

	// pdudaemon takes whole seconds: 1.5 s is asked as 2 (as 1.5 it would
	// switch off and fail before switching on).
	start := time.Now()
	if err := Cycle(ctx, d, 0); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 2*time.Second {
		t.Errorf("reboot took %s, want the 2 s delay", took)
	}
	if got := ranSoFar(); got != "on 3\noff 3\noff 3\non 3\n" {
		t.Errorf("the PDU was driven %q, want a reboot of port 3 last", got)
	}

	err := newDriver("no-such-pdu", 3, 0).On(ctx)
	if err == nil || !strings.Contains(err.Error(), `500 Internal Server Error: Invalid request (is "no-such-pdu" a PDU in pdudaemon's configuration`) {
		t.Errorf("an unknown PDU: %v", err)
	}
	if got := ranSoFar(); strings.Count(got, "\n") != 4 {
		t.Errorf("the PDU was driven %q after a refused request", got)
	}
}
