package harness

import (
	"sync"
	"time"
)

// Unknown MACs: a segment shared with other machines, or a flood of made-up
// MACs, would otherwise print an eight-line hint per MAC (20,000 MACs gave
// 5.7 MB of log). Each MAC gets one hint; beyond hintsPerInterval new MACs
// in an interval, one summary line counts the rest.
const (
	hintsPerInterval = 5
	hintInterval     = time.Minute
	// hintMemory bounds the MACs remembered as hinted: a flood of made-up
	// MACs must not grow the map without end. Past it, a MAC is not
	// remembered, and the rate limit alone bounds what it costs.
	hintMemory = 1 << 16
)

// unknownHints decides which unknown MACs get a hint and counts the others.
type unknownHints struct {
	every time.Duration
	max   int
	hint  func(UnknownBoard)
	more  func(n int, every time.Duration) // the summary of an interval

	mu     sync.Mutex
	seen   map[string]bool
	from   time.Time // the current interval's start
	shown  int       // hints in the current interval
	held   int       // MACs not hinted since the last summary
	timer  *time.Timer
	closed bool
}

func newUnknownHints(hint func(UnknownBoard), more func(int, time.Duration)) *unknownHints {
	return &unknownHints{every: hintInterval, max: hintsPerInterval, hint: hint, more: more, seen: map[string]bool{}}
}

// add takes one request from a MAC the inventory lacks.
func (u *unknownHints) add(b UnknownBoard) {
	if u.hint == nil {
		return
	}
	mac := b.MAC.String()
	u.mu.Lock()
	if u.seen[mac] || u.closed {
		u.mu.Unlock()
		return
	}
	if len(u.seen) < hintMemory {
		u.seen[mac] = true
	}
	now := time.Now()
	if now.Sub(u.from) >= u.every {
		u.from, u.shown = now, 0
	}
	show := u.shown < u.max
	if show {
		u.shown++
	} else {
		u.held++
		if u.timer == nil {
			u.timer = time.AfterFunc(u.from.Add(u.every).Sub(now), u.summarise)
		}
	}
	u.mu.Unlock()
	if show {
		u.hint(b)
	}
}

// summarise says how many MACs went without a hint since the last summary.
func (u *unknownHints) summarise() {
	u.mu.Lock()
	n := u.held
	u.held, u.timer = 0, nil
	u.mu.Unlock()
	if n > 0 && u.more != nil {
		u.more(n, u.every)
	}
}

// close gives the last summary at once, when serving ends.
func (u *unknownHints) close() {
	u.mu.Lock()
	u.closed = true
	if u.timer != nil {
		u.timer.Stop()
	}
	u.mu.Unlock()
	u.summarise()
}
