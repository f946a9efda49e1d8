package netboot

import (
	"net"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

var (
	testServer = net.IPv4(198, 18, 0, 1).To4()
	testBoard  = net.IPv4(198, 18, 0, 10).To4()
	knownMAC   = net.HardwareAddr{0x52, 0x54, 0x00, 0xbb, 0x00, 0x01}
	strangeMAC = net.HardwareAddr{0x52, 0x54, 0x00, 0xbb, 0x00, 0x99}
)

func testPlan() StaticPlan {
	return StaticPlan{Server: testServer, Mask: net.CIDRMask(24, 32), Hosts: map[string]Host{
		knownMAC.String(): {IP: testBoard, BootFile: "undionly.kpxe", IPXEScript: "r1/boot.ipxe"},
	}}
}

func TestReply(t *testing.T) {
	tests := []struct {
		name     string
		req      func() *dhcpv4.DHCPv4
		wantKind string
		wantType dhcpv4.MessageType
		wantFile string
	}{
		{
			name:     "discover from PXE ROM",
			req:      func() *dhcpv4.DHCPv4 { m, _ := dhcpv4.NewDiscovery(knownMAC); return m },
			wantKind: "dhcp-offer", wantType: dhcpv4.MessageTypeOffer, wantFile: "undionly.kpxe",
		},
		{
			name: "discover from iPXE",
			req: func() *dhcpv4.DHCPv4 {
				m, _ := dhcpv4.NewDiscovery(knownMAC, dhcpv4.WithUserClass("iPXE", false))
				return m
			},
			wantKind: "dhcp-offer", wantType: dhcpv4.MessageTypeOffer, wantFile: "r1/boot.ipxe",
		},
		{
			name:     "unknown MAC",
			req:      func() *dhcpv4.DHCPv4 { m, _ := dhcpv4.NewDiscovery(strangeMAC); return m },
			wantKind: "ignored",
		},
		{
			name: "request for our offer",
			req: func() *dhcpv4.DHCPv4 {
				m, _ := dhcpv4.NewDiscovery(knownMAC, dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest),
					dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(testBoard)),
					dhcpv4.WithOption(dhcpv4.OptServerIdentifier(testServer)))
				return m
			},
			wantKind: "dhcp-ack", wantType: dhcpv4.MessageTypeAck, wantFile: "undionly.kpxe",
		},
		{
			name: "request for another address",
			req: func() *dhcpv4.DHCPv4 {
				m, _ := dhcpv4.NewDiscovery(knownMAC, dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest),
					dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.IPv4(198, 18, 0, 77))))
				return m
			},
			wantKind: "dhcp-nak", wantType: dhcpv4.MessageTypeNak,
		},
		{
			name: "request to another server",
			req: func() *dhcpv4.DHCPv4 {
				m, _ := dhcpv4.NewDiscovery(knownMAC, dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest),
					dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IPv4(198, 18, 0, 2))))
				return m
			},
			wantKind: "ignored",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, ev := Reply(tt.req(), testPlan())
			if ev.Kind != tt.wantKind {
				t.Fatalf("event kind %q, want %q", ev.Kind, tt.wantKind)
			}
			if tt.wantKind == "ignored" {
				if resp != nil {
					t.Fatalf("answered a request that is not ours: %v", resp.Summary())
				}
				return
			}
			if got := resp.MessageType(); got != tt.wantType {
				t.Errorf("message type %v, want %v", got, tt.wantType)
			}
			if tt.wantType == dhcpv4.MessageTypeNak {
				return
			}
			if !resp.YourIPAddr.Equal(testBoard) || !resp.ServerIPAddr.Equal(testServer) {
				t.Errorf("yiaddr %v siaddr %v, want %v %v", resp.YourIPAddr, resp.ServerIPAddr, testBoard, testServer)
			}
			if resp.BootFileName != tt.wantFile || resp.BootFileNameOption() != tt.wantFile {
				t.Errorf("boot file %q / option %q, want %q", resp.BootFileName, resp.BootFileNameOption(), tt.wantFile)
			}
		})
	}
}

// rawBOOTP builds an RFC 951 BOOTREQUEST as RouterBOOT sends it: 300 bytes,
// vendor area all zeros.
func rawBOOTP(mac net.HardwareAddr) []byte {
	b := make([]byte, 300)
	b[0], b[1], b[2] = 1, 1, 6 // BOOTREQUEST, Ethernet, hlen
	copy(b[4:8], []byte{0xde, 0xad, 0xbe, 0xef})
	copy(b[28:], mac)
	return b
}

func TestBOOTP(t *testing.T) {
	raw := rawBOOTP(knownMAC)
	if _, err := dhcpv4.FromBytes(raw); err == nil {
		t.Log("the library now parses zero-vendor BOOTP; ParseRequest's fallback is no longer needed")
	}
	req, err := ParseRequest(raw)
	if err != nil {
		t.Fatalf("ParseRequest: %v", err)
	}
	resp, ev := Reply(req, testPlan())
	if ev.Kind != "bootp-reply" || resp == nil {
		t.Fatalf("event %q, reply %v", ev.Kind, resp)
	}
	if resp.Options.Has(dhcpv4.OptionDHCPMessageType) {
		t.Error("BOOTP reply carries option 53: RouterBOOT ignores such replies")
	}
	if !resp.YourIPAddr.Equal(testBoard) || resp.BootFileName != "undionly.kpxe" || !resp.ServerIPAddr.Equal(testServer) {
		t.Errorf("reply yiaddr %v file %q siaddr %v", resp.YourIPAddr, resp.BootFileName, resp.ServerIPAddr)
	}
	if resp.TransactionID != req.TransactionID {
		t.Errorf("xid %v, want %v", resp.TransactionID, req.TransactionID)
	}
	// Cookie present but no End option: also RouterBOOT-like.
	withCookie := append(raw[:236:236], 99, 130, 83, 99, 0, 0, 0)
	if _, err := ParseRequest(withCookie); err != nil {
		t.Errorf("cookie without End: %v", err)
	}
	// Replies and short junk are not requests.
	if _, err := ParseRequest(resp.ToBytes()); err == nil {
		t.Error("accepted a BOOTREPLY as a request")
	}
	if _, err := ParseRequest(raw[:100]); err == nil {
		t.Error("accepted a truncated packet")
	}
}

func TestIPXEToldNoProxyDHCP(t *testing.T) {
	for _, ipxe := range []bool{false, true} {
		var mods []dhcpv4.Modifier
		if ipxe {
			mods = append(mods, dhcpv4.WithUserClass("iPXE", false))
		}
		req, _ := dhcpv4.NewDiscovery(knownMAC, mods...)
		resp, _ := Reply(req, testPlan())
		got := resp.Options.Get(dhcpv4.GenericOptionCode(175))
		if ipxe && string(got) != "\xb0\x01\x01" {
			t.Errorf("iPXE offer: option 175 = %x, want b00101", got)
		}
		if !ipxe && got != nil {
			t.Errorf("PXE ROM offer carries iPXE option 175: %x", got)
		}
	}
}

// TestProxyReply: as proxyDHCP, bootbench answers a known PXE client's
// DISCOVER with the boot fields and no address, and its request on port
// 4011 with an ACK; everything else is the segment's DHCP server's.
func TestProxyReply(t *testing.T) {
	pxe := dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00000:UNDI:002001"))
	ipxe := dhcpv4.WithUserClass("iPXE", false)
	request := dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest)
	tests := []struct {
		name     string
		mac      net.HardwareAddr
		mods     []dhcpv4.Modifier
		wantKind string
		wantFile string
	}{
		{"PXE ROM discover", knownMAC, []dhcpv4.Modifier{pxe}, "proxy-offer", "undionly.kpxe"},
		{"iPXE discover", knownMAC, []dhcpv4.Modifier{pxe, ipxe}, "proxy-offer", "r1/boot.ipxe"},
		{"request to port 4011", knownMAC, []dhcpv4.Modifier{pxe, ipxe, request, dhcpv4.WithOption(dhcpv4.OptServerIdentifier(testServer))}, "proxy-ack", "r1/boot.ipxe"},
		{"request to the segment's server", knownMAC, []dhcpv4.Modifier{pxe, request, dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IPv4(198, 18, 0, 2)))}, "ignored", ""},
		{"not a PXE client", knownMAC, nil, "ignored", ""},
		{"unknown MAC", strangeMAC, []dhcpv4.Modifier{pxe}, "ignored", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := dhcpv4.NewDiscovery(tt.mac, tt.mods...)
			if err != nil {
				t.Fatal(err)
			}
			resp, ev := ProxyReply(req, testPlan())
			if ev.Kind != tt.wantKind {
				t.Fatalf("event %q, want %q", ev.Kind, tt.wantKind)
			}
			if tt.wantKind == "ignored" {
				if resp != nil {
					t.Fatalf("answered: %s", resp.Summary())
				}
				return
			}
			if !resp.YourIPAddr.IsUnspecified() {
				t.Errorf("proxyDHCP handed out address %v", resp.YourIPAddr)
			}
			if !resp.ServerIPAddr.Equal(testServer) || !resp.ServerIdentifier().Equal(testServer) {
				t.Errorf("siaddr %v, server id %v", resp.ServerIPAddr, resp.ServerIdentifier())
			}
			if resp.BootFileName != tt.wantFile || resp.BootFileNameOption() != tt.wantFile {
				t.Errorf("boot file %q / %q, want %q", resp.BootFileName, resp.BootFileNameOption(), tt.wantFile)
			}
			if resp.ClassIdentifier() != "PXEClient" {
				t.Errorf("option 60 %q: PXE clients recognise proxyDHCP by it", resp.ClassIdentifier())
			}
			if got := resp.Options.Get(dhcpv4.OptionVendorSpecificInformation); string(got) != "\x06\x01\x08\xff" {
				t.Errorf("option 43 = %x, want discovery control 8 (boot the named file)", got)
			}
			for _, forbidden := range []dhcpv4.OptionCode{dhcpv4.OptionIPAddressLeaseTime, dhcpv4.OptionSubnetMask, dhcpv4.GenericOptionCode(175)} {
				if resp.Options.Has(forbidden) {
					t.Errorf("proxy answer carries %v: that is the segment server's to say", forbidden)
				}
			}
		})
	}
}
