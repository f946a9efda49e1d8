package netboot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bootbench/bootbench/internal/testkit/needs"
)

// requireNetns skips (or, with BOOTBENCH_E2E=1, fails) where network
// namespaces cannot be made.
func requireNetns(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 || len(needs.Missing("ip")) > 0 {
		needs.Unmet(t, "network namespace tests need root and the ip command")
	}
}

func run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// newNetns makes a namespace removed after the test.
func newNetns(t *testing.T, prefix string) string {
	var b [3]byte
	rand.Read(b[:])
	name := prefix + hex.EncodeToString(b[:])
	run(t, "ip", "netns", "add", name)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	run(t, "ip", "-n", name, "link", "set", "lo", "up")
	return name
}

// inNetns runs fn on a thread in namespace ns; sockets it opens stay there.
func inNetns(t *testing.T, ns string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
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

// TestListenHearsOnlyItsInterface: a socket bound to the bench address and
// interface does not hear a packet for that address arriving on another
// interface (Linux accepts such packets on a plain bound socket).
func TestListenHearsOnlyItsInterface(t *testing.T) {
	requireNetns(t)
	host, peer := newNetns(t, "bbnb-h-"), newNetns(t, "bbnb-p-")
	for i, pair := range [][2]string{{"bench0", "p0"}, {"other0", "p1"}} {
		run(t, "ip", "-n", host, "link", "add", pair[0], "type", "veth", "peer", "name", pair[1], "netns", peer)
		run(t, "ip", "-n", host, "link", "set", pair[0], "up")
		run(t, "ip", "-n", peer, "link", "set", pair[1], "up")
		run(t, "ip", "-n", host, "addr", "add", []string{"198.18.7.1/24", "198.18.8.1/24"}[i], "dev", pair[0])
		run(t, "ip", "-n", peer, "addr", "add", []string{"198.18.7.2/24", "198.18.8.2/24"}[i], "dev", pair[1])
	}
	// The peer reaches the bench address through the other interface.
	run(t, "ip", "netns", "exec", host, "sysctl", "-qw", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.other0.rp_filter=0")
	run(t, "ip", "-n", peer, "route", "add", "198.18.7.1/32", "dev", "p1")

	for _, bound := range []bool{true, false} {
		var conn net.PacketConn
		inNetns(t, host, func() {
			var err error
			if bound {
				conn, err = ListenUDP("bench0", netip.MustParseAddr("198.18.7.1"), 6969)
			} else {
				conn, err = net.ListenPacket("udp4", "198.18.7.1:6969")
			}
			if err != nil {
				t.Error(err)
			}
		})
		if conn == nil {
			t.FailNow()
		}
		inNetns(t, peer, func() {
			c, err := net.Dial("udp4", "198.18.7.1:6969")
			if err != nil {
				t.Error(err)
				return
			}
			c.Write([]byte("from the wrong interface"))
			c.Close()
		})
		conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		_, _, err := conn.ReadFrom(make([]byte, 100))
		conn.Close()
		heard := err == nil
		if bound && heard {
			t.Error("the bench socket heard a packet that came in on another interface")
		}
		if !bound && !heard {
			t.Fatal("the unbound control socket heard nothing: the test does not test anything")
		}
	}
}

// TestProbeDHCP: the probe finds a DHCP server on the segment, and comes
// back empty-handed from a segment without one.
func TestProbeDHCP(t *testing.T) {
	requireNetns(t)
	host, server := newNetns(t, "bbnb-h-"), newNetns(t, "bbnb-s-")
	vethPair(t, host, "bench0", server, "seg0")
	run(t, "ip", "-n", server, "addr", "add", "198.18.9.2/24", "dev", "seg0")

	probe := func() (r *Rival, err error) {
		inNetns(t, host, func() { r, err = ProbeDHCP(context.Background(), "bench0", 2*time.Second) })
		return r, err
	}
	if r, err := probe(); r != nil || err != nil {
		t.Fatalf("a quiet segment: %v, %v", r, err)
	}

	// A DHCP server that answers every MAC (ours, knowing bench0's).
	mac := macIn(t, host, "bench0")
	plan := StaticPlan{Server: net.IPv4(198, 18, 9, 2).To4(), Mask: net.CIDRMask(24, 32), Hosts: map[string]Host{
		mac.String(): {IP: net.IPv4(198, 18, 9, 50).To4()},
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go ServeDHCP(ctx, listenDHCPIn(t, server, "seg0"), plan, nil)
	r, err := probe()
	if err != nil || r == nil || !r.Server.Equal(net.IPv4(198, 18, 9, 2)) || !r.Offered.Equal(net.IPv4(198, 18, 9, 50)) {
		t.Fatalf("probe found %v, %v; want the server at 198.18.9.2 offering 198.18.9.50", r, err)
	}
	if s := r.String(); s != "a DHCP server at 198.18.9.2 (it offered 198.18.9.50)" {
		t.Errorf("described as %q", s)
	}
}

// macIn is the MAC of interface name in namespace ns.
func macIn(t *testing.T, ns, name string) net.HardwareAddr {
	t.Helper()
	var mac net.HardwareAddr
	inNetns(t, ns, func() {
		if ifi, err := net.InterfaceByName(name); err == nil {
			mac = ifi.HardwareAddr
		}
	})
	if mac == nil {
		t.Fatalf("no interface %s in %s", name, ns)
	}
	return mac
}

// listenDHCPIn opens the DHCP server's socket on iface in namespace ns,
// closed after the test.
func listenDHCPIn(t *testing.T, ns, iface string) net.PacketConn {
	t.Helper()
	var conn net.PacketConn
	var err error
	inNetns(t, ns, func() { conn, err = ListenDHCP(iface) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// vethPair links interface a in namespace nsA to b in nsB, both up.
func vethPair(t *testing.T, nsA, a, nsB, b string) {
	t.Helper()
	run(t, "ip", "-n", nsA, "link", "add", a, "type", "veth", "peer", "name", b, "netns", nsB)
	run(t, "ip", "-n", nsA, "link", "set", a, "up")
	run(t, "ip", "-n", nsB, "link", "set", b, "up")
}
