package vbench

import (
	"bytes"
	"net"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// DHCP message types (RFC 2132, option 53) the bootloader sends or takes.
const (
	dhcpMsgDiscover = 1
	dhcpMsgOffer    = 2
	dhcpMsgRequest  = 3
)

// piVendorClass is option 60 as the Pi's ROM sends it (boot-net: "Vendor
// Class identifier DHCP option 60 set to 'PXEClient:Arch:00000:UNDI:002001'").
const piVendorClass = "PXEClient:Arch:00000:UNDI:002001"

// piParams is the parameter request list (option 55) of boot-net's
// capture: Vendor-Option (43), Vendor-Class (60), BF (67), 128 to 135,
// TFTP (66).
var piParams = []byte{43, 60, 67, 128, 129, 130, 131, 132, 133, 134, 135, 66}

// piDiscover is the bootloader's DHCPDISCOVER, as the DHCP payload of the
// UDP datagram: BOOTP's fixed fields with flags 0 (no broadcast bit) and
// hops 0, then the options in the order of boot-net's capture, unpadded
// (that capture's request is 320 bytes, as this one is).
func piDiscover(mac net.HardwareAddr, guid [16]byte, xid [4]byte) []byte {
	return piMessage(mac, xid, dhcpMsgDiscover, guid, nil)
}

// piRequest takes offer's address from its server.
func piRequest(mac net.HardwareAddr, guid [16]byte, xid [4]byte, offer *piReply) []byte {
	extra := append([]byte{50, 4}, offer.yiaddr.To4()...)
	extra = append(append(extra, 54, 4), offer.serverID.To4()...)
	return piMessage(mac, xid, dhcpMsgRequest, guid, extra)
}

// piMessage is a DHCP request of type typ; extra are options that follow
// the message type (a REQUEST's requested address and server).
func piMessage(mac net.HardwareAddr, xid [4]byte, typ byte, guid [16]byte, extra []byte) []byte {
	m := make([]byte, 236, 320+len(extra))
	m[0], m[1], m[2] = 1, 1, 6 // BOOTREQUEST, Ethernet, 6-byte address
	copy(m[4:8], xid[:])
	copy(m[28:], mac)
	m = append(m, 99, 130, 83, 99) // RFC 2131's magic cookie
	m = append(m, 53, 1, typ)
	m = append(m, extra...)
	m = append(append(m, 55, byte(len(piParams))), piParams...)
	m = append(m, 93, 2, 0, 0)    // client architecture 0, as boot-net's capture shows
	m = append(m, 94, 3, 1, 2, 1) // UNDI 2.1 ("NDI ... 1.2.1")
	m = append(append(m, 97, 17, 0), guid[:]...)
	m = append(append(m, 60, byte(len(piVendorClass))), piVendorClass...)
	return append(m, 255)
}

// piReply is what the bootloader reads of a server's answer.
type piReply struct {
	msgType                  byte
	yiaddr, siaddr, serverID net.IP
	mask                     net.IP
	tftpName                 string // option 66
	vendor                   []byte // option 43
}

// forPi says whether an offer is for a Raspberry Pi: its option 43 holds
// the match string. The ROM looks for the string, not for a structure
// (boot-net: option 43 "needs to contain the string").
func (p *piReply) forPi() bool { return bytes.Contains(p.vendor, []byte(piOption43)) }

// parsePiReply reads a DHCP answer to our transaction, or nil.
func parsePiReply(f []byte, xid [4]byte, mac net.HardwareAddr) *piReply {
	m := parseDHCPReply(f, dhcpv4.TransactionID(xid), mac)
	if m == nil {
		return nil
	}
	u, _ := parseUDP(f)
	p := &piReply{
		msgType: byte(m.MessageType()), yiaddr: m.YourIPAddr.To4(), siaddr: m.ServerIPAddr.To4(),
		serverID: m.ServerIdentifier(),
		tftpName: string(bytes.TrimRight(m.Options.Get(dhcpv4.OptionTFTPServerName), "\x00")),
		vendor:   m.Options.Get(dhcpv4.OptionVendorSpecificInformation),
	}
	if mask := m.SubnetMask(); mask != nil {
		p.mask = net.IP(mask).To4()
	}
	if p.serverID == nil {
		p.serverID = u.src
	}
	return p
}
