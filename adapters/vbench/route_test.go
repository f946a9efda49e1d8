package vbench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/adapters/route"
	"github.com/bootbench/bootbench/internal/testkit/needs"
)

// The route networks without a board: the direct baseline runs over the
// veth pair, the board's taps are there to be opened, and Close leaves
// no namespace, record or process behind.
func TestRouteNet(t *testing.T) {
	needs.Root(t, "needs root for network namespaces")
	needs.Commands(t, "ip", "iperf3", "ethtool")
	cache := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rn, err := NewRouteNet(ctx, cache, route.Plan{Sizes: []int{256}, Seconds: 1, UDPRate: 5e6})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			rn.Close()
		}
	}()
	for _, p := range rn.BoardPorts() {
		f, err := openTap(p.Netns, p.Tap, 0)
		if err != nil {
			t.Fatalf("board port %s: %v", p.MAC, err)
		}
		f.Close()
	}
	if got := rn.Ports(); len(got) != 2 || got[0].Addr != "198.18.1.1/24" || got[1].MAC != "52:54:00:bb:01:02" {
		t.Errorf("ports %+v", got)
	}
	figs, err := rn.Sweep(ctx, route.Path{Config: route.Direct, Direct: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 4 || !(figs[0].Test.Received > 0) || !figs[1].Reverse || figs[2].Proto != "udp" {
		t.Errorf("direct sweep: %+v", figs)
	}
	// Offloads off: the veth pair carries packets of the size under test.
	out, err := exec.Command("ip", "netns", "exec", rn.Client, "ethtool", "-k", "bbdir0").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "tcp-segmentation-offload: off") {
		t.Errorf("offloads of bbdir0: %v\n%s", err, out)
	}
	names := []string{rn.Client, rn.Server}
	if err := rn.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	for _, ns := range names {
		if _, err := os.Stat(filepath.Join("/run/netns", ns)); err == nil {
			t.Errorf("namespace %s left", ns)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "routenet-*")); len(left) > 0 {
		t.Errorf("records left: %v", left)
	}
}
