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
