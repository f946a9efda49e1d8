package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// The few netlink messages the wireguard configuration needs, written by
// hand: an rtnetlink RTM_NEWLINK of kind "wireguard" (ip link add wg0
// type wireguard) and RTM_DELLINK, and generic netlink's WG_CMD_SET_DEVICE
// (wg set), whose family id the generic netlink controller looks up by
// name.

// nlAttr appends one netlink attribute (type, value, padded to 4 bytes).
func nlAttr(b []byte, typ uint16, v []byte) []byte {
	b = binary.NativeEndian.AppendUint16(b, uint16(unix.NLA_HDRLEN+len(v)))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, v...)
	for len(b)%unix.NLA_ALIGNTO != 0 {
		b = append(b, 0)
	}
	return b
}

// nlNest appends a nested attribute holding attrs.
func nlNest(b []byte, typ uint16, attrs []byte) []byte {
	return nlAttr(b, typ|unix.NLA_F_NESTED, attrs)
}

func cstr(s string) []byte { return append([]byte(s), 0) }

func u16(v uint16) []byte { return binary.NativeEndian.AppendUint16(nil, v) }

// nlRequest sends one request (its header's type and flags, then body)
// on a netlink socket of proto and returns the answers' payloads up to
// the kernel's acknowledgement, or the error it answered with.
func nlRequest(proto int, typ, flags uint16, body []byte) ([][]byte, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	defer unix.Close(fd)
	msg := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(body))
	binary.NativeEndian.PutUint32(msg[0:], uint32(unix.NLMSG_HDRLEN+len(body)))
	binary.NativeEndian.PutUint16(msg[4:], typ)
	binary.NativeEndian.PutUint16(msg[6:], flags|unix.NLM_F_REQUEST|unix.NLM_F_ACK)
	binary.NativeEndian.PutUint32(msg[8:], 1) // sequence
	msg = append(msg, body...)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, err
	}
	var answers [][]byte
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return nil, err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return nil, fmt.Errorf("unreadable netlink answer: %w", err)
		}
		for _, m := range msgs {
			if m.Header.Type != unix.NLMSG_ERROR {
				// A copy: the next answer is read into buf.
				answers = append(answers, slices.Clone(m.Data))
				continue
			}
			if len(m.Data) < 4 {
				return nil, errors.New("short netlink error answer")
			}
			if errno := -int32(binary.NativeEndian.Uint32(m.Data)); errno != 0 {
				return nil, syscall.Errno(errno)
			}
			return answers, nil // the acknowledgement
		}
	}
}

// ifinfomsg is rtnetlink's link header: family AF_UNSPEC, the rest zero.
var ifinfomsg = make([]byte, unix.SizeofIfInfomsg)

// wgCreate adds a WireGuard interface called name.
func wgCreate(name string) error {
	body := nlAttr(append([]byte{}, ifinfomsg...), unix.IFLA_IFNAME, cstr(name))
	body = nlNest(body, unix.IFLA_LINKINFO, nlAttr(nil, unix.IFLA_INFO_KIND, cstr("wireguard")))
	if _, err := nlRequest(unix.NETLINK_ROUTE, unix.RTM_NEWLINK, unix.NLM_F_CREATE|unix.NLM_F_EXCL, body); err != nil {
		return fmt.Errorf("create WireGuard interface %s (is the kernel's wireguard module loaded?): %w", name, err)
	}
	return nil
}

// wgDelete removes interface name; one that is not there is fine.
func wgDelete(name string) error {
	body := nlAttr(append([]byte{}, ifinfomsg...), unix.IFLA_IFNAME, cstr(name))
	if _, err := nlRequest(unix.NETLINK_ROUTE, unix.RTM_DELLINK, 0, body); err != nil && !errors.Is(err, unix.ENODEV) {
		return fmt.Errorf("remove interface %s: %w", name, err)
	}
	return nil
}

// genlHeader is generic netlink's header: command and version.
func genlHeader(cmd, version uint8) []byte { return []byte{cmd, version, 0, 0} }

// genlFamily asks the generic netlink controller for family name's id.
func genlFamily(name string) (uint16, error) {
	body := nlAttr(genlHeader(unix.CTRL_CMD_GETFAMILY, 1), unix.CTRL_ATTR_FAMILY_NAME, cstr(name))
	answers, err := nlRequest(unix.NETLINK_GENERIC, unix.GENL_ID_CTRL, 0, body)
	if err != nil {
		return 0, fmt.Errorf("generic netlink family %s: %w", name, err)
	}
	for _, a := range answers {
		for attrs := a[min(len(a), unix.GENL_HDRLEN):]; len(attrs) >= unix.NLA_HDRLEN; {
			l := int(binary.NativeEndian.Uint16(attrs))
			typ := binary.NativeEndian.Uint16(attrs[2:]) &^ (unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER)
			if l < unix.NLA_HDRLEN || l > len(attrs) {
				break
			}
			if typ == unix.CTRL_ATTR_FAMILY_ID && l >= unix.NLA_HDRLEN+2 {
				return binary.NativeEndian.Uint16(attrs[unix.NLA_HDRLEN:]), nil
			}
			attrs = attrs[min(len(attrs), (l+unix.NLA_ALIGNTO-1)&^(unix.NLA_ALIGNTO-1)):]
		}
	}
	return 0, fmt.Errorf("generic netlink family %s: no id in the answer", name)
}

// wgSetDevice gives interface name t's private key, listen port and
// peer, which replaces any peer it had: what "wg set" does.
func wgSetDevice(name string, t wgTunnel) error {
	family, err := genlFamily(unix.WG_GENL_NAME)
	if err != nil {
		return err
	}
	if _, err := nlRequest(unix.NETLINK_GENERIC, family, 0, wgSetMsg(name, t)); err != nil {
		return fmt.Errorf("configure WireGuard interface %s through netlink: %w", name, err)
	}
	return nil
}

// wgSetMsg is WG_CMD_SET_DEVICE's generic netlink header and attributes
// for t on interface name.
func wgSetMsg(name string, t wgTunnel) []byte {
	ip := t.allowed.Addr().As4()
	allowed := nlAttr(nil, unix.WGALLOWEDIP_A_FAMILY, u16(unix.AF_INET))
	allowed = nlAttr(allowed, unix.WGALLOWEDIP_A_IPADDR, ip[:])
	allowed = nlAttr(allowed, unix.WGALLOWEDIP_A_CIDR_MASK, []byte{byte(t.allowed.Bits())})
	peer := nlAttr(nil, unix.WGPEER_A_PUBLIC_KEY, t.peer[:])
	peer = nlNest(peer, unix.WGPEER_A_ALLOWEDIPS, nlNest(nil, 0, allowed))
	body := genlHeader(unix.WG_CMD_SET_DEVICE, unix.WG_GENL_VERSION)
	body = nlAttr(body, unix.WGDEVICE_A_IFNAME, cstr(name))
	body = nlAttr(body, unix.WGDEVICE_A_PRIVATE_KEY, t.key[:])
	body = nlAttr(body, unix.WGDEVICE_A_LISTEN_PORT, u16(t.port))
	body = nlAttr(body, unix.WGDEVICE_A_FLAGS, binary.NativeEndian.AppendUint32(nil, unix.WGDEVICE_F_REPLACE_PEERS))
	return nlNest(body, unix.WGDEVICE_A_PEERS, nlNest(nil, 0, peer))
}
