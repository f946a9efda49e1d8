package harness

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/results"
)

// TestNetEventAddress: a proxyDHCP answer carries no address (the
// segment's own DHCP server gives it), and the log says so rather than
// printing "<nil>"; a DHCP answer shows the address it gave.
func TestNetEventAddress(t *testing.T) {
	mac, _ := net.ParseMAC("52:54:00:bb:05:20")
	tests := []struct {
		kind string
		ip   net.IP
		want string
	}{
		{"proxy-offer", nil, "its address from the segment's DHCP server"},
		{"proxy-ack", nil, "its address from the segment's DHCP server"},
		{"dhcp-offer", net.IPv4(198, 18, 5, 20), "198.18.5.20"},
		{"dhcp-ack", net.IPv4(198, 18, 5, 20), "198.18.5.20"},
		{"dhcp-nak", nil, "no address"},
	}
	for _, tt := range tests {
		var msgs []string
		r := &run{o: config{Job: plan.Job{Board: boards.Board{Name: "rb450g"}},
			Rig: Rig{Events: func(e Event) { msgs = append(msgs, e.Msg) }}},
			start: time.Now(), rec: &results.Run{ID: "r1"}}
		w := &watcher{r: r, ignored: map[string]bool{}}
		w.netEvent(netboot.Event{Kind: tt.kind, MAC: mac, IP: tt.ip, File: "boot.ipxe"})
		got := strings.Join(msgs, "\n")
		if strings.Contains(got, "<nil>") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: logged %q, want %q and no <nil>", tt.kind, got, tt.want)
		}
	}
}
