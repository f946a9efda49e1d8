package vbench

import (
	"bytes"
	"net"
	"testing"

	"github.com/bootbench/bootbench/netboot"
	"github.com/insomniacslk/dhcp/dhcpv4"
)

type onePlan struct{ mac net.HardwareAddr }

func (p onePlan) Plan(c netboot.Client) (netboot.Offer, bool) {
	if c.MAC.String() != p.mac.String() {
		return netboot.Offer{}, false
	}
	return netboot.Offer{IP: net.IPv4(198, 18, 0, 10).To4(), Mask: net.CIDRMask(24, 32), Server: net.IPv4(198, 18, 0, 1).To4(), BootFile: "rb/kernel.elf"}, true
}

// TestROMTakesOnlyBOOTPReplies: the ROM's request is one bootbench's
// server reads as plain BOOTP, the server's BOOTP answer is one the ROM
// takes, and an answer with a DHCP message type (option 53) is one it
// ignores, as RouterBOOT does.
func TestROMTakesOnlyBOOTPReplies(t *testing.T) {
	mac := net.HardwareAddr{0x52, 0x54, 0x00, 0xbb, 0x00, 0x04}
	serverMAC := net.HardwareAddr{0x02, 0, 0, 0, 0, 1}
	xid := []byte{1, 2, 3, 4}
	sent := bootpRequest(mac, xid)

	u, ok := parseUDP(sent)
	if !ok || u.dport != 67 || u.sport != 68 || len(u.payload) != 300 {
		t.Fatalf("request frame: %+v %v", u, ok)
	}
	parsed, err := netboot.ParseRequest(u.payload)
	if err != nil {
		t.Fatalf("server cannot read the ROM's request: %v", err)
	}
	if parsed.MessageType() != dhcpv4.MessageTypeNone {
		t.Fatalf("the ROM's request reads as DHCP %v", parsed.MessageType())
	}
	resp, ev := netboot.Reply(parsed, onePlan{mac})
	if ev.Kind != "bootp-reply" {
		t.Fatalf("server answered with %s", ev.Kind)
	}
	frame := udpFrame(broadcastMAC, serverMAC, net.IPv4(198, 18, 0, 1), net.IPv4bcast, 67, 68, resp.ToBytes())
	rep := parseBOOTPReply(frame, xid, mac)
	if rep == nil || !rep.yiaddr.Equal(net.IPv4(198, 18, 0, 10)) || !rep.siaddr.Equal(net.IPv4(198, 18, 0, 1)) || rep.file != "rb/kernel.elf" || !bytes.Equal(rep.serverMAC, serverMAC) {
		t.Fatalf("ROM read the BOOTP reply as %+v", rep)
	}

	resp.UpdateOption(dhcpv4.OptMessageType(dhcpv4.MessageTypeOffer))
	frame = udpFrame(broadcastMAC, serverMAC, net.IPv4(198, 18, 0, 1), net.IPv4bcast, 67, 68, resp.ToBytes())
	if rep := parseBOOTPReply(frame, xid, mac); rep != nil {
		t.Errorf("ROM took a reply with option 53: %+v", rep)
	}
	other := append([]byte(nil), frame...)
	if rep := parseBOOTPReply(other, []byte{9, 9, 9, 9}, mac); rep != nil {
		t.Error("ROM took a reply to another transaction")
	}
}

// TestFrames: what the ROM sends parses back, checksums and all.
func TestFrames(t *testing.T) {
	mac := net.HardwareAddr{0x52, 0x54, 0x00, 0xbb, 0x00, 0x04}
	f := udpFrame(mac, mac, net.IPv4(198, 18, 0, 10), net.IPv4(198, 18, 0, 1), 2000, 69, []byte("\x00\x01file\x00octet\x00"))
	if ipChecksum(f[14:34]) != 0 {
		t.Error("IPv4 header checksum does not verify")
	}
	u, ok := parseUDP(f)
	if !ok || u.sport != 2000 || u.dport != 69 || string(u.payload) != "\x00\x01file\x00octet\x00" || !u.dst.Equal(net.IPv4(198, 18, 0, 1)) {
		t.Errorf("parsed %+v, %v", u, ok)
	}
	a, ok := parseARP(arpFrame(1, mac, net.IPv4(198, 18, 0, 10), make(net.HardwareAddr, 6), net.IPv4(198, 18, 0, 1)))
	if !ok || a.op != 1 || !a.tpa.Equal(net.IPv4(198, 18, 0, 1)) || !a.spa.Equal(net.IPv4(198, 18, 0, 10)) {
		t.Errorf("ARP %+v, %v", a, ok)
	}
	if hasDHCPMessageType(make([]byte, 300)) {
		t.Error("a zero vendor area has no option 53")
	}
}
