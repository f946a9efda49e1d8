// Package dnsmasqtest runs dnsmasq in a network namespace for tests, as a
// Raspberry Pi user runs it: configured as Raspberry Pi's network boot
// tutorial configures it ("Network boot your Raspberry Pi": proxy DHCP
// beside the home router's, pxe-service=0,"Raspberry Pi Boot", its own
// TFTP server), with a plain DHCP server standing for the home router.
// What dnsmasq logs is how a test sees what a board asked for.
package dnsmasqtest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/needs"
)

// Require fails (BOOTBENCH_E2E=1) or skips t when dnsmasq cannot run in
// a namespace here.
func Require(t testing.TB) {
	t.Helper()
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root (network namespaces and taps)")
	}
	missing = append(missing, needs.Missing("dnsmasq", "ip")...)
	if len(missing) == 0 {
		return
	}
	needs.Unmet(t, "missing: "+strings.Join(missing, ", ")+" (make deps installs them)")
}

// Server is one dnsmasq, ended when the test ends.
type Server struct {
	Log  string // dnsmasq's log (log-facility)
	Root string // the TFTP root, for the Pi's server
}

// StartPi starts dnsmasq on iface in namespace netns with the tutorial's
// configuration, serving root by TFTP.
func StartPi(t testing.TB, netns, iface, broadcast, root string) *Server {
	t.Helper()
	conf := strings.Join([]string{
		"# Raspberry Pi's network boot tutorial:",
		"port=0",
		"dhcp-range=" + broadcast + ",proxy",
		"log-dhcp",
		"enable-tftp",
		"tftp-root=" + root,
		`pxe-service=0,"Raspberry Pi Boot"`,
	}, "\n")
	s := &Server{Root: root}
	s.start(t, netns, iface, conf, "TFTP root is")
	return s
}

// StartRouter starts a plain DHCP server on iface, as a home router is:
// it gives first..last and nothing for a Pi.
func StartRouter(t testing.TB, netns, iface, first, last string) *Server {
	t.Helper()
	conf := strings.Join([]string{
		"port=0",
		"dhcp-range=" + first + "," + last + ",255.255.255.0,1h",
		// No ping before an offer: 3 s a boot, and the bench has no
		// other host to collide with.
		"no-ping",
		"log-dhcp",
	}, "\n")
	s := &Server{}
	s.start(t, netns, iface, conf, "DHCP, IP range")
	return s
}

// start runs dnsmasq with conf on iface in netns until the test ends,
// and waits until its log says ready. The lines it adds keep dnsmasq to
// the test's interface and files.
func (s *Server) start(t testing.TB, netns, iface, conf, ready string) {
	t.Helper()
	dir := t.TempDir()
	s.Log = filepath.Join(dir, "dnsmasq.log")
	conf += "\n# the test's own: its interface, its files\n" + strings.Join([]string{
		"interface=" + iface,
		"bind-interfaces",
		"log-facility=" + s.Log,
		"dhcp-leasefile=" + filepath.Join(dir, "leases"),
	}, "\n") + "\n"
	confPath := filepath.Join(dir, "dnsmasq.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", netns, "dnsmasq", "--keep-in-foreground", "--pid-file=", "--conf-file="+confPath)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("dnsmasq: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-done:
			b, _ := os.ReadFile(s.Log)
			t.Fatalf("dnsmasq ended at start: %s%s", stderr.String(), b)
		default:
		}
		if b, _ := os.ReadFile(s.Log); strings.Contains(string(b), ready) {
			return
		}
	}
	t.Fatalf("dnsmasq did not start within 10 s: %s", stderr.String())
}

// tftpRE is a TFTP line of dnsmasq's log: a file sent, or not found.
var tftpRE = regexp.MustCompile(`dnsmasq-tftp\[\d+\]: (?:sent (\S+) to \S+|file (\S+) not found)`)

// WaitTFTP is TFTP once it lists n files, or after d, whichever is
// first: dnsmasq logs a file as sent when the board's last ACK has
// reached it, which may be after the board has gone on.
func (s *Server) WaitTFTP(n int, d time.Duration) ([]string, error) {
	deadline := time.Now().Add(d)
	for {
		files, err := s.TFTP()
		if err != nil || len(files) >= n || time.Now().After(deadline) {
			return files, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TFTP is what the board asked for by TFTP, in order, as paths under the
// TFTP root; a file that was not there is followed by " (not found)".
func (s *Server) TFTP() ([]string, error) {
	f, err := os.Open(s.Log)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var files []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := tftpRE.FindStringSubmatch(sc.Text())
		switch {
		case m == nil:
		case m[1] != "":
			files = append(files, s.rel(m[1]))
		default:
			files = append(files, s.rel(m[2])+" (not found)")
		}
	}
	return files, sc.Err()
}

func (s *Server) rel(path string) string {
	r, err := filepath.Rel(s.Root, path)
	if err != nil {
		return path
	}
	return r
}

// Contents is the log, for a failing test's message.
func (s *Server) Contents() string {
	b, err := os.ReadFile(s.Log)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return string(b)
}
