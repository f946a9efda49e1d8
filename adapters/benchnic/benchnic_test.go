package benchnic

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"net/netip"

	"golang.org/x/sys/unix"

	"github.com/bootbench/bootbench/internal/testkit/needs"
)

// testNetns makes a namespace with a tap NIC "bench0" (up) and "other0",
// and returns a function that runs code inside it.
func testNetns(t *testing.T) func(func()) {
	t.Helper()
	needs.Root(t, "needs root for network namespaces")
	var b [3]byte
	rand.Read(b[:])
	ns := "bbnic-" + hex.EncodeToString(b[:])
	sh := func(args ...string) {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	sh("netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	sh("-n", ns, "tuntap", "add", "dev", "bench0", "mode", "tap")
	sh("-n", ns, "tuntap", "add", "dev", "other0", "mode", "tap")
	sh("-n", ns, "link", "set", "bench0", "up")
	sh("-n", ns, "link", "set", "other0", "up")
	return func(fn func()) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread() // the thread dies with the goroutine, still in ns
			f, err := os.Open("/run/netns/" + ns)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
				t.Error(err)
				return
			}
			fn()
		}()
		<-done
	}
}

func addrsOf(iface string) string {
	out, _ := exec.Command("ip", "-o", "-4", "addr", "show", "dev", iface).Output()
	var a []string
	for _, f := range strings.Fields(string(out)) {
		if strings.Count(f, ".") == 3 && strings.Contains(f, "/") {
			a = append(a, f)
		}
	}
	return strings.Join(a, " ")
}

func TestOpenAddsAndRemoves(t *testing.T) {
	in := testNetns(t)
	cache := t.TempDir()
	pfx := netip.MustParsePrefix("198.18.5.1/24")
	in(func() {
		n, err := Open(context.Background(), "bench0", pfx, cache)
		if err != nil {
			t.Error(err)
			return
		}
		if !n.Added() || addrsOf("bench0") != "198.18.5.1/24" || addrsOf("other0") != "" {
			t.Errorf("added %v; bench0 %q, other0 %q", n.Added(), addrsOf("bench0"), addrsOf("other0"))
		}
		// A second Open finds it there and will not remove it.
		n2, err := Open(context.Background(), "bench0", pfx, cache)
		if err != nil || n2.Added() {
			t.Errorf("second open: added %v, %v", n2 != nil && n2.Added(), err)
		}
		if err := n.Close(); err != nil {
			t.Error(err)
		}
		if got := addrsOf("bench0"); got != "" {
			t.Errorf("after Close bench0 has %q", got)
		}
		if left, _ := filepath.Glob(filepath.Join(cache, "benchnic-*")); len(left) != 0 {
			t.Errorf("record left: %v", left)
		}
	})
}

func TestOpenRefuses(t *testing.T) {
	in := testNetns(t)
	pfx := netip.MustParsePrefix("198.18.5.1/24")
	in(func() {
		exec.Command("ip", "tuntap", "add", "dev", "down0", "mode", "tap").Run()
		exec.Command("ip", "addr", "add", "198.18.5.1/24", "dev", "other0").Run()
		tests := []struct{ iface, want string }{
			{"nosuch0", "bench interface nosuch0: no such interface here (interfaces: bench0 (up), down0 (down), lo (down), other0 (up))"},
			{"down0", "bench interface down0 is down (bring it up: ip link set down0 up)"},
			{"lo", "is the loopback interface"},
			{"bench0", "bench address 198.18.5.1 is on other0, not on the bench interface bench0"},
		}
		for _, tt := range tests {
			_, err := Open(context.Background(), tt.iface, pfx, t.TempDir())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: %v, want %q", tt.iface, err, tt.want)
			}
		}
		if got := addrsOf("bench0"); got != "" {
			t.Errorf("a refused Open changed bench0: %q", got)
		}
	})
}

// TestSweep: an address added by a bootbench that was killed is removed by
// the next one.
func TestSweep(t *testing.T) {
	in := testNetns(t)
	cache := t.TempDir()
	dead := exec.Command("true")
	dead.Run()
	in(func() {
		exec.Command("ip", "addr", "add", "198.18.5.1/24", "dev", "bench0").Run()
		rec := filepath.Join(cache, "benchnic-bench0")
		os.MkdirAll(rec, 0o755)
		os.WriteFile(filepath.Join(rec, "owner"), []byte(strconv.Itoa(dead.Process.Pid)+" bench0 198.18.5.1/24\n"), 0o644)
		swept := Sweep(cache)
		if len(swept) != 1 || swept[0] != "bench0 198.18.5.1/24" || addrsOf("bench0") != "" {
			t.Errorf("swept %v, bench0 has %q", swept, addrsOf("bench0"))
		}
	})
}
