// Package benchnic readies a real bench's NIC for serving: an interface of
// this host that bootbench did not create and does not own. bootbench's
// address on it is added for the session when missing and removed after;
// nothing else about the interface, and no other interface, is touched.
//
//	nic, err := benchnic.Open(ctx, "enp3s0", netip.MustParsePrefix("198.18.5.1/24"), cacheDir)
//	defer nic.Close()
//	if nic.Added() { ... say so ... }
//
// A NIC is a boot.Network: servers open their sockets right here, in the
// network namespace bootbench runs in.
package benchnic

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bootbench/bootbench/internal/owner"
)

// NIC is the bench interface, ready to serve on.
type NIC struct {
	name   string
	addr   netip.Prefix
	added  bool
	record string // says which process added the address, while it is added
}

// Open checks that iface exists and is up, and gives it addr unless it has
// it. The address may not be on another interface: boards would be served
// from one NIC and answer to another.
func Open(ctx context.Context, iface string, addr netip.Prefix, cacheDir string) (*NIC, error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, fmt.Errorf("bench interface %s: no such interface here (interfaces: %s)", iface, interfaceList())
	}
	if ifi.Flags&net.FlagLoopback != 0 {
		return nil, fmt.Errorf("bench interface %s is the loopback interface: name the NIC the boards are cabled to", iface)
	}
	if ifi.Flags&net.FlagUp == 0 {
		return nil, fmt.Errorf("bench interface %s is down (bring it up: ip link set %s up)", iface, iface)
	}
	has, err := hasAddr(ifi, addr.Addr())
	if err != nil {
		return nil, err
	}
	n := &NIC{name: iface, addr: addr}
	if has {
		return n, nil
	}
	if other := whoHas(addr.Addr()); other != "" {
		return nil, fmt.Errorf("bench address %s is on %s, not on the bench interface %s", addr.Addr(), other, iface)
	}
	if err := n.add(ctx, cacheDir); err != nil {
		return nil, err
	}
	return n, nil
}

func (n *NIC) add(ctx context.Context, cacheDir string) error {
	n.record = filepath.Join(cacheDir, "benchnic-"+n.name)
	if err := os.MkdirAll(n.record, 0o755); err != nil {
		return fmt.Errorf("bench interface %s: %w", n.name, err)
	}
	if err := owner.Claim(n.record, n.name+" "+n.addr.String()); err != nil {
		return fmt.Errorf("bench interface %s: %w", n.name, err)
	}
	if err := ip(ctx, "addr", "add", n.addr.String(), "dev", n.name); err != nil {
		os.RemoveAll(n.record)
		return fmt.Errorf("add bench address %s to %s (needs root or CAP_NET_ADMIN): %w", n.addr, n.name, err)
	}
	n.added = true
	return nil
}

// Added reports whether Open added the address (and Close removes it).
func (n *NIC) Added() bool { return n.added }

// Interface is the NIC's name (boot.Network).
func (n *NIC) Interface() string { return n.name }

// Addr is bootbench's address on it, with the bench subnet (boot.Network).
func (n *NIC) Addr() netip.Prefix { return n.addr }

// Do runs fn here: a real NIC is in bootbench's own namespace.
func (n *NIC) Do(fn func() error) error { return fn() }

// Go runs fn on a goroutine.
func (n *NIC) Go(fn func()) error {
	go fn()
	return nil
}

// Close removes the address if Open added it.
func (n *NIC) Close() error {
	if !n.added {
		return nil
	}
	n.added = false
	err := ip(context.Background(), "addr", "del", n.addr.String(), "dev", n.name)
	os.RemoveAll(n.record)
	if err != nil {
		return fmt.Errorf("remove bench address %s from %s: %w", n.addr, n.name, err)
	}
	return nil
}

// Sweep removes bench addresses that a bootbench killed before it could
// remove them had added, and returns what it removed ("enp3s0 198.18.5.1/24").
func Sweep(cacheDir string) []string {
	var swept []string
	for _, o := range owner.Orphans(filepath.Join(cacheDir, "benchnic-*")) {
		iface, addr, ok := strings.Cut(o.Note, " ")
		if ok && ip(context.Background(), "addr", "del", addr, "dev", iface) == nil {
			swept = append(swept, o.Note)
		}
		os.RemoveAll(o.Dir)
	}
	return swept
}

func hasAddr(ifi *net.Interface, a netip.Addr) (bool, error) {
	addrs, err := ifi.Addrs()
	if err != nil {
		return false, fmt.Errorf("bench interface %s: %w", ifi.Name, err)
	}
	for _, x := range addrs {
		if ipn, ok := x.(*net.IPNet); ok {
			if got, ok := netip.AddrFromSlice(ipn.IP); ok && got.Unmap() == a {
				return true, nil
			}
		}
	}
	return false, nil
}

// whoHas names the interface that has a, or "".
func whoHas(a netip.Addr) string {
	ifs, _ := net.Interfaces()
	for i := range ifs {
		if ok, _ := hasAddr(&ifs[i], a); ok {
			return ifs[i].Name
		}
	}
	return ""
}

func interfaceList() string {
	ifs, err := net.Interfaces()
	if err != nil || len(ifs) == 0 {
		return "none"
	}
	var names []string
	for _, i := range ifs {
		state := "down"
		if i.Flags&net.FlagUp != 0 {
			state = "up"
		}
		names = append(names, i.Name+" ("+state+")")
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func ip(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
