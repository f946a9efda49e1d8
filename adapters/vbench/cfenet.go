package vbench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// tapNet is CFE's network stack on the bench's tap: a DHCP client and a
// TFTP client, on raw frames from the board's MAC. The link is opened by
// the first ifconfig and held until the program starts ("Closing
// network."), so the address stays answered for ARP in between.
type tapNet struct {
	n   *Net
	mac net.HardwareAddr
	l   *link
}

func (t *tapNet) close() {
	if t.l != nil {
		t.l.Close()
		t.l = nil
	}
}

// attach opens the link once, and makes ctx's end (power-off) interrupt a
// receive on it.
func (t *tapNet) attach(ctx context.Context) (*link, func(), error) {
	if t.l == nil {
		l, err := openLink(t.n, t.mac)
		if err != nil {
			return nil, nil, err
		}
		t.l = l
	}
	l := t.l
	stop := context.AfterFunc(ctx, func() { l.f.SetReadDeadline(time.Now()) })
	return l, func() { stop() }, nil
}

// dhcp is CFE's DHCP client: DISCOVER, the first OFFER to it, REQUEST,
// ACK; each step resent every second, a few times, as CFE retries.
func (t *tapNet) dhcp(ctx context.Context) (*cfeLease, error) {
	l, done, err := t.attach(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	xid := dhcpv4.TransactionID{}
	rand.Read(xid[:])
	disc, err := dhcpDiscover(t.mac, xid)
	if err != nil {
		return nil, err
	}
	offer, err := exchange(ctx, l, disc.ToBytes(), xid, dhcpv4.MessageTypeOffer, nil)
	if err != nil {
		return nil, err
	}
	req, err := dhcpRequest(t.mac, xid, offer)
	if err != nil {
		return nil, err
	}
	ack, err := exchange(ctx, l, req.ToBytes(), xid, dhcpv4.MessageTypeAck, nil)
	if err != nil {
		return nil, err
	}
	lease := leaseOf(ack)
	l.ip = lease.ip
	return lease, nil
}

// dhcpDiscover is CFE's DISCOVER: from the board's MAC, asking for the
// subnet mask, router, name server and domain it prints.
func dhcpDiscover(mac net.HardwareAddr, xid dhcpv4.TransactionID) (*dhcpv4.DHCPv4, error) {
	return dhcpv4.New(
		dhcpv4.WithTransactionID(xid), dhcpv4.WithHwAddr(mac), dhcpv4.WithBroadcast(true),
		dhcpv4.WithMessageType(dhcpv4.MessageTypeDiscover),
		dhcpv4.WithRequestedOptions(dhcpv4.OptionSubnetMask, dhcpv4.OptionRouter, dhcpv4.OptionDomainNameServer, dhcpv4.OptionDomainName),
	)
}

// dhcpRequest takes offer's address from its server.
func dhcpRequest(mac net.HardwareAddr, xid dhcpv4.TransactionID, offer *dhcpv4.DHCPv4) (*dhcpv4.DHCPv4, error) {
	return dhcpv4.New(
		dhcpv4.WithTransactionID(xid), dhcpv4.WithHwAddr(mac), dhcpv4.WithBroadcast(true),
		dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest),
		dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(offer.YourIPAddr)),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(offer.ServerIdentifier())),
	)
}

// leaseOf is what CFE keeps of an ACK.
func leaseOf(ack *dhcpv4.DHCPv4) *cfeLease {
	l := &cfeLease{ip: ack.YourIPAddr.To4(), mask: net.IP(ack.SubnetMask()).To4(), domain: ack.DomainName()}
	if l.mask == nil {
		l.mask = net.IP(l.ip.DefaultMask())
	}
	if r := ack.Router(); len(r) > 0 {
		l.gateway = r[0]
	}
	if d := ack.DNS(); len(d) > 0 {
		l.dns = d[0]
	}
	return l
}

// exchange broadcasts msg until an answer of type want to xid comes that
// takes accepts (nil: any); a NAK ends it.
func exchange(ctx context.Context, l *link, msg []byte, xid dhcpv4.TransactionID, want dhcpv4.MessageType, takes func(*dhcpv4.DHCPv4) bool) (*dhcpv4.DHCPv4, error) {
	frame := udpFrame(broadcastMAC, l.mac, net.IPv4zero, net.IPv4bcast, bootpClientPort, bootpServerPort, msg)
	for try := 0; try < 5 && ctx.Err() == nil; try++ {
		if err := l.send(frame); err != nil {
			return nil, err
		}
		var got *dhcpv4.DHCPv4
		_, err := l.recv(time.Now().Add(time.Second), func(f []byte) bool {
			got = parseDHCPReply(f, xid, l.mac)
			return got != nil && (got.MessageType() == want && (takes == nil || takes(got)) || got.MessageType() == dhcpv4.MessageTypeNak)
		})
		switch {
		case err == nil && got.MessageType() == dhcpv4.MessageTypeNak:
			return nil, errors.New("the server refused (DHCPNAK)")
		case err == nil:
			return got, nil
		case !errors.Is(err, errTimeout):
			return nil, err
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, fmt.Errorf("no DHCP %s", want)
}

// parseDHCPReply reads a DHCP answer to our transaction, or nil.
func parseDHCPReply(f []byte, xid dhcpv4.TransactionID, mac net.HardwareAddr) *dhcpv4.DHCPv4 {
	u, ok := parseUDP(f)
	if !ok || u.dport != bootpClientPort {
		return nil
	}
	m, err := dhcpv4.FromBytes(u.payload)
	if err != nil || m.OpCode != dhcpv4.OpcodeBootReply || m.TransactionID != xid || m.ClientHWAddr.String() != mac.String() {
		return nil
	}
	return m
}

// fetch is CFE's TFTP client: the server's MAC by ARP, then the file in
// 512-byte blocks, as RouterBOOT's.
func (t *tapNet) fetch(ctx context.Context, lease *cfeLease, server net.IP, file string) ([]byte, error) {
	l, done, err := t.attach(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	mac, err := arpResolve(ctx, l, server)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", server, err)
	}
	return tftpGet(ctx, l, mac, server, file, func() {})
}
