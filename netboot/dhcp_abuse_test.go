package netboot

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// TestDHCPEventsSafeToShow: the vendor class is the client's own text and
// is shown to the operator ("not answering ... (vendor class)"): it reaches
// the event quoted when it is not plain.
func TestDHCPEventsSafeToShow(t *testing.T) {
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan Event, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { ServeDHCP(ctx, conn, testPlan(), func(e Event) { events <- e }); close(done) }()
	defer func() { cancel(); <-done; conn.Close() }()

	tests := []struct{ class, want string }{
		{"PXEClient:Arch:00000:UNDI:002001", "PXEClient:Arch:00000:UNDI:002001"},
		{"\x1b[2J\x1b]0;owned\x07", `"\x1b[2J\x1b]0;owned\a"`},
	}
	for _, tt := range tests {
		req, _ := dhcpv4.NewDiscovery(strangeMAC, dhcpv4.WithOption(dhcpv4.OptClassIdentifier(tt.class)))
		if _, err := conn.WriteTo(req.ToBytes(), conn.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		select {
		case e := <-events:
			if e.VendorClass != tt.want || strings.ContainsFunc(e.VendorClass, unsafeRune) {
				t.Errorf("vendor class %q: event says %q, want %q", tt.class, e.VendorClass, tt.want)
			}
		case <-time.After(3 * time.Second):
			t.Fatal("no event")
		}
	}
}

// TestMalformedMessageTypeNotBOOTP: a request whose DHCP message type
// (option 53) is broken is a broken DHCP request, not plain BOOTP: it is
// not answered at all. Plain BOOTP, as RouterBOOT sends it, still is.
func TestMalformedMessageTypeNotBOOTP(t *testing.T) {
	discover, _ := dhcpv4.NewDiscovery(knownMAC)
	fixed := discover.ToBytes()[:bootpMinLen]
	cookie := []byte{99, 130, 83, 99}
	vendor := func(b ...byte) []byte {
		p := append(append(append([]byte{}, fixed...), cookie...), b...)
		for len(p) < 300 {
			p = append(p, 0)
		}
		return p
	}
	tests := []struct {
		name      string
		pkt       []byte
		wantBOOTP bool
	}{
		{"option 53 of length 0", vendor(53, 0, 255), false},
		{"option 53 of length 2", vendor(53, 2, 1, 1, 255), false},
		{"option 53 of value 0", vendor(53, 1, 0, 255), false},
		{"option 53 without End", vendor(53, 1, 1), false},
		{"option 53 cut short", append(append(append([]byte{}, fixed...), cookie...), 53), false},
		{"option 53 after other options, no End", vendor(12, 3, 'r', 'b', '1', 53, 1, 1), false},
		{"no vendor area (RouterBOOT)", rawBOOTP(knownMAC), true},
		{"cookie and padding, no End (RouterBOOT)", vendor(), true},
		{"cookie and End", vendor(255), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := ParseRequest(tt.pkt)
			kind := "refused: " + errString(err)
			if err == nil {
				_, ev := Reply(req, testPlan())
				kind = ev.Kind
			}
			if got := kind == "bootp-reply"; got != tt.wantBOOTP {
				t.Errorf("answered as %s; want BOOTP %v", kind, tt.wantBOOTP)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
