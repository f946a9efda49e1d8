package netboot

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
)

// piROMDiscover is a Raspberry Pi boot ROM's DHCPDISCOVER with the fields
// Raspberry Pi's documentation gives (boot-net, "DHCP Request / Reply", a
// tcpdump of the ROM's request, 320 bytes): option 55 asking for 43, 60,
// 67, 128-135 and 66; client architecture 0 (93), UNDI 2.1 (94), a client
// GUID (97), and vendor class "PXEClient:Arch:00000:UNDI:002001" (60).
func piROMDiscover(mac net.HardwareAddr, xid uint32, guid [16]byte) []byte {
	b := make([]byte, bootpMinLen)
	b[0], b[1], b[2] = 1, 1, 6 // BOOTREQUEST, Ethernet, 6-byte address
	binary.BigEndian.PutUint32(b[4:], xid)
	copy(b[28:], mac)
	opt := func(code byte, v ...byte) { b = append(append(b, code, byte(len(v))), v...) }
	b = append(b, magicCookie...)
	opt(53, 1) // DISCOVER
	opt(55, 43, 60, 67, 128, 129, 130, 131, 132, 133, 134, 135, 66)
	opt(93, 0, 0)
	opt(94, 1, 2, 1)
	opt(97, append([]byte{0}, guid[:]...)...)
	opt(60, []byte("PXEClient:Arch:00000:UNDI:002001")...)
	return append(b, 255)
}

// The documented ROM's GUID (a Pi 3B's constant: sixteen 68s), and a
// Pi 4's as "Raspberry Pi bootloader configuration" describes
// DHCP_OPTION97: the FourCC "RPi4", the board revision (0x00c03111), the
// MAC's low four bytes and the serial (9ffefdef, the documentation's
// TFTP_PREFIX example), for the MAC dc:a6:32:01:36:c2 given there.
var (
	pi3GUID = [16]byte{68, 68, 68, 68, 68, 68, 68, 68, 68, 68, 68, 68, 68, 68, 68, 68}
	pi4MAC  = net.HardwareAddr{0xdc, 0xa6, 0x32, 0x01, 0x36, 0xc2}
	pi4GUID = [16]byte{'R', 'P', 'i', '4', 0x00, 0xc0, 0x31, 0x11, 0x32, 0x01, 0x36, 0xc2, 0x9f, 0xfe, 0xfd, 0xef}
	pi3MAC  = net.HardwareAddr{0xb8, 0x27, 0xeb, 0x28, 0xf6, 0x6d}
)

// TestRaspberryPiSeeds: the DHCP fuzz seeds hold a Pi ROM's DISCOVER as
// documented (-update writes them), and it parses as the PXE client it
// says it is.
func TestRaspberryPiSeeds(t *testing.T) {
	for name, pkt := range map[string][]byte{
		"documented-rpi3-rom-discover":    piROMDiscover(pi3MAC, 0x26f30339, pi3GUID),
		"documented-rpi4-eeprom-discover": piROMDiscover(pi4MAC, 0x2a1b3c4d, pi4GUID),
	} {
		if len(pkt) != 320 {
			t.Errorf("%s: %d bytes, the documented request has 320", name, len(pkt))
		}
		golden(t, filepath.Join("testdata", "fuzz", "FuzzDHCPRequest", name), []byte("go test fuzz v1\n[]byte("+strconv.Quote(string(pkt))+")\n"))
		req, err := ParseRequest(pkt)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c := clientOf(req); c.Kind() != ClientPXE || c.VendorClass != "PXEClient:Arch:00000:UNDI:002001" || !c.HasArch || c.Arch != 0 {
			t.Errorf("%s: read as %+v", name, c)
		}
	}
}

// piPlan knows one Raspberry Pi by its MAC.
type piPlan struct{ mac net.HardwareAddr }

func (p piPlan) Plan(c Client) (Offer, bool) {
	if !bytes.Equal(c.MAC, p.mac) {
		return Offer{}, false
	}
	return Offer{IP: testBoard, Mask: net.CIDRMask(24, 32), Server: testServer, RaspberryPi: true}, true
}

// documentedOption43 is option 43 of the documented answer that boots a
// Pi (boot-net, "DHCP Request / Reply"), as tcpdump printed it.
const documentedOption43 = "6.1.3.10.4.0.80.88.69.9.20.0.0.17.82.97.115.112.98.101.114.114.121.32.80.105.32.66.111.111.116.255"

// TestRaspberryPiReply: a known Pi's DISCOVER is answered as Raspberry
// Pi's documentation says a server must: vendor class PXEClient (60), the
// PXE boot menu "Raspberry Pi Boot" in option 43, the TFTP server in
// siaddr and option 66, the GUID echoed (97), and no boot file.
func TestRaspberryPiReply(t *testing.T) {
	req, err := ParseRequest(piROMDiscover(pi4MAC, 0xdeadbeef, pi4GUID))
	if err != nil {
		t.Fatal(err)
	}
	resp, ev := Reply(req, piPlan{pi4MAC})
	if resp == nil || ev.Kind != "dhcp-offer" {
		t.Fatalf("event %q, answer %v", ev.Kind, resp)
	}
	checkPiOffer(t, resp, testServer)
	if g := resp.Options.Get(dhcpv4.OptionClientMachineIdentifier); !bytes.Equal(g, append([]byte{0}, pi4GUID[:]...)) {
		t.Errorf("option 97 % x, want the client's GUID", g)
	}
	golden(t, filepath.Join("testdata", "replies", "raspberry-pi.golden"), []byte(resp.Summary()))

	// As a proxyDHCP server (the segment has its own): the same PXE
	// vendor options and TFTP server, and no address.
	proxy, ev := ProxyReply(req, piPlan{pi4MAC})
	if proxy == nil || ev.Kind != "proxy-offer" || !proxy.YourIPAddr.IsUnspecified() {
		t.Fatalf("proxy answer %v, event %q", proxy, ev.Kind)
	}
	checkPiOffer(t, proxy, testServer)

	// Another board's PXE answer says nothing of Raspberry Pis.
	other, _ := Reply(req, kindPlan{})
	if other != nil && other.Options.Has(dhcpv4.OptionVendorSpecificInformation) {
		t.Error("a PXE client the plan does not call a Pi got option 43")
	}
}

// checkPiOffer checks what a Pi's ROM needs of an offer from server.
func checkPiOffer(t *testing.T, resp *dhcpv4.DHCPv4, server net.IP) {
	t.Helper()
	var dotted []string
	for _, b := range resp.Options.Get(dhcpv4.OptionVendorSpecificInformation) {
		dotted = append(dotted, strconv.Itoa(int(b)))
	}
	if got := strings.Join(dotted, "."); got != documentedOption43 {
		t.Errorf("option 43 %s\nwant the documented %s", got, documentedOption43)
	}
	if vc := resp.ClassIdentifier(); vc != "PXEClient" {
		t.Errorf("option 60 %q, want PXEClient", vc)
	}
	if s := resp.TFTPServerName(); s != server.String() || !resp.ServerIPAddr.Equal(server) {
		t.Errorf("option 66 %q, siaddr %v; want %v", s, resp.ServerIPAddr, server)
	}
	if resp.Options.Has(dhcpv4.OptionBootfileName) || resp.BootFileName != "" {
		t.Errorf("boot file %q: a Pi names its files itself", resp.BootFileName)
	}
}

// TestRaspberryPiOfferNetns: a DHCP client in another namespace sends the
// Pi ROM's DISCOVER from its MAC across a veth pair to bootbench's DHCP
// server, and the OFFER it gets back carries 43, 60 and 66 as a Pi needs.
func TestRaspberryPiOfferNetns(t *testing.T) {
	requireNetns(t)
	server, board := newNetns(t, "bbpi-s-"), newNetns(t, "bbpi-b-")
	vethPair(t, server, "bench0", board, "eth0")
	run(t, "ip", "-n", server, "addr", "add", "198.18.11.1/24", "dev", "bench0")
	mac := macIn(t, board, "eth0")
	conn := listenDHCPIn(t, server, "bench0")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := net.IPv4(198, 18, 11, 1).To4()
	plan := StaticPlanPi{StaticPlan{Server: srv, Mask: net.CIDRMask(24, 32), Hosts: map[string]Host{mac.String(): {IP: net.IPv4(198, 18, 11, 40).To4()}}}}
	events := make(chan Event, 4)
	go ServeDHCP(ctx, conn, plan, func(e Event) { events <- e })

	rom, err := ParseRequest(piROMDiscover(mac, 1, pi4GUID))
	if err != nil {
		t.Fatal(err)
	}
	var offer *dhcpv4.DHCPv4
	inNetns(t, board, func() {
		c, err := nclient4.New("eth0", nclient4.WithTimeout(2*time.Second), nclient4.WithRetry(2))
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		// The ROM's options on the client's own DISCOVER (its xid).
		offer, err = c.DiscoverOffer(ctx, func(d *dhcpv4.DHCPv4) { d.Options = rom.Options })
		if err != nil {
			t.Error(err)
		}
	})
	if offer == nil {
		t.FailNow()
	}
	checkPiOffer(t, offer, srv)
	if !offer.YourIPAddr.Equal(net.IPv4(198, 18, 11, 40)) {
		t.Errorf("offered %v", offer.YourIPAddr)
	}
	select {
	case e := <-events:
		if e.Kind != "dhcp-offer" || e.VendorClass != "PXEClient:Arch:00000:UNDI:002001" || !strings.Contains(","+e.Options+",", ",43,") {
			t.Errorf("event %+v", e)
		}
	case <-time.After(time.Second):
		t.Error("no event for the offer")
	}
}

// StaticPlanPi is a StaticPlan whose boards are all Raspberry Pis.
type StaticPlanPi struct{ StaticPlan }

func (p StaticPlanPi) Plan(c Client) (Offer, bool) {
	o, ok := p.StaticPlan.Plan(c)
	o.RaspberryPi, o.BootFile = true, ""
	return o, ok
}
