package route

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bootbench/bootbench/contract/bootparam"
)

// The WireGuard configurations. In "wireguard" the client's traffic goes
// through a WireGuard tunnel that the board terminates: the board decrypts
// it and routes it on to the server, and encrypts the server's answers
// back into the tunnel. Its baseline, "direct-wireguard", is the same
// tunnel between the two hosts over the direct link, the board bypassed.
// Both carry the packet sizes of every configuration as the tunnel's
// inner packets: above 1388 bytes of payload an outer packet (inner +
// 60 bytes: IPv4, UDP and WireGuard's header and tag) exceeds a
// 1500-byte link and is sent in two fragments, as on any WireGuard link
// whose MTU has not been lowered to fit.
const (
	WireGuard       = bootparam.ConfigWireGuard
	DirectWireGuard = "direct-wireguard"
)

// TunnelMaxPayload is the most a test's packet carries through a tunnel:
// what fits WireGuard's own default MTU, 1420 (the board's end's), less
// the IPv4 and TCP headers (HeaderBytes), so that an outer
// packet (inner + 60) fits a 1500-byte link unfragmented. Fragmented
// outer packets to the virtual board were not carried (a TCP test at
// 1400 or 1460 bytes sent nothing), and a UDP datagram bigger than the
// board's end takes fails iperf3's reverse test. The larger sizes'
// figures keep their names.
const TunnelMaxPayload = 1420 - HeaderBytes

// tunnelAdvMSS is the segment size either host asks for through a
// tunnel: TunnelMaxPayload's, as the MTUs already make it; said on the
// routes too, for a host whose tunnel interface keeps a larger MTU.
const tunnelAdvMSS = "1380"

// TunnelPort is the UDP port the tunnel's far end (the board, or the
// server host in the baseline) listens on.
const TunnelPort = 51820

// The tunnel's inner addresses: the far end (board or server host) and
// the client's. The subnet is the tunnel's own, apart from the bench's.
var (
	TunnelFar    = netip.MustParsePrefix("198.18.4.1/24")
	TunnelClient = netip.MustParsePrefix("198.18.4.2/24")
)

// Key is a WireGuard (Curve25519) key.
type Key [32]byte

// String is the key as WireGuard's tools write it: base64.
func (k Key) String() string { return base64.StdEncoding.EncodeToString(k[:]) }

// KeyPair is a private key and its public key.
type KeyPair struct {
	Private, Public Key
}

// NewKeyPair makes a fresh key pair, what "wg genkey | wg pubkey" does.
func NewKeyPair() (KeyPair, error) {
	k, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return KeyPair{}, fmt.Errorf("WireGuard key: %w", err)
	}
	var p KeyPair
	copy(p.Private[:], k.Bytes())
	copy(p.Public[:], k.PublicKey().Bytes())
	return p, nil
}

// Tunnel is one run's WireGuard tunnel: the client's keys and the far
// end's, made afresh for the run, and a seed for the board's random pool.
type Tunnel struct {
	Client, Far KeyPair
	// Seed is 32 random bytes the board credits to its kernel's random
	// pool before it brings its end up. The kernel's WireGuard drops
	// every handshake message it receives until that pool is ready
	// (Linux 6.1, receive.c: !rng_is_initialized()), and a board seconds
	// after boot, with no random device and little interrupt jitter
	// (every virtual board here, under TCG), has not filled it: the
	// board never answered the client's first handshake, and a run of
	// the wireguard configuration alone failed at its first test. A
	// boot loader passes a seed the same way (random.trust_bootloader).
	Seed Key
}

// NewTunnel makes a tunnel's two key pairs.
func NewTunnel() (*Tunnel, error) {
	c, err := NewKeyPair()
	if err != nil {
		return nil, err
	}
	f, err := NewKeyPair()
	if err != nil {
		return nil, err
	}
	t := &Tunnel{Client: c, Far: f}
	if _, err := rand.Read(t.Seed[:]); err != nil {
		return nil, fmt.Errorf("WireGuard tunnel: random seed: %w", err)
	}
	return t, nil
}

// BoardCommand is what the host's command for the wireguard
// configuration carries after its name: the board's private key, the
// client's public key, the board's tunnel address and port, the client's
// tunnel address, the one the board lets into the tunnel, and the seed
// for the board's random pool.
func (t *Tunnel) BoardCommand() string {
	return fmt.Sprintf("key=%s peer=%s addr=%s port=%d allowed=%s/32 seed=%s",
		t.Far.Private, t.Client.Public, TunnelFar, TunnelPort, TunnelClient.Addr(), t.Seed)
}

// ToBoard brings up the client's end of the tunnel to a board that
// terminates it: a WireGuard interface on the client's side whose peer is
// the board's client-side port (board), through which the client reaches
// the server's address, and on the server's side a route back to the
// client's tunnel address through the board's server-side port
// (boardServer). It returns the client's side of the tunnel, and what
// takes it all down again.
func (t *Tunnel) ToBoard(ctx context.Context, client, server Side, board, boardServer netip.Addr) (Side, func(), error) {
	srv, err := netip.ParseAddr(server.Addr)
	if err != nil {
		return Side{}, nil, fmt.Errorf("WireGuard tunnel: server address %q: %w", server.Addr, err)
	}
	// The board's own tunnel address is let in too: its ICMP errors come
	// from it, "fragmentation needed" among them, without which a
	// segment too big for the server's side is never sent smaller.
	c, down, err := t.end(ctx, client, t.Client.Private, t.Far.Public, TunnelClient, netip.AddrPortFrom(board, TunnelPort), netip.PrefixFrom(srv, 32), netip.PrefixFrom(TunnelFar.Addr(), 32))
	if err != nil {
		return Side{}, nil, err
	}
	back := []string{"route", "add", TunnelClient.Addr().String() + "/32", "via", boardServer.String(), "dev", server.Iface, "advmss", tunnelAdvMSS}
	if err := server.ip(ctx, back...); err != nil {
		down()
		return Side{}, nil, fmt.Errorf("WireGuard tunnel: %w", err)
	}
	return c, func() {
		back[0], back[1] = "route", "del"
		server.ip(context.WithoutCancel(ctx), back...)
		down()
	}, nil
}

// Direct brings up the tunnel between the two hosts over the direct
// link, the server's end listening where the board's would, and returns
// both ends' sides, and what takes them down.
func (t *Tunnel) Direct(ctx context.Context, client, server Side) (Side, Side, func(), error) {
	caddr, err := netip.ParseAddr(client.Addr)
	if err != nil {
		return Side{}, Side{}, nil, fmt.Errorf("WireGuard tunnel: client address %q: %w", client.Addr, err)
	}
	saddr, err := netip.ParseAddr(server.Addr)
	if err != nil {
		return Side{}, Side{}, nil, fmt.Errorf("WireGuard tunnel: server address %q: %w", server.Addr, err)
	}
	s, sdown, err := t.end(ctx, server, t.Far.Private, t.Client.Public, TunnelFar, netip.AddrPortFrom(caddr, TunnelPort), netip.PrefixFrom(TunnelClient.Addr(), 32))
	if err != nil {
		return Side{}, Side{}, nil, err
	}
	c, cdown, err := t.end(ctx, client, t.Client.Private, t.Far.Public, TunnelClient, netip.AddrPortFrom(saddr, TunnelPort), netip.PrefixFrom(TunnelFar.Addr(), 32))
	if err != nil {
		sdown()
		return Side{}, Side{}, nil, err
	}
	return c, s, func() { cdown(); sdown() }, nil
}

// end brings up one end of a tunnel on s: a WireGuard interface with
// address addr, listening on TunnelPort, whose one peer is at endpoint
// and is let in for allowed, which is routed into the tunnel, and for
// alsoAllowed.
func (t *Tunnel) end(ctx context.Context, s Side, key, peer Key, addr netip.Prefix, endpoint netip.AddrPort, allowed netip.Prefix, alsoAllowed ...netip.Prefix) (Side, func(), error) {
	name, down, err := wgLink(ctx, s)
	if err != nil {
		return Side{}, nil, err
	}
	fail := func(err error) (Side, func(), error) {
		down()
		return Side{}, nil, fmt.Errorf("WireGuard tunnel on %s: %w", name, err)
	}
	set := s.command(ctx, "wg", "set", name, "listen-port", strconv.Itoa(TunnelPort), "private-key", "/dev/stdin",
		"peer", peer.String(), "endpoint", endpoint.String(), "allowed-ips", prefixList(allowed, alsoAllowed...))
	set.Stdin = strings.NewReader(key.String() + "\n")
	if out, err := set.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("wg set: %w: %s", err, bytes.TrimSpace(out)))
	}
	for _, st := range [][]string{
		{"addr", "add", addr.String(), "dev", name},
		{"link", "set", name, "up"},
		{"route", "replace", allowed.String(), "dev", name, "advmss", tunnelAdvMSS},
	} {
		if err := s.ip(ctx, st...); err != nil {
			return fail(err)
		}
	}
	return Side{Netns: s.Netns, Iface: name, Addr: addr.Addr().String()}, down, nil
}

// wgLink creates a WireGuard interface on s's side: the kernel's, or,
// where the host's kernel has none, wireguard-go's (Debian package
// wireguard-go), a userspace one on a tun device. It returns the
// interface's name and what removes it.
func wgLink(ctx context.Context, s Side) (string, func(), error) {
	if _, err := exec.LookPath("wg"); err != nil {
		return "", nil, fmt.Errorf("the wireguard configurations need wg on this host (Debian package wireguard-tools): %w", err)
	}
	var b [4]byte
	rand.Read(b[:])
	// A name no other run's interface has: wireguard-go's control
	// socket is named by it, outside any namespace.
	name := "bbwg" + hex.EncodeToString(b[:])
	del := func() { s.ip(context.WithoutCancel(ctx), "link", "del", name) }
	err := s.ip(ctx, "link", "add", name, "type", "wireguard")
	if err == nil {
		return name, del, nil
	}
	if !strings.Contains(err.Error(), "Unknown device type") && !strings.Contains(err.Error(), "not supported") {
		return "", nil, fmt.Errorf("WireGuard interface: %w", err)
	}
	if _, lerr := exec.LookPath("wireguard-go"); lerr != nil {
		return "", nil, fmt.Errorf("this host's kernel has no WireGuard (%v), and there is no wireguard-go (Debian package wireguard-go) to stand in: %w", err, lerr)
	}
	cmd := s.command(context.WithoutCancel(ctx), "wireguard-go", "-f", name)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start wireguard-go: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		del()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	// Up once its control socket takes connections, which wg needs.
	for deadline := time.Now().Add(5 * time.Second); ; {
		if uapiUp(ctx, name) {
			return name, stop, nil
		}
		select {
		case <-exited:
			return "", nil, fmt.Errorf("wireguard-go %s exited: %s", name, bytes.TrimSpace(out.Bytes()))
		case <-ctx.Done():
			stop()
			return "", nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, errors.New("wireguard-go " + name + " did not come up within 5s")
		}
	}
}

// uapiSocket is where wireguard-go listens for wg's requests to the
// interface name: a path of its own, the same in every namespace.
func uapiSocket(name string) string { return "/var/run/wireguard/" + name + ".sock" }

// uapiUp reports whether wireguard-go's control socket for name takes
// connections. It asks by connecting, not with wg: wg removes a socket
// that refuses it, taking it for a dead daemon's, and wireguard-go's
// refuses between its bind and its listen; wireguard-go then found its
// socket gone and exited ("Failed to listen on uapi socket: no such file
// or directory"), on a host busy enough to stop it in between.
func uapiUp(ctx context.Context, name string) bool {
	c, err := new(net.Dialer).DialContext(ctx, "unix", uapiSocket(name))
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// ip runs one ip(8) command on s's side.
func (s Side) ip(ctx context.Context, args ...string) error {
	out, err := s.command(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// A Path is the way one sweep's traffic takes.
type Path struct {
	Config string // the configuration its metrics are named by
	Direct bool   // past the board, over the direct link
	// Tunnel, when set, carries the traffic through WireGuard: to the
	// board, whose client- and server-side port addresses are Board, or,
	// on the direct link, between the two hosts.
	Tunnel *Tunnel
	Board  [2]netip.Addr
}

// Run sends plan's traffic along p from the client's side to the
// server's (those of the board's path, or of the direct link when
// p.Direct): what a Router's Sweep does with the sides p chooses.
func (p Path) Run(ctx context.Context, plan Plan, client, server Side, mark Mark) ([]Figure, error) {
	if p.Tunnel != nil {
		var down func()
		var err error
		if p.Direct {
			client, server, down, err = p.Tunnel.Direct(ctx, client, server)
		} else {
			client, down, err = p.Tunnel.ToBoard(ctx, client, server, p.Board[0], p.Board[1])
		}
		if err != nil {
			return nil, err
		}
		defer down()
		plan.MaxPayload = TunnelMaxPayload
	}
	return Run(ctx, plan, client, server, mark)
}

// prefixList is prefixes as wg's allowed-ips takes them.
func prefixList(first netip.Prefix, more ...netip.Prefix) string {
	l := first.String()
	for _, p := range more {
		l += "," + p.String()
	}
	return l
}
