package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The simulated bench's route networks: the bench host's two NICs lan0 and
// wan0, each cabled (a veth pair) to a switch port of its own in the
// switch's namespace, where one of the board's two extra NICs is on the
// same bridge. They exist before bootbench starts, as a real bench's do.
const (
	simLANMAC = "52:54:00:bb:06:01"
	simWANMAC = "52:54:00:bb:06:02"
)

// cableRoutePorts wires the board's two routed ports to the bench host's
// lan0 and wan0 through the switch. lan0 is left up with an address of
// its owner's, wan0 down with none: both must come back as they were.
func (s *simBench) cableRoutePorts() {
	t := s.t
	for i, side := range []struct{ br, host, port, tap, mac string }{
		{"brlan", "lan0", "sw-lan0", "rtlan", simLANMAC},
		{"brwan", "wan0", "sw-wan0", "rtwan", simWANMAC},
	} {
		sh(t, "ip", "-n", s.sw, "link", "add", side.br, "type", "bridge")
		sh(t, "ip", "-n", s.sw, "link", "set", side.br, "up")
		sh(t, "ip", "-n", s.sw, "link", "add", side.port, "type", "veth", "peer", "name", side.host, "netns", s.ns)
		sh(t, "ip", "-n", s.sw, "link", "set", side.port, "master", side.br, "up")
		sh(t, "ip", "-n", s.sw, "tuntap", "add", "dev", side.tap, "mode", "tap")
		sh(t, "ip", "-n", s.sw, "link", "set", side.tap, "master", side.br, "up")
		// No vnet headers: the host then hands the board frames of the
		// size a wire carries, segmented, as a NIC's offload would
		// before the cable, not 64 KiB segments.
		s.nics += fmt.Sprintf(" \\\n  -netdev tap,id=r%d,ifname=%s,script=no,downscript=no,vnet_hdr=off -device virtio-net-pci,netdev=r%d,mac=%s", i, side.tap, i, side.mac)
	}
	sh(t, "ip", "-n", s.ns, "addr", "add", "198.18.77.5/24", "dev", "lan0")
	sh(t, "ip", "-n", s.ns, "link", "set", "lan0", "up")
}

// routeState is the bench host's two route NICs as ip shows them, without
// what changes by itself (counters, link-local addresses).
func (s *simBench) routeState() string {
	var out []string
	for _, dev := range []string{"lan0", "wan0"} {
		line := sh(s.t, "ip", "-n", s.ns, "-o", "link", "show", "dev", dev)
		flags, _, _ := strings.Cut(line, ">")
		mtu := strings.Fields(line[strings.Index(line, "mtu"):])[1]
		addrs := strings.Fields(sh(s.t, "ip", "-n", s.ns, "-o", "-4", "addr", "show", "dev", dev))
		var v4 []string
		for i, f := range addrs {
			if f == "inet" && i+1 < len(addrs) {
				v4 = append(v4, addrs[i+1])
			}
		}
		out = append(out, fmt.Sprintf("%s %s> mtu %s %v", dev, flags[strings.Index(flags, "<"):], mtu, v4))
	}
	return strings.Join(out, "; ")
}

// TestE2ERealBenchRoute runs the route benchmark on a board of a simulated
// bench, its two routed ports cabled to two host NICs bootbench did not
// create and the inventory names: the run stores every size × direction
// of two configurations and the direct baseline, and the two NICs are
// afterwards where and as they were. (TestE2ERoute runs every
// configuration; what differs here is the NICs, which two show as well.)
func TestE2ERealBenchRoute(t *testing.T) {
	requireSimBench(t)
	requireRoute(t)
	s := newSwitchedBench(t, false)
	s.cableRoutePorts()
	s.writePowerScripts("ip netns exec " + s.sw) // with the routed ports
	inv := s.inventory(s.commandPower())
	b, err := os.ReadFile(inv)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "boards:\n", "  route: {client: lan0, server: wan0}\nboards:\n", 1)
	text += fmt.Sprintf("    route_ports: [%q, %q]\n", simLANMAC, simWANMAC)
	if err := os.WriteFile(inv, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	before := s.routeState()
	db := filepath.Join(t.TempDir(), "results.db")
	r := s.run(db, "run", "--inventory", inv, "--board", "pc1", "--bench", "route", "--route-sizes", "64,1460",
		"--route-configs", "plain,firewall", "--seconds", "1", "--retries", "0")
	t.Logf("bootbench's progress:\n%s", r.stderr)
	defer assertNoIPerf(t)
	defer assertNothingLeft(t, r.stderr)
	defer s.assertBoardOff()
	if r.code != 0 {
		t.Fatalf("bootbench run --bench route: exit %d", r.code)
	}
	for _, want := range []string{
		"moved lan0 (up, 198.18.77.5/24, mtu 1500) into namespace bootbench-rt-",
		"moved wan0 (down, no address, mtu 1500) into namespace bootbench-rt-",
		"route networks: client 198.18.1.2 on lan0",
		"route networks: put back as they were",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("progress lacks %q", want)
		}
	}
	if after := s.routeState(); after != before {
		t.Errorf("the route NICs: before the run\n  %s\nafter\n  %s", before, after)
	}
	m := runIDRE.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatal("no run id in the progress output")
	}
	assertRouteRun(t, db, m[1], "plain", "firewall")
}
