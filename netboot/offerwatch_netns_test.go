package netboot

import (
	"context"
	"net"
	"testing"
	"time"
)

// TestWatchOffers: the watcher on the bench NIC reports a DHCP server that
// answers on the segment, named by its address, and only once however
// often it answers.
func TestWatchOffers(t *testing.T) {
	requireNetns(t)
	host, server := newNetns(t, "bbnb-h-"), newNetns(t, "bbnb-s-")
	run(t, "ip", "-n", host, "link", "add", "bench0", "type", "veth", "peer", "name", "seg0", "netns", server)
	run(t, "ip", "-n", host, "link", "set", "bench0", "up")
	run(t, "ip", "-n", host, "addr", "add", "198.18.9.1/24", "dev", "bench0")
	run(t, "ip", "-n", server, "link", "set", "seg0", "up")
	run(t, "ip", "-n", server, "addr", "add", "198.18.9.2/24", "dev", "seg0")

	seen := make(chan ForeignOffer, 8)
	var stop func()
	inNetns(t, host, func() {
		var err error
		if stop, err = WatchOffers("bench0", net.IPv4(198, 18, 9, 1), func(o ForeignOffer) { seen <- o }); err != nil {
			t.Error(err)
		}
	})
	if stop == nil {
		t.FailNow()
	}
	defer stop()

	var mac net.HardwareAddr
	inNetns(t, host, func() {
		if ifi, err := net.InterfaceByName("bench0"); err == nil {
			mac = ifi.HardwareAddr
		}
	})
	plan := StaticPlan{Server: net.IPv4(198, 18, 9, 2).To4(), Mask: net.CIDRMask(24, 32), Hosts: map[string]Host{
		mac.String(): {IP: net.IPv4(198, 18, 9, 50).To4()},
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var conn net.PacketConn
	inNetns(t, server, func() {
		var err error
		if conn, err = ListenDHCP("seg0"); err != nil {
			t.Error(err)
		}
	})
	if conn == nil {
		t.FailNow()
	}
	go ServeDHCP(ctx, conn, plan, nil)
	for i := 0; i < 2; i++ { // two DISCOVERs, two offers: one report
		inNetns(t, host, func() {
			if r, err := ProbeDHCP(context.Background(), "bench0", time.Second); r == nil || err != nil {
				t.Errorf("probe %d: %v, %v", i, r, err)
			}
		})
	}
	select {
	case o := <-seen:
		if want := "another DHCP server at 198.18.9.2 offered 198.18.9.50 to " + mac.String(); o.String() != want {
			t.Errorf("reported %q, want %q", o, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the watcher reported no offer")
	}
	stop()
	if len(seen) != 0 {
		t.Errorf("reported again: %v", <-seen)
	}
}
