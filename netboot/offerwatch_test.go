package netboot

import (
	"encoding/binary"
	"net"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// udpPacket wraps payload in the IPv4 and UDP headers the watcher's packet
// socket hands it (checksums left zero: the kernel checked them).
func udpPacket(src net.IP, sport, dport uint16, payload []byte) []byte {
	p := make([]byte, 28+len(payload))
	p[0] = 0x45
	binary.BigEndian.PutUint16(p[2:], uint16(len(p)))
	p[8], p[9] = 64, 17
	copy(p[12:16], src.To4())
	copy(p[16:20], net.IPv4bcast.To4())
	binary.BigEndian.PutUint16(p[20:], sport)
	binary.BigEndian.PutUint16(p[22:], dport)
	binary.BigEndian.PutUint16(p[24:], uint16(8+len(payload)))
	copy(p[28:], payload)
	return p
}

func dhcpReply(t *testing.T, kind dhcpv4.MessageType, server net.IP) []byte {
	t.Helper()
	mac, _ := net.ParseMAC("52:54:00:bb:05:20")
	m, err := dhcpv4.New(dhcpv4.WithReply(&dhcpv4.DHCPv4{}), dhcpv4.WithHwAddr(mac), dhcpv4.WithMessageType(kind),
		dhcpv4.WithYourIP(net.IPv4(198, 18, 5, 101)), dhcpv4.WithServerIP(server))
	if err != nil {
		t.Fatal(err)
	}
	m.OpCode = dhcpv4.OpcodeBootReply
	if server != nil {
		m.UpdateOption(dhcpv4.OptServerIdentifier(server))
	}
	return m.ToBytes()
}

func TestForeignOffer(t *testing.T) {
	self, rival := net.IPv4(198, 18, 5, 1), net.IPv4(198, 18, 5, 2)
	discover, _ := dhcpv4.NewDiscovery(net.HardwareAddr{0x52, 0x54, 0, 0xbb, 5, 0x20})
	tests := []struct {
		name string
		pkt  []byte
		want string // the report, "" for none
	}{
		{"another server's offer", udpPacket(rival, 67, 68, dhcpReply(t, dhcpv4.MessageTypeOffer, rival)), "another DHCP server at 198.18.5.2 offered 198.18.5.101 to 52:54:00:bb:05:20"},
		{"an offer without server identifier names its sender", udpPacket(rival, 67, 68, dhcpReply(t, dhcpv4.MessageTypeOffer, nil)), "another DHCP server at 198.18.5.2 offered 198.18.5.101 to 52:54:00:bb:05:20"},
		{"bootbench's own offer", udpPacket(self, 67, 68, dhcpReply(t, dhcpv4.MessageTypeOffer, self)), ""},
		{"an ack", udpPacket(rival, 67, 68, dhcpReply(t, dhcpv4.MessageTypeAck, rival)), ""},
		{"a client's discover", udpPacket(net.IPv4zero, 68, 67, discover.ToBytes()), ""},
		{"cut short", udpPacket(rival, 67, 68, dhcpReply(t, dhcpv4.MessageTypeOffer, rival))[:60], ""},
		{"not IPv4", append([]byte{0x60}, make([]byte, 40)...), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, ok := foreignOffer(tt.pkt, self)
			got := ""
			if ok {
				got = o.String()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
