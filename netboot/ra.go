package netboot

import (
	"context"
	"fmt"
	"net"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv6"
)

// RA answers IPv6 router solicitations with an advertisement that says there
// is no IPv6 router here: no prefix, router lifetime zero, no DHCPv6. iPXE
// finishes configuring an interface only when both DHCPv4 and its IPv6
// configuration are done; left unanswered, the IPv6 side waits out its
// timeout, which on an emulated board costs tens of seconds on every boot.
type RA struct {
	conn *icmp.PacketConn
	pc   *ipv6.PacketConn
	ifi  *net.Interface
}

// ListenRA opens the ICMPv6 socket on iface. Like ListenDHCP it must be
// called in the bench network's namespace.
func ListenRA(iface string) (*RA, error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, fmt.Errorf("router advertisements on %s: %w", iface, err)
	}
	c, err := icmp.ListenPacket("ip6:ipv6-icmp", "::")
	if err != nil {
		return nil, fmt.Errorf("router advertisements on %s: %w", iface, err)
	}
	pc := c.IPv6PacketConn()
	// NDP messages must carry hop limit 255 (RFC 4861 §6.1.2): receivers
	// drop anything else as possibly forwarded from off-link.
	pc.SetMulticastHopLimit(255)
	pc.SetHopLimit(255)
	pc.SetMulticastInterface(ifi)
	if err := pc.JoinGroup(ifi, &net.IPAddr{IP: net.ParseIP("ff02::2")}); err != nil {
		c.Close()
		return nil, fmt.Errorf("join all-routers group on %s: %w", iface, err)
	}
	var f ipv6.ICMPFilter
	f.SetAll(true)
	f.Accept(ipv6.ICMPTypeRouterSolicitation)
	pc.SetICMPFilter(&f)
	// The socket hears solicitations from every interface; only the
	// bench's may be answered.
	if err := pc.SetControlMessage(ipv6.FlagInterface, true); err != nil {
		c.Close()
		return nil, fmt.Errorf("router advertisements on %s: %w", iface, err)
	}
	return &RA{conn: c, pc: pc, ifi: ifi}, nil
}

// Serve answers solicitations until ctx ends.
func (r *RA) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { r.conn.SetReadDeadline(time.Now()) })
	defer stop()
	defer r.conn.Close()
	ra := icmp.Message{
		Type: ipv6.ICMPTypeRouterAdvertisement,
		// Cur hop limit, flags (M=0, O=0), router lifetime 0, reachable
		// time, retrans timer: all zero, and no options.
		Body: &icmp.RawBody{Data: make([]byte, 12)},
	}
	b, err := ra.Marshal(nil) // the kernel fills in the ICMPv6 checksum
	if err != nil {
		return err
	}
	buf := make([]byte, 1500)
	for {
		n, cm, _, err := r.pc.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("read router solicitation: %w", err)
		}
		if cm == nil || cm.IfIndex != r.ifi.Index {
			continue
		}
		m, err := icmp.ParseMessage(58, buf[:n])
		if err != nil || m.Type != ipv6.ICMPTypeRouterSolicitation {
			continue
		}
		dst := &net.IPAddr{IP: net.ParseIP("ff02::1"), Zone: r.ifi.Name}
		r.pc.WriteTo(b, &ipv6.ControlMessage{HopLimit: 255, IfIndex: r.ifi.Index}, dst)
	}
}
