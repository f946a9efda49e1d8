package harness

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/serialctl"
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

// TestConsoleLost: a console that goes away (its adapter unplugged) ends
// the run once it has stayed away consoleGrace, with the console's own
// note as the reason; one that comes back in time does not.
func TestConsoleLost(t *testing.T) {
	defer func(g time.Duration) { consoleGrace = g }(consoleGrace)
	consoleGrace = 100 * time.Millisecond
	lost := serialctl.Line{Text: []byte("[bootbench: console /dev/ttyUSB0 lost: hung up]"), Note: true, Lost: true}
	back := serialctl.Line{Text: []byte("[bootbench: console /dev/ttyUSB0 back after 0.1s]"), Note: true, Back: true}
	for _, tt := range []struct {
		name  string
		lines []serialctl.Line
		want  string
	}{
		{"gone", []serialctl.Line{lost}, "console-lost: console /dev/ttyUSB0 lost: hung up at the firmware stage, and not back within 100ms: was its adapter unplugged?"},
		{"back in time", []serialctl.Line{lost, back}, "boot-timeout: no hello from the board within 1s"},
		// The adapter pulled in the middle of a frame: the loss decides,
		// not the checksum of the half frame it left.
		{"a frame cut", []serialctl.Line{cutFrame(t), lost}, "console-lost: console /dev/ttyUSB0 lost: hung up at the firmware stage"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &run{o: config{Job: plan.Job{Board: boards.Board{Name: "pc1"}, BootTimeout: time.Second, RunTimeout: time.Second}},
				start: time.Now(), rec: &results.Run{ID: "r1"}, stage: "firmware"}
			lines := make(chan serialctl.Line, len(tt.lines))
			for _, l := range tt.lines {
				lines <- l
			}
			start := time.Now()
			err := r.watch(context.Background(), lines, nil)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("watch = %v, want %q", err, tt.want)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
}

// cutFrame is the first half of a raw frame, as a console's loss leaves it.
func cutFrame(t *testing.T) serialctl.Line {
	t.Helper()
	f, err := frame.Encode("r1", 1, frame.Raw, "aGVsbG8gd29ybGQsIHRoaXMgaXMgYSBjaHVuawo=")
	if err != nil {
		t.Fatal(err)
	}
	return serialctl.Line{Text: []byte(f[:len(f)/2]), Cut: true}
}
