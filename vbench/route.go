package vbench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/bootbench/bootbench/internal/bootparam"
	"github.com/bootbench/bootbench/internal/owner"
	"github.com/bootbench/bootbench/internal/route"
)

// RouteNet is the route benchmark's two host networks, each a namespace:
// the client's (198.18.1.0/24) and the server's (198.18.2.0/24), each
// with a tap that one of the board's ports is on, and a veth pair
// between the two (198.18.3.0/24) for the direct baseline, the board
// bypassed as by a cable.
type RouteNet struct {
	Client, Server string // namespace names
	Plan           route.Plan
	records        []string
}

// The route networks' devices and addresses.
const (
	routeTapClient    = "bbrt0"
	routeTapServer    = "bbrt1"
	directClient      = "bbdir0"
	directServer      = "bbdir1"
	directClientAddr  = "198.18.3.1"
	directServerAddr  = "198.18.3.2"
	routeClientAddr   = "198.18.1.2"
	routeServerAddr   = "198.18.2.2"
	routeBoardClient  = "198.18.1.1/24"
	routeBoardServer  = "198.18.2.1/24"
	routeClientSubnet = "198.18.1.0/24"
	routeServerSubnet = "198.18.2.0/24"
)

// routeMACs are the board's two routed ports.
var routeMACs = [2]net.HardwareAddr{
	{0x52, 0x54, 0x00, 0xbb, 0x01, 0x01},
	{0x52, 0x54, 0x00, 0xbb, 0x01, 0x02},
}

// NewRouteNet creates the two namespaces, their taps, routes toward the
// board, and the direct veth pair, recorded in cacheDir as this process's
// (Sweep removes what a killed one left).
func NewRouteNet(ctx context.Context, cacheDir string, plan route.Plan) (*RouteNet, error) {
	if _, err := exec.LookPath("ethtool"); err != nil {
		return nil, fmt.Errorf("the route benchmark's direct baseline needs ethtool (Debian package ethtool): %w", err)
	}
	r := &RouteNet{Plan: plan}
	var err error
	if r.Client, err = r.namespace(ctx, cacheDir); err == nil {
		r.Server, err = r.namespace(ctx, cacheDir)
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	c, s := r.Client, r.Server
	steps := [][]string{
		{"netns", "exec", c, "ip", "tuntap", "add", "dev", routeTapClient, "mode", "tap"},
		{"netns", "exec", c, "ip", "addr", "add", routeClientAddr + "/24", "dev", routeTapClient},
		{"netns", "exec", c, "ip", "link", "set", routeTapClient, "up"},
		{"netns", "exec", c, "ip", "route", "add", routeServerSubnet, "via", strings.TrimSuffix(routeBoardClient, "/24"), "dev", routeTapClient},
		{"netns", "exec", s, "ip", "tuntap", "add", "dev", routeTapServer, "mode", "tap"},
		{"netns", "exec", s, "ip", "addr", "add", routeServerAddr + "/24", "dev", routeTapServer},
		{"netns", "exec", s, "ip", "link", "set", routeTapServer, "up"},
		{"netns", "exec", s, "ip", "route", "add", routeClientSubnet, "via", strings.TrimSuffix(routeBoardServer, "/24"), "dev", routeTapServer},
		{"link", "add", directClient, "netns", c, "type", "veth", "peer", "name", directServer, "netns", s},
		{"netns", "exec", c, "ip", "addr", "add", directClientAddr + "/24", "dev", directClient},
		{"netns", "exec", s, "ip", "addr", "add", directServerAddr + "/24", "dev", directServer},
		{"netns", "exec", c, "ip", "link", "set", directClient, "up"},
		{"netns", "exec", s, "ip", "link", "set", directServer, "up"},
	}
	for _, st := range steps {
		if err := ipcmd(ctx, st...); err != nil {
			r.Close()
			return nil, fmt.Errorf("set up the route benchmark's networks: %w", err)
		}
	}
	// A veth pair hands whole 64 KiB segments across unless told not to:
	// the baseline then would not be carrying packets of the size under
	// test, as the board's taps do.
	for _, d := range [][2]string{{c, directClient}, {s, directServer}} {
		out, err := exec.CommandContext(ctx, "ip", "netns", "exec", d[0], "ethtool", "-K", d[1], "tso", "off", "gso", "off", "gro", "off").CombinedOutput()
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("turn off offloads on %s: %w: %s", d[1], err, strings.TrimSpace(string(out)))
		}
	}
	return r, nil
}

// namespace creates one namespace, recorded as this process's.
func (r *RouteNet) namespace(ctx context.Context, cacheDir string) (string, error) {
	var b [4]byte
	rand.Read(b[:])
	name := NamePrefix + hex.EncodeToString(b[:])
	record := filepath.Join(cacheDir, "vbench-"+name)
	if err := os.MkdirAll(record, 0o755); err != nil {
		return "", fmt.Errorf("route networks: %w", err)
	}
	if err := owner.Claim(record, name); err != nil {
		os.RemoveAll(record)
		return "", fmt.Errorf("route networks: %w", err)
	}
	if err := ipcmd(ctx, "netns", "add", name); err != nil {
		os.RemoveAll(record)
		return "", fmt.Errorf("create network namespace (needs root): %w", err)
	}
	r.records = append(r.records, record)
	if err := ipcmd(ctx, "netns", "exec", name, "ip", "link", "set", "lo", "up"); err != nil {
		return name, err
	}
	return name, nil
}

// Close deletes both namespaces, and with them the taps and the veth pair.
func (r *RouteNet) Close() error {
	var first error
	for _, ns := range []string{r.Client, r.Server} {
		if ns == "" {
			continue
		}
		if err := ipcmd(context.Background(), "netns", "del", ns); err != nil && first == nil {
			first = err
		}
	}
	for _, rec := range r.records {
		os.RemoveAll(rec)
	}
	return first
}

func (r *RouteNet) String() string {
	return fmt.Sprintf("client namespace %s (%s), server namespace %s (%s), direct %s–%s",
		r.Client, routeClientSubnet, r.Server, routeServerSubnet, directClientAddr, directServerAddr)
}

// Ports are the board's routed ports: their MACs, and the addresses the
// board gives them.
func (r *RouteNet) Ports() []bootparam.Port {
	return []bootparam.Port{
		{MAC: routeMACs[0].String(), Addr: routeBoardClient},
		{MAC: routeMACs[1].String(), Addr: routeBoardServer},
	}
}

// BoardPorts are the board's NICs on the two taps.
func (r *RouteNet) BoardPorts() []Port {
	return []Port{
		{Netns: r.Client, Tap: routeTapClient, MAC: routeMACs[0]},
		{Netns: r.Server, Tap: routeTapServer, MAC: routeMACs[1]},
	}
}

// Sweep sends the plan's traffic along path: through the board, or past
// it over the veth pair, telling mark as each test begins and ends.
func (r *RouteNet) Sweep(ctx context.Context, path route.Path, mark route.Mark) ([]route.Figure, error) {
	client := route.Side{Netns: r.Client, Iface: routeTapClient, Addr: routeClientAddr}
	server := route.Side{Netns: r.Server, Iface: routeTapServer, Addr: routeServerAddr}
	if path.Direct {
		client = route.Side{Netns: r.Client, Iface: directClient, Addr: directClientAddr}
		server = route.Side{Netns: r.Server, Iface: directServer, Addr: directServerAddr}
	}
	return path.Run(ctx, r.Plan, client, server, mark)
}
