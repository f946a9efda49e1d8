package vbench

import (
	"bytes"
	"encoding/binary"
	"flag"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/netboot"
	"github.com/insomniacslk/dhcp/dhcpv4"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// twinROM is the ROM of the rpi4b-twin profile's board.
func twinROM(t *testing.T) *piROM {
	t.Helper()
	mac, _ := net.ParseMAC("dc:a6:32:bb:00:b1")
	r, err := newPiROM(&bytes.Buffer{}, &tapNet{mac: mac}, "bb0004b1", 1024)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPiDiscoverGolden: the DISCOVER the twin sends, byte for byte, is
// testdata/rpi4-dhcp-discover.bin (a seed for DHCP fuzzing too), and its
// fields are those Raspberry Pi documents: option 60, 93, 94, 97 (RPi4,
// revision, MAC, serial), the parameter request list, 320 bytes.
func TestPiDiscoverGolden(t *testing.T) {
	r := twinROM(t)
	got := piDiscover(r.mac, r.guid(), [4]byte{0x26, 0xf3, 0x03, 0x39})
	golden := filepath.Join("testdata", "rpi4-dhcp-discover.bin")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("DISCOVER differs from %s (go test -update rewrites it):\ngot  %x\nwant %x", golden, got, want)
	}
	if len(got) != 320 {
		t.Errorf("DISCOVER is %d bytes; the Pi's is 320", len(got))
	}
	m, err := dhcpv4.FromBytes(got)
	if err != nil {
		t.Fatal(err)
	}
	if m.MessageType() != dhcpv4.MessageTypeDiscover || m.ClassIdentifier() != "PXEClient:Arch:00000:UNDI:002001" || m.ClientHWAddr.String() != "dc:a6:32:bb:00:b1" || m.Flags != 0 {
		t.Errorf("DISCOVER: type %v, class %q, chaddr %s, flags %#x", m.MessageType(), m.ClassIdentifier(), m.ClientHWAddr, m.Flags)
	}
	if a := m.Options.Get(dhcpv4.OptionClientSystemArchitectureType); !bytes.Equal(a, []byte{0, 0}) {
		t.Errorf("option 93 = %v, want architecture 0", a)
	}
	if p := m.Options.Get(dhcpv4.OptionParameterRequestList); !bytes.Equal(p, []byte{43, 60, 67, 128, 129, 130, 131, 132, 133, 134, 135, 66}) {
		t.Errorf("option 55 = %v", p)
	}
	g := m.Options.Get(dhcpv4.OptionClientMachineIdentifier)
	if len(g) != 17 || g[0] != 0 || string(g[1:5]) != "RPi4" || binary.LittleEndian.Uint32(g[5:]) != 0xa03111 ||
		!bytes.Equal(g[9:13], []byte{0x32, 0xbb, 0x00, 0xb1}) || binary.LittleEndian.Uint32(g[13:]) != 0xbb0004b1 {
		t.Errorf("option 97 = %x, want 00 RPi4 a03111 32bb00b1 bb0004b1", g)
	}
	// bootbench's server reads it as a PXE client's DHCP request.
	req, err := netboot.ParseRequest(got)
	if err != nil || req.MessageType() != dhcpv4.MessageTypeDiscover {
		t.Errorf("netboot reads the DISCOVER as %v, %v", req, err)
	}
}

// TestPiRequest: the REQUEST names the offered address and its server.
func TestPiRequest(t *testing.T) {
	r := twinROM(t)
	offer := &piReply{yiaddr: net.IPv4(198, 18, 0, 10).To4(), serverID: net.IPv4(198, 18, 0, 1).To4()}
	m, err := dhcpv4.FromBytes(piRequest(r.mac, r.guid(), [4]byte{1, 2, 3, 4}, offer))
	if err != nil {
		t.Fatal(err)
	}
	if m.MessageType() != dhcpv4.MessageTypeRequest || !m.RequestedIPAddress().Equal(offer.yiaddr) || !m.ServerIdentifier().Equal(offer.serverID) || m.ClassIdentifier() != piVendorClass {
		t.Errorf("REQUEST: %s", m.Summary())
	}
}

// dnsmasqOption43 is what dnsmasq's pxe-service=0,"Raspberry Pi Boot"
// sends (boot-net's capture): discovery control, menu prompt, boot menu.
var dnsmasqOption43 = append(append([]byte{6, 1, 3, 10, 4, 0, 'P', 'X', 'E', 9, 20, 0, 0, 17}, piOption43...), 255)

// TestPiTakesOnlyPiOffers: an offer is for a Pi when its option 43 holds
// "Raspberry Pi Boot"; the TFTP server is option 66 when there is one.
func TestPiTakesOnlyPiOffers(t *testing.T) {
	mac, _ := net.ParseMAC("dc:a6:32:bb:00:b1")
	xid := [4]byte{9, 8, 7, 6}
	server := net.IPv4(198, 18, 0, 1)
	offer := func(yiaddr net.IP, opts ...dhcpv4.Option) []byte {
		m, err := dhcpv4.New(dhcpv4.WithReply(&dhcpv4.DHCPv4{OpCode: dhcpv4.OpcodeBootRequest, TransactionID: dhcpv4.TransactionID(xid), ClientHWAddr: mac, HWType: 1}),
			dhcpv4.WithMessageType(dhcpv4.MessageTypeOffer), dhcpv4.WithYourIP(yiaddr), dhcpv4.WithServerIP(server),
			dhcpv4.WithOption(dhcpv4.OptServerIdentifier(server)))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range opts {
			m.UpdateOption(o)
		}
		return udpFrame(broadcastMAC, net.HardwareAddr{2, 0, 0, 0, 0, 1}, server, net.IPv4bcast, 67, 68, m.ToBytes())
	}
	vendor := dhcpv4.OptGeneric(dhcpv4.OptionVendorSpecificInformation, dnsmasqOption43)
	tests := []struct {
		name   string
		frame  []byte
		forPi  bool
		tftp   string
		yiaddr net.IP
	}{
		{"a home router's offer", offer(net.IPv4(198, 18, 0, 10)), false, "", net.IPv4(198, 18, 0, 10)},
		{"dnsmasq's pxe-service", offer(net.IPv4(198, 18, 0, 10), vendor), true, "", net.IPv4(198, 18, 0, 10)},
		{"proxy DHCP: no address", offer(net.IPv4zero, vendor, dhcpv4.OptClassIdentifier("PXEClient")), true, "", net.IPv4zero},
		{"option 66", offer(net.IPv4(198, 18, 0, 10), vendor, dhcpv4.OptTFTPServerName("198.18.0.5")), true, "198.18.0.5", net.IPv4(198, 18, 0, 10)},
		{"another string", offer(net.IPv4(198, 18, 0, 10), dhcpv4.OptGeneric(dhcpv4.OptionVendorSpecificInformation, []byte("\x09\x0a\x00\x00\x07PXE Boot\xff"))), false, "", net.IPv4(198, 18, 0, 10)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := parsePiReply(tt.frame, xid, mac)
			if p == nil {
				t.Fatal("not read as an answer to us")
			}
			if p.forPi() != tt.forPi || p.tftpName != tt.tftp || !p.yiaddr.Equal(tt.yiaddr) || !p.siaddr.Equal(server) || p.msgType != dhcpMsgOffer {
				t.Errorf("read %+v: for a Pi %v, want %v; option 66 %q, want %q", p, p.forPi(), tt.forPi, p.tftpName, tt.tftp)
			}
		})
	}
	if p := parsePiReply(offer(net.IPv4(198, 18, 0, 10), vendor), [4]byte{1, 1, 1, 1}, mac); p != nil {
		t.Error("took an answer to another transaction")
	}
}

// TestPiDiscoverIsAFuzzSeed: netboot's DHCP fuzzing starts from the
// twin's DISCOVER too, byte for byte the one the ROM sends.
func TestPiDiscoverIsAFuzzSeed(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "rpi4-dhcp-discover.bin"))
	if err != nil {
		t.Fatal(err)
	}
	seed, err := os.ReadFile(filepath.Join("..", "..", "netboot", "testdata", "fuzz", "FuzzDHCPRequest", "twin-rpi4b-discover"))
	if err != nil {
		t.Fatal(err)
	}
	body, ok := strings.CutPrefix(string(seed), "go test fuzz v1\n[]byte(")
	body, ok2 := strings.CutSuffix(body, ")\n")
	if !ok || !ok2 {
		t.Fatalf("seed is not in go test fuzz v1 form:\n%s", seed)
	}
	got, err := strconv.Unquote(body)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the fuzz seed is not the twin's DISCOVER (copy testdata/rpi4-dhcp-discover.bin into it again):\n got %x\nwant %x", got, want)
	}
}
