package route

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Run between two namespaces joined by a veth pair: a figure for every
// size and protocol, the client's MTU given back, and no iperf3 left.
func TestRun(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("BOOTBENCH_E2E") == "1" {
			t.Fatal("needs root for network namespaces")
		}
		t.Skip("needs root for network namespaces; BOOTBENCH_E2E=1 makes this a failure")
	}
	for _, c := range []string{"iperf3", "ethtool"} {
		if _, err := exec.LookPath(c); err != nil {
			if os.Getenv("BOOTBENCH_E2E") == "1" {
				t.Fatalf("needs %s (make deps installs it)", c)
			}
			t.Skip("needs " + c)
		}
	}
	a, b := "bootbench-routetest-a", "bootbench-routetest-b"
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
	ip("link", "add", "rt0", "netns", a, "type", "veth", "peer", "name", "rt1", "netns", b)
	ip("-n", a, "addr", "add", "198.18.3.1/24", "dev", "rt0")
	ip("-n", b, "addr", "add", "198.18.3.2/24", "dev", "rt1")
	ip("-n", a, "link", "set", "rt0", "up")
	ip("-n", b, "link", "set", "rt1", "up")
	// As the direct baseline has them: no offloads, so packets cross at
	// the size under test.
	for _, l := range [][]string{{a, "rt0"}, {b, "rt1"}} {
		if out, err := exec.Command("ip", "netns", "exec", l[0], "ethtool", "-K", l[1], "tso", "off", "gso", "off", "gro", "off").CombinedOutput(); err != nil {
			t.Fatalf("ethtool: %v: %s", err, out)
		}
	}

	plan := Plan{Sizes: []int{64, 1460}, Seconds: 1, UDPRate: 10e6}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	figs, err := Run(ctx, plan, Side{Netns: a, Iface: "rt0", Addr: "198.18.3.1"}, Side{Netns: b, Iface: "rt1", Addr: "198.18.3.2"})
	if err != nil {
		t.Fatal(err)
	}
	// Four one-second tests: a test that hangs to its end would take 10.
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("four one-second tests took %s", d)
	}
	ms := Metrics("direct", figs)
	got := map[string]float64{}
	for _, m := range ms {
		got[m.Name] = m.Value
	}
	for _, name := range []string{"tcp-throughput@64/direct", "tcp-throughput@1460/direct", "udp-throughput@64/direct", "udp-throughput@1460/direct"} {
		if !(got[name] > 0) {
			t.Errorf("%s = %v, want a rate (all: %v)", name, got[name], got)
		}
	}
	// 10 Mbit/s offered: what arrives is about that, whatever the size.
	if v := got["udp-throughput@1460/direct"]; v < 5e6 || v > 11e6 {
		t.Errorf("udp-throughput@1460/direct = %v, want about 10e6", v)
	}
	if _, ok := got["udp-loss@64/direct"]; !ok {
		t.Errorf("no udp-loss@64/direct")
	}
	for _, l := range [][]string{{a, "rt0"}, {b, "rt1"}} {
		out, _ := exec.Command("ip", "-n", l[0], "link", "show", l[1]).CombinedOutput()
		if !strings.Contains(string(out), "mtu 1500") {
			t.Errorf("MTU not given back: %s", out)
		}
	}
	if pids, _ := exec.Command("ip", "netns", "pids", b).Output(); len(strings.TrimSpace(string(pids))) > 0 {
		t.Errorf("processes left in the server namespace: %s", pids)
	}
}
