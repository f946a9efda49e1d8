package route

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bootbench/bootbench/internal/testkit/needs"
)

// A key pair's public key is the one X25519 gives its private key, as
// "wg pubkey" computes it, and each pair is new.
func TestNewKeyPair(t *testing.T) {
	a, err := NewKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewKeyPair()
	if a.Private == b.Private {
		t.Error("two key pairs with one private key")
	}
	k, err := ecdh.X25519().NewPrivateKey(a.Private[:])
	if err != nil {
		t.Fatal(err)
	}
	if string(k.PublicKey().Bytes()) != string(a.Public[:]) {
		t.Error("public key is not the private key's")
	}
	if s := a.Public.String(); len(s) != 44 || !strings.HasSuffix(s, "=") {
		t.Errorf("key %q is not WireGuard's base64", s)
	}
}

// The direct baseline's tunnel between two namespaces over a veth pair:
// traffic crosses it encrypted (the veth carries UDP to the tunnel's
// port, the WireGuard interfaces the tests), and taking it down leaves
// nothing: no interface, no wireguard-go.
func TestTunnelDirect(t *testing.T) {
	needs.Root(t, "needs root for network namespaces")
	needs.Commands(t, "iperf3", "wg")
	a, b := "bootbench-wgtest-a", "bootbench-wgtest-b"
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	ip("netns", "add", a)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", a).Run() })
	ip("netns", "add", b)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", b).Run() })
	ip("link", "add", "wt0", "netns", a, "type", "veth", "peer", "name", "wt1", "netns", b)
	ip("-n", a, "addr", "add", "198.18.3.1/24", "dev", "wt0")
	ip("-n", b, "addr", "add", "198.18.3.2/24", "dev", "wt1")
	ip("-n", a, "link", "set", "wt0", "up")
	ip("-n", b, "link", "set", "wt1", "up")

	tun, err := NewTunnel()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, server := Side{Netns: a, Iface: "wt0", Addr: "198.18.3.1"}, Side{Netns: b, Iface: "wt1", Addr: "198.18.3.2"}
	path := Path{Config: DirectWireGuard, Direct: true, Tunnel: tun}
	udpBefore := udpDatagrams(t, b)
	figs, err := path.Run(ctx, Plan{Sizes: []int{1460}, Seconds: 1, UDPRate: 10e6}, client, server, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, m := range Metrics(DirectWireGuard, figs) {
		got[m.Name] = m.Value
	}
	for _, name := range []string{"tcp-throughput@1460/direct-wireguard", "tcp-throughput-reverse@1460/direct-wireguard", "udp-throughput@1460/direct-wireguard"} {
		if !(got[name] > 0) {
			t.Errorf("%s = %v, want a rate", name, got[name])
		}
	}
	// The TCP tests' segments arrived as UDP, the tunnel's: the UDP
	// test alone sends some 850 datagrams to the server.
	n := udpDatagrams(t, b) - udpBefore
	t.Logf("%d UDP datagrams received by the server's side; tcp %.0f Mbit/s", n, got["tcp-throughput@1460/direct-wireguard"]/1e6)
	if n < 3000 {
		t.Errorf("the server's side received %d UDP datagrams: the traffic did not go through the tunnel", n)
	}
	for _, ns := range []string{a, b} {
		out, _ := exec.Command("ip", "-n", ns, "-o", "link").CombinedOutput()
		if strings.Contains(string(out), "bbwg") {
			t.Errorf("tunnel interface left in %s: %s", ns, out)
		}
		if pids, _ := exec.Command("ip", "netns", "pids", ns).Output(); len(strings.TrimSpace(string(pids))) > 0 {
			t.Errorf("processes left in %s: %s", ns, pids)
		}
	}
}

// uapiUp sees wireguard-go's control socket up once it listens, and
// leaves it where it is before then: wireguard-go binds the socket, then
// listens on it, and exits if it is gone by the time it watches it.
func TestUAPIUp(t *testing.T) {
	needs.Root(t, "needs root for wireguard-go's socket directory")
	for _, tc := range []struct {
		name         string
		bind, listen bool
		wantUp       bool
	}{
		{"no socket", false, false, false},
		{"bound, not yet listening", true, false, false},
		{"listening", true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b [4]byte
			rand.Read(b[:])
			name := "bbwgtest" + hex.EncodeToString(b[:])
			path := uapiSocket(name)
			if tc.bind {
				bindUnix(t, path, tc.listen)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if got := uapiUp(ctx, name); got != tc.wantUp {
				t.Errorf("uapiUp = %v, want %v", got, tc.wantUp)
			}
			if _, err := os.Lstat(path); tc.bind && err != nil {
				t.Errorf("the socket is gone: %v", err)
			}
		})
	}
}

// bindUnix binds a unix stream socket to path, and listens on it if
// listen, for the test's duration.
func bindUnix(t *testing.T, path string, listen bool) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd); os.Remove(path) })
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	if listen {
		if err := unix.Listen(fd, 1); err != nil {
			t.Fatal(err)
		}
	}
}

// udpDatagrams is what namespace ns's UDP received, from /proc/net/snmp.
func udpDatagrams(t *testing.T, ns string) int {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "cat", "/proc/net/snmp").Output()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != "Udp:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		for i, n := range names {
			if n == "InDatagrams" {
				var v int
				for _, c := range f[i] {
					v = v*10 + int(c-'0')
				}
				return v
			}
		}
	}
	t.Fatal("no Udp InDatagrams in /proc/net/snmp")
	return 0
}

// The board's command carries a fresh seed for its random pool, the
// tunnel's own, as base64 like the keys.
func TestBoardCommandSeed(t *testing.T) {
	a, err := NewTunnel()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewTunnel()
	if a.Seed == b.Seed || a.Seed == (Key{}) {
		t.Errorf("seeds %s and %s: want two random ones", a.Seed, b.Seed)
	}
	if cmd := a.BoardCommand(); !strings.HasSuffix(cmd, " seed="+a.Seed.String()) {
		t.Errorf("BoardCommand() = %q, want it to end with the seed", cmd)
	}
}
