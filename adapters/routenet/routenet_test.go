package routenet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bootbench/bootbench/adapters/route"
	"github.com/bootbench/bootbench/internal/testkit/needs"
	"github.com/bootbench/bootbench/internal/testkit/userenv"
)

func TestHostAddr(t *testing.T) {
	for _, tc := range []struct{ board, want string }{
		{"198.18.1.1/24", "198.18.1.2/24"},
		{"192.168.88.5/24", "192.168.88.1/24"},
		{"10.0.0.1/30", "10.0.0.2/30"},
	} {
		got, err := HostAddr(netip.MustParsePrefix(tc.board))
		if err != nil || got.String() != tc.want {
			t.Errorf("HostAddr(%s) = %v, %v; want %s", tc.board, got, err, tc.want)
		}
	}
	for _, bad := range []string{"10.0.0.1/31", "2001:db8::1/64"} {
		if _, err := HostAddr(netip.MustParsePrefix(bad)); err == nil {
			t.Errorf("HostAddr(%s) accepted", bad)
		}
	}
}

func TestVLANName(t *testing.T) {
	for _, tc := range []struct {
		trunk string
		id    int
		want  string
	}{
		{"eno2", 101, "eno2.101"},
		{"enx001122334455", 4094, "enx0011223.4094"},
	} {
		if got := vlanName(tc.trunk, tc.id); got != tc.want || len(got) > 15 {
			t.Errorf("vlanName(%s, %d) = %q, want %q", tc.trunk, tc.id, got, tc.want)
		}
	}
}

// The child side of the host-interface tests: run inside the bench host's
// namespace by TestHostLinks, as bootbench runs on a bench host.
const childEnv = "ROUTENET_TEST_CHILD"

// TestHostLinks moves two interfaces that exist before the run (veth ends
// in a namespace standing for the bench host, their peers in a namespace
// standing for the board) in for a run and checks they are put back as
// they were: by Close, and by the next run's Sweep after a run killed
// before it could.
func TestHostLinks(t *testing.T) {
	if mode := os.Getenv(childEnv); mode != "" {
		child(t, mode)
		return
	}
	requireRoot(t)
	host, board := "bbrthost-"+suffix(), "bbrtboard-"+suffix()
	for _, ns := range []string{host, board} {
		run(t, "ip", "netns", "add", ns)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	}
	// lan0 is up with an address and MTU 9000; wan0 is down with none.
	run(t, "ip", "-n", host, "link", "add", "lan0", "type", "veth", "peer", "name", "blan", "netns", board)
	run(t, "ip", "-n", host, "link", "add", "wan0", "type", "veth", "peer", "name", "bwan", "netns", board)
	run(t, "ip", "-n", host, "link", "set", "lan0", "mtu", "9000")
	run(t, "ip", "-n", host, "addr", "add", "198.18.9.7/24", "dev", "lan0")
	run(t, "ip", "-n", host, "link", "set", "lan0", "up")
	before := state(t, host)
	cache := t.TempDir()
	// nsenter, not ip netns exec: a bench host's runs share its mount
	// namespace, and ip netns exec would give each run its own, taking
	// the namespaces a killed run made (and the interfaces in them)
	// with it when it dies.
	for _, mode := range []string{"close", "killed", "vlan"} {
		cmd := userenv.Command([]string{childEnv + "=" + mode, "ROUTENET_TEST_CACHE=" + cache},
			"nsenter", "--net=/run/netns/"+host, os.Args[0], "-test.run", "^TestHostLinks$", "-test.v")
		out, err := cmd.CombinedOutput()
		if killed := mode == "killed" && strings.Contains(fmt.Sprint(err), "killed"); err != nil && !killed {
			t.Fatalf("%s run: %v\n%s", mode, err, out)
		}
		if mode == "killed" {
			// The run is gone, the interfaces still in its namespaces;
			// the next run sweeps.
			if exec.Command("ip", "-n", host, "link", "show", "dev", "lan0").Run() == nil {
				t.Fatalf("the killed run left lan0 where it was: the test tests nothing\n%s", out)
			}
			cmd := userenv.Command([]string{childEnv + "=sweep", "ROUTENET_TEST_CACHE=" + cache},
				"nsenter", "--net=/run/netns/"+host, os.Args[0], "-test.run", "^TestHostLinks$")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("sweep: %v\n%s", err, out)
			}
		}
		if exec.Command("ip", "-n", host, "link", "show", "dev", "lan0.101").Run() == nil {
			t.Errorf("after the %s run, VLAN lan0.101 is left", mode)
		}
		if after := state(t, host); after != before {
			t.Errorf("after the %s run:\n%s\nbefore:\n%s", mode, after, before)
		}
		for _, ns := range childNamespaces(string(out)) {
			if _, err := os.Stat(filepath.Join("/run/netns", ns)); err == nil {
				t.Errorf("after the %s run, namespace %s is left", mode, ns)
			}
		}
		if recs, _ := filepath.Glob(filepath.Join(cache, "routenet-*")); len(recs) > 0 {
			t.Errorf("after the %s run, records left: %v", mode, recs)
		}
	}

	// A run killed in one namespace, swept from another that has a lan0
	// of its own: that lan0 is left as it is, the killed run's
	// namespaces go.
	other := "bbrtother-" + suffix()
	run(t, "ip", "netns", "add", other)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", other).Run() })
	run(t, "ip", "-n", other, "link", "add", "lan0", "type", "veth", "peer", "name", "olan")
	run(t, "ip", "-n", other, "addr", "add", "198.18.9.99/24", "dev", "lan0")
	run(t, "ip", "-n", other, "link", "add", "wan0", "type", "veth", "peer", "name", "owan")
	run(t, "ip", "-n", other, "link", "set", "lan0", "up")
	otherBefore := state(t, other)
	killed := userenv.Command([]string{childEnv + "=killed", "ROUTENET_TEST_CACHE=" + cache},
		"nsenter", "--net=/run/netns/"+host, os.Args[0], "-test.run", "^TestHostLinks$", "-test.v")
	out, _ := killed.CombinedOutput()
	left := childNamespaces(string(out))
	if len(left) != 2 {
		t.Fatalf("the killed run named namespaces %q\n%s", left, out)
	}
	sweep := userenv.Command([]string{childEnv + "=sweep-elsewhere", "ROUTENET_TEST_CACHE=" + cache},
		"nsenter", "--net=/run/netns/"+other, os.Args[0], "-test.run", "^TestHostLinks$")
	if out, err := sweep.CombinedOutput(); err != nil {
		t.Fatalf("sweep from another namespace: %v\n%s", err, out)
	}
	if after := state(t, other); after != otherBefore {
		t.Errorf("a sweep from another namespace changed its own lan0:\n%s\nbefore:\n%s", after, otherBefore)
	}
	for _, ns := range left {
		if _, err := os.Stat(filepath.Join("/run/netns", ns)); err == nil {
			t.Errorf("namespace %s of the run killed elsewhere is left", ns)
		}
	}
	if recs, _ := filepath.Glob(filepath.Join(cache, "routenet-*")); len(recs) > 0 {
		t.Errorf("records left: %v", recs)
	}
}

// child is one run inside the bench host: set up with the two host
// interfaces, check them in their namespaces, then close, or exit as if
// killed, or sweep what a killed one left.
func child(t *testing.T, mode string) {
	cache := os.Getenv("ROUTENET_TEST_CACHE")
	if mode == "sweep-elsewhere" {
		done := Sweep(cache)
		if len(done) != 2 || strings.Contains(strings.Join(done, "\n"), "put back") {
			t.Fatalf("sweep from another namespace said %q; want its two namespaces removed, nothing put back", done)
		}
		return
	}
	if mode == "sweep" {
		done := Sweep(cache)
		if len(done) != 4 || !strings.Contains(strings.Join(done, "\n"), "put back lan0 (up, 198.18.9.7/24, mtu 9000)") {
			t.Fatalf("sweep said %q", done)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if mode == "vlan" {
		vlanChild(ctx, t, cache)
		return
	}
	var notes []string
	n, err := New(ctx, cache, Spec{
		Client: Side{Link: Link{Host: "lan0"}, Board: DefaultBoardClient, Port: "52:54:00:bb:06:01"},
		Server: Side{Link: Link{Host: "wan0"}, Board: DefaultBoardServer, Port: "eth2"},
		Plan:   route.Plan{Sizes: []int{256}, Seconds: 1},
	}, func(s string) { notes = append(notes, s) })
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("namespaces: %s %s\n", n.Client, n.Server)
	if len(notes) != 2 || !strings.Contains(notes[0], "moved lan0 (up, 198.18.9.7/24, mtu 9000) into namespace") {
		t.Errorf("notes %q", notes)
	}
	out, err := ipOut(ctx, n.Client, "-o", "-4", "addr", "show", "dev", "lan0")
	if err != nil || !strings.Contains(string(out), "198.18.1.2/24") {
		t.Errorf("lan0 in the client namespace: %v %s", err, out)
	}
	if out, err := ipOut(ctx, n.Server, "route", "show", "198.18.1.0/24"); err != nil || !strings.Contains(string(out), "via 198.18.2.1 dev wan0") {
		t.Errorf("server side's route to the client side: %v %q", err, out)
	}
	if _, err := ipOut(ctx, "", "link", "show", "dev", "lan0"); err == nil {
		t.Errorf("lan0 is still in the bench host's namespace")
	}
	if p := n.Ports(); p[0].MAC != "52:54:00:bb:06:01" || p[1].MAC != "eth2" || p[1].Addr != "198.18.2.1/24" {
		t.Errorf("ports %+v", p)
	}
	if mode == "killed" {
		syscall.Kill(os.Getpid(), syscall.SIGKILL) // no Close, as a killed run
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
}

// vlanChild runs with both sides on VLANs of one trunk, lan0: the VLAN
// interfaces are made for the run and deleted after; lan0 stays.
func vlanChild(ctx context.Context, t *testing.T, cache string) {
	var notes []string
	n, err := New(ctx, cache, Spec{
		Client: Side{Link: Link{Trunk: "lan0", VLAN: 101}, Board: DefaultBoardClient, Port: "eth1"},
		Server: Side{Link: Link{Trunk: "lan0", VLAN: 102}, Board: DefaultBoardServer, Port: "eth2"},
	}, func(s string) { notes = append(notes, s) })
	if !vlansSupported() {
		// This host's kernel cannot make the VLANs: the run must say so
		// in one line, having made nothing.
		if want := "make VLAN 101 on lan0: this host's kernel has no 802.1Q VLANs (module 8021q)"; err == nil || err.Error() != want {
			t.Fatalf("New on a kernel without VLANs: %v; want %q", err, want)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("namespaces: %s %s\n", n.Client, n.Server)
	if len(notes) != 2 || !strings.HasPrefix(notes[0], "made lan0.101 (VLAN 101 on lan0)") {
		t.Errorf("notes %q", notes)
	}
	out, err := ipOut(ctx, n.Server, "-d", "link", "show", "dev", "lan0.102")
	if err != nil || !strings.Contains(string(out), "vlan protocol 802.1Q id 102") {
		t.Errorf("lan0.102 in the server namespace: %v\n%s", err, out)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
}

// vlansSupported reports whether this host's kernel makes VLAN
// interfaces (802.1Q, built in or module 8021q loaded).
func vlansSupported() bool {
	_, err := os.Stat("/proc/net/vlan")
	return err == nil
}

// state is the bench host's interfaces, as ip prints them, without what
// changes by itself.
func state(t *testing.T, ns string) string {
	t.Helper()
	var lines []string
	for _, dev := range []string{"lan0", "wan0"} {
		st, err := readState(context.Background(), ns, dev)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, dev+": "+describe(st))
	}
	return strings.Join(lines, "\n")
}

// childNamespaces are the namespaces a child run logged it made (other
// runs on the host may have their own).
func childNamespaces(out string) []string {
	var names []string
	for _, line := range strings.Split(out, "\n") {
		if _, ns, ok := strings.Cut(line, "namespaces: "); ok {
			names = append(names, strings.Fields(ns)...)
		}
	}
	return names
}

func requireRoot(t *testing.T) {
	t.Helper()
	needs.Root(t, "needs root for network namespaces")
}

func run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func suffix() string {
	var b [3]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
