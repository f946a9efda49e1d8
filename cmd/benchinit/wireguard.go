package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/bootbench/bootbench/contract/bootparam"
)

// The wireguard configuration: the board terminates a WireGuard tunnel
// from the host's client side and routes what it decrypts on to the
// server side (and the server's answers back into the tunnel). The host
// makes the keys for the run and sends them with the configuration's
// command:
//
//	bootbench route wireguard key=<board's private key> peer=<client's public key>
//	    addr=<board's tunnel address/len> port=<UDP port> allowed=<client's tunnel address/32>
//	    [seed=<32 random bytes, base64>]
//
// The kernel's own WireGuard does the work, configured through netlink
// (wireguard_netlink.go); the board's firewall stays as in plain. The
// seed goes into the kernel's random pool first (seedRandom): the kernel's
// WireGuard drops every handshake message until that pool is ready.

// wgIface is the board's tunnel interface.
const wgIface = "wg0"

// wgTunnel is what the host's command asks for.
type wgTunnel struct {
	key, peer [32]byte
	addr      netip.Prefix // the board's end
	port      uint16
	allowed   netip.Prefix // the client's end, let in and routed back
	seed      []byte       // for the kernel's random pool, if sent
}

// parseWireGuard reads the words after the configuration's name.
func parseWireGuard(args string) (wgTunnel, error) {
	var t wgTunnel
	seen := map[string]bool{}
	for _, w := range strings.Fields(args) {
		k, v, _ := strings.Cut(w, "=")
		var err error
		switch k {
		case "key":
			err = parseKey(v, &t.key)
		case "peer":
			err = parseKey(v, &t.peer)
		case "addr":
			t.addr, err = netip.ParsePrefix(v)
		case "allowed":
			t.allowed, err = netip.ParsePrefix(v)
		case "seed":
			t.seed, err = parseSeed(v)
		case "port":
			var n uint64
			n, err = strconv.ParseUint(v, 10, 16)
			t.port = uint16(n)
		default:
			return t, fmt.Errorf("wireguard: unknown setting %q", w)
		}
		if err != nil {
			return t, fmt.Errorf("wireguard: %s: %v", k, err)
		}
		seen[k] = true
	}
	for _, k := range []string{"key", "peer", "addr", "port", "allowed"} {
		if !seen[k] {
			return t, fmt.Errorf("wireguard: the host's command lacks %s=", k)
		}
	}
	if !t.addr.Addr().Is4() || !t.allowed.Addr().Is4() {
		return t, fmt.Errorf("wireguard: tunnel addresses %s and %s are not IPv4", t.addr, t.allowed)
	}
	return t, nil
}

// parseSeed reads the seed for the kernel's random pool: 32 bytes, in
// base64.
func parseSeed(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != 32 {
		return nil, fmt.Errorf("%q is not 32 bytes in base64", s)
	}
	return b, nil
}

func parseKey(s string, k *[32]byte) error {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != len(k) {
		return fmt.Errorf("%q is not a base64 WireGuard key", s)
	}
	copy(k[:], b)
	return nil
}

// wgUp creates the tunnel's interface, gives it its key, port and peer,
// and its address, which routes the tunnel's subnet into it.
func wgUp(t wgTunnel) error {
	if err := wgCreate(wgIface); err != nil {
		return err
	}
	if err := wgSetDevice(wgIface, t); err != nil {
		wgDelete(wgIface)
		return err
	}
	a := t.addr.Addr().As4()
	if err := setAddr(wgIface, net.IP(a[:]), net.CIDRMask(t.addr.Bits(), 32)); err != nil {
		wgDelete(wgIface)
		return err
	}
	return nil
}

// describe is the tunnel as the board's report shows it.
func (t wgTunnel) describe() string {
	return fmt.Sprintf("wireguard %s: %s, port %d, peer %s allowed %s",
		wgIface, t.addr, t.port, base64.StdEncoding.EncodeToString(t.peer[:]), t.allowed)
}

// rulesOf is the configuration whose firewall rules config has: the
// wireguard configuration routes with plain's (none).
func rulesOf(config string) string {
	if config == bootparam.ConfigWireGuard {
		return bootparam.ConfigPlain
	}
	return config
}

// tunnelUp brings up the tunnel a configuration asks for with args, if
// it is the wireguard configuration; any other takes no arguments.
func tunnelUp(out io.Writer, config, args string) error {
	if config != bootparam.ConfigWireGuard {
		if args != "" {
			return fmt.Errorf("configuration %s takes no settings, the host sent %q", config, args)
		}
		return nil
	}
	t, err := parseWireGuard(args)
	if err != nil {
		return err
	}
	if t.seed != nil {
		if err := seedRandom(out, t.seed); err != nil {
			return err
		}
	}
	if err := wgUp(t); err != nil {
		return err
	}
	fmt.Fprintln(out, t.describe())
	return nil
}
