// Package vbench is the virtual bench: a network namespace holding a tap
// device, and QEMU boards attached to it. bootbench's own servers open their
// sockets inside the namespace, so nothing the board sends or receives ever
// touches the host's networks.
//
//	n, err := vbench.NewNet(ctx, cacheDir)
//	defer n.Close()
//	n.Do(func() error { conn, err = netboot.ListenDHCP(n.Tap); return err })
//
// Net is a boot.Network and Board a harness.Target: the harness drives a
// virtual board exactly as it drives one on a real bench.
package vbench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/bootbench/bootbench/internal/owner"
	"golang.org/x/sys/unix"
)

// NamePrefix starts every namespace this package creates, so leftovers are
// easy to find (ip netns list | grep bootbench-).
const NamePrefix = "bootbench-"

// Net is a namespace with one tap device on 198.18.0.0/24 (RFC 2544's
// benchmarking range: never routed, never anyone's real network).
type Net struct {
	Name    string
	Tap     string
	HostIP  net.IP // our servers' address on the tap
	BoardIP net.IP // what the board is given
	Mask    net.IPMask
	// record is the directory that says which process owns the
	// namespace, so a bootbench killed with SIGKILL leaves nothing the
	// next one does not remove.
	record string
}

// hostPrefix is bootbench's address on the tap, with the subnet.
var hostPrefix = netip.MustParsePrefix("198.18.0.1/24")

// BoardAddr is the address a virtual board is given.
var BoardAddr = netip.MustParseAddr("198.18.0.10")

// NewNet creates a namespace and its tap, up and addressed, recorded in
// cacheDir as this process's (Sweep removes what a killed one left).
func NewNet(ctx context.Context, cacheDir string) (*Net, error) {
	var b [4]byte
	rand.Read(b[:])
	name := NamePrefix + hex.EncodeToString(b[:])
	n := &Net{
		Name:    name,
		Tap:     "bbtap0",
		HostIP:  net.IP(hostPrefix.Addr().AsSlice()),
		BoardIP: net.IP(BoardAddr.AsSlice()),
		Mask:    net.CIDRMask(hostPrefix.Bits(), 32),
		record:  filepath.Join(cacheDir, "vbench-"+name),
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("virtual bench needs the ip command (Debian package iproute2): %w", err)
	}
	if err := os.MkdirAll(n.record, 0o755); err != nil {
		return nil, fmt.Errorf("virtual bench: %w", err)
	}
	if err := owner.Claim(n.record, name); err != nil {
		os.RemoveAll(n.record)
		return nil, fmt.Errorf("virtual bench: %w", err)
	}
	if err := ipcmd(ctx, "netns", "add", name); err != nil {
		os.RemoveAll(n.record)
		return nil, fmt.Errorf("create network namespace (needs root): %w", err)
	}
	steps := [][]string{
		{"netns", "exec", name, "ip", "link", "set", "lo", "up"},
		// Without duplicate address detection the tap's link-local address
		// is usable the moment the board's NIC comes up, so the first
		// router solicitation from iPXE gets its answer, not the third.
		{"netns", "exec", name, "sysctl", "-qw", "net.ipv6.conf.default.accept_dad=0"},
		{"netns", "exec", name, "ip", "tuntap", "add", "dev", n.Tap, "mode", "tap"},
		{"netns", "exec", name, "ip", "addr", "add", hostPrefix.String(), "dev", n.Tap},
		{"netns", "exec", name, "ip", "link", "set", n.Tap, "up"},
	}
	for _, s := range steps {
		if err := ipcmd(ctx, s...); err != nil {
			n.Close()
			return nil, fmt.Errorf("set up virtual bench network: %w", err)
		}
	}
	return n, nil
}

// Interface is the tap the boards are on (boot.Network).
func (n *Net) Interface() string { return n.Tap }

// Addr is bootbench's address on the tap, with the subnet (boot.Network).
func (n *Net) Addr() netip.Prefix { return hostPrefix }

// Sweep removes the namespaces of virtual benches whose bootbench was
// killed, and the files of its boards, and returns the namespaces' names.
func Sweep(cacheDir string) []string {
	var swept []string
	for _, o := range owner.Orphans(filepath.Join(cacheDir, "qemu-*")) {
		os.RemoveAll(o.Dir)
	}
	for _, o := range owner.Orphans(filepath.Join(cacheDir, "vbench-"+NamePrefix+"*")) {
		if strings.HasPrefix(o.Note, NamePrefix) {
			if _, err := os.Stat(filepath.Join("/run/netns", o.Note)); err == nil {
				if ipcmd(context.Background(), "netns", "del", o.Note) == nil {
					swept = append(swept, o.Note)
				}
			}
		}
		os.RemoveAll(o.Dir)
	}
	return swept
}

func ipcmd(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Do runs fn on a thread that has entered the namespace. Sockets opened in
// fn belong to the namespace for their whole life, whichever thread uses
// them later.
func (n *Net) Do(fn func() error) error { return doIn(n.Name, fn) }

// doIn runs fn on a thread that has entered namespace name.
func doIn(name string, fn func() error) error {
	target, err := os.Open(filepath.Join("/run/netns", name))
	if err != nil {
		return fmt.Errorf("open namespace %s: %w", name, err)
	}
	defer target.Close()

	runtime.LockOSThread()
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("open current namespace: %w", err)
	}
	defer orig.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter namespace %s: %w", name, err)
	}
	ferr := fn()
	if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread is stuck in the wrong namespace: keep it locked so
		// the runtime discards it when this goroutine ends.
		return fmt.Errorf("leave namespace %s: %w", name, err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// Close deletes the namespace, and with it the tap.
func (n *Net) Close() error {
	err := ipcmd(context.Background(), "netns", "del", n.Name)
	if n.record != "" {
		os.RemoveAll(n.record)
	}
	return err
}

// Leftovers lists namespaces this package created that still exist.
func Leftovers() ([]string, error) {
	ents, err := os.ReadDir("/run/netns")
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var left []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), NamePrefix) {
			left = append(left, e.Name())
		}
	}
	return left, nil
}

// Go runs fn on a goroutine whose thread stays in the namespace for all of
// fn's life. This is for servers that open sockets as they go: pin/tftp
// opens one per transfer, in its serving goroutine. The thread is never
// handed back to the runtime (it exits with fn), so no other goroutine ever
// runs in the namespace by accident. Go returns once the thread is in.
func (n *Net) Go(fn func()) error {
	target, err := os.Open(filepath.Join("/run/netns", n.Name))
	if err != nil {
		return fmt.Errorf("open namespace %s: %w", n.Name, err)
	}
	entered := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET)
		target.Close()
		if err != nil {
			runtime.UnlockOSThread() // still in the original namespace
			entered <- fmt.Errorf("enter namespace %s: %w", n.Name, err)
			return
		}
		entered <- nil
		fn()
		// No UnlockOSThread: the runtime ends a thread that exits locked.
	}()
	return <-entered
}
