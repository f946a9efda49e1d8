// Package vbench is the virtual bench: a network namespace holding a tap
// device, and QEMU boards attached to it. bootbench's own servers open their
// sockets inside the namespace, so nothing the board sends or receives ever
// touches the host's networks.
//
//	n, err := vbench.NewNet(ctx, "bootbench-1a2b3c4d")
//	defer n.Close()
//	n.Do(func() error { conn, err = netboot.ListenDHCP(n.Tap); return err })
package vbench

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

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
}

// NewNet creates the namespace and its tap, up and addressed.
func NewNet(ctx context.Context, name string) (*Net, error) {
	if !strings.HasPrefix(name, NamePrefix) {
		name = NamePrefix + name
	}
	n := &Net{
		Name:    name,
		Tap:     "bbtap0",
		HostIP:  net.IPv4(198, 18, 0, 1).To4(),
		BoardIP: net.IPv4(198, 18, 0, 10).To4(),
		Mask:    net.CIDRMask(24, 32),
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("virtual bench needs the ip command (Debian package iproute2): %w", err)
	}
	if err := ipcmd(ctx, "netns", "add", name); err != nil {
		return nil, fmt.Errorf("create network namespace (needs root): %w", err)
	}
	steps := [][]string{
		{"netns", "exec", name, "ip", "link", "set", "lo", "up"},
		// Without duplicate address detection the tap's link-local address
		// is usable the moment the board's NIC comes up, so the first
		// router solicitation from iPXE gets its answer, not the third.
		{"netns", "exec", name, "sysctl", "-qw", "net.ipv6.conf.default.accept_dad=0"},
		{"netns", "exec", name, "ip", "tuntap", "add", "dev", n.Tap, "mode", "tap"},
		{"netns", "exec", name, "ip", "addr", "add", "198.18.0.1/24", "dev", n.Tap},
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
func (n *Net) Do(fn func() error) error {
	target, err := os.Open(filepath.Join("/run/netns", n.Name))
	if err != nil {
		return fmt.Errorf("open namespace %s: %w", n.Name, err)
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
		return fmt.Errorf("enter namespace %s: %w", n.Name, err)
	}
	ferr := fn()
	if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread is stuck in the wrong namespace: keep it locked so
		// the runtime discards it when this goroutine ends.
		return fmt.Errorf("leave namespace %s: %w", n.Name, err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// Close deletes the namespace, and with it the tap.
func (n *Net) Close() error {
	return ipcmd(context.Background(), "netns", "del", n.Name)
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
