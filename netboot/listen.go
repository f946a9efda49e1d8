package netboot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"
)

// ProxyDHCPPort is where PXE clients send their request to a proxyDHCP
// server (PXE specification 2.1).
const ProxyDHCPPort = 4011

// bindToDevice returns a ListenConfig whose sockets receive only what comes
// in on iface: with the address alone, Linux (a weak-host stack) would
// accept packets for it arriving on any interface.
func bindToDevice(iface string) net.ListenConfig {
	return net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptString(int(fd), unix.SOL_SOCKET, unix.SO_BINDTODEVICE, iface)
		}); err != nil {
			return err
		}
		return serr
	}}
}

// ListenUDP opens a UDP socket on addr:port that hears only iface: TFTP on
// 69, proxyDHCP on 4011.
func ListenUDP(iface string, addr netip.Addr, port uint16) (net.PacketConn, error) {
	lc := bindToDevice(iface)
	ap := netip.AddrPortFrom(addr, port)
	c, err := lc.ListenPacket(context.Background(), "udp4", ap.String())
	if err != nil {
		return nil, fmt.Errorf("listen on %s (%s): %w", ap, iface, hint(err))
	}
	return c, nil
}

// ListenTCP opens a TCP listener on addr:port that hears only iface: HTTP.
func ListenTCP(iface string, addr netip.Addr, port uint16) (net.Listener, error) {
	lc := bindToDevice(iface)
	ap := netip.AddrPortFrom(addr, port)
	l, err := lc.Listen(context.Background(), "tcp4", ap.String())
	if err != nil {
		return nil, fmt.Errorf("listen on %s (%s): %w", ap, iface, hint(err))
	}
	return l, nil
}

// hint says what to do about the usual reasons a bench port cannot be had.
func hint(err error) error {
	switch {
	case errors.Is(err, unix.EADDRINUSE):
		return fmt.Errorf("%w (another server holds the port: a dnsmasq, tftpd or another bootbench on this bench?)", err)
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return fmt.Errorf("%w (ports below 1024 need root or CAP_NET_BIND_SERVICE)", err)
	case errors.Is(err, unix.EADDRNOTAVAIL):
		return fmt.Errorf("%w (the address is not on this host)", err)
	}
	return err
}
