package harness

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/bootbench/bootbench/netboot"
)

// TestUnknownHintsLimited: 20,000 unknown MACs, each asking twice, give
// one hint for each of the first few and one summary line for the rest,
// not 20,000 hints; the next interval hints again.
func TestUnknownHintsLimited(t *testing.T) {
	var mu sync.Mutex
	hinted := map[string]int{}
	summaries := make(chan int, 4)
	s := &server{byMAC: map[string]*servedBoard{}, unknown: newUnknownHints(
		func(u UnknownBoard) { mu.Lock(); hinted[u.MAC.String()]++; mu.Unlock() },
		func(n int, _ time.Duration) { summaries <- n })}
	s.unknown.every = 500 * time.Millisecond
	const macs = 20000
	start := time.Now()
	for round := 0; round < 2; round++ {
		for i := 0; i < macs; i++ {
			mac := net.HardwareAddr{0x02, 0, 0, byte(i >> 16), byte(i >> 8), byte(i)}
			s.ignored(netboot.Event{Kind: "ignored", MAC: mac, VendorClass: "PXEClient:Arch:00000"})
		}
	}
	if time.Since(start) > s.unknown.every {
		t.Skipf("sending took %v, longer than the interval: the count below would not be one interval's", time.Since(start))
	}
	mu.Lock()
	if len(hinted) != hintsPerInterval {
		t.Errorf("%d MACs hinted, want %d", len(hinted), hintsPerInterval)
	}
	for mac, n := range hinted {
		if n != 1 {
			t.Errorf("%s hinted %d times, want once", mac, n)
		}
	}
	mu.Unlock()
	select {
	case n := <-summaries:
		if n != macs-hintsPerInterval {
			t.Errorf("summary counts %d MACs, want %d", n, macs-hintsPerInterval)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("no summary line within the interval")
	}
	// A new interval: a new MAC gets its hint, an old one still none.
	time.Sleep(s.unknown.every)
	s.ignored(netboot.Event{Kind: "ignored", MAC: net.HardwareAddr{0x02, 1, 0, 0, 0, 1}})
	s.ignored(netboot.Event{Kind: "ignored", MAC: net.HardwareAddr{0x02, 0, 0, 0, 0, 9}})
	s.unknown.close()
	mu.Lock()
	defer mu.Unlock()
	if len(hinted) != hintsPerInterval+1 || hinted["02:01:00:00:00:01"] != 1 {
		t.Errorf("next interval: hinted %v, want the new MAC only", hinted)
	}
	select {
	case n := <-summaries:
		t.Errorf("a summary of %d with nothing held back", n)
	default:
	}
}

// TestUnknownHintsSummaryAtClose: MACs held back when serving ends are
// counted at once, not lost with the timer.
func TestUnknownHintsSummaryAtClose(t *testing.T) {
	var got []int
	u := newUnknownHints(func(UnknownBoard) {}, func(n int, _ time.Duration) { got = append(got, n) })
	for i := 0; i < hintsPerInterval+3; i++ {
		u.add(UnknownBoard{MAC: net.HardwareAddr{0x02, 0, 0, 0, 0, byte(i)}})
	}
	u.close()
	if len(got) != 1 || got[0] != 3 {
		t.Errorf("summaries at close %v, want [3]", got)
	}
}
