package results

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RunID names one run: UTC start time and 8 hex digits,
// "20261130-080534-4f1c2a9e". It goes to the board on the kernel command
// line and comes back in every frame.
type RunID string

// runIDTime is the layout of an id's time part.
const runIDTime = "20060102-150405"

// NewRunID returns a fresh run id, "20060102-150405-<8 hex digits>":
// sortable by creation time, never the same twice in one process, and
// unlikely to match one made elsewhere in the same second, so that a stale
// boot's frames never match a new run and runs from many bench hosts can
// share one store.
//
// The 8 hex digits count up from a random start per process, rather than
// being drawn afresh: 32 random bits per id would be enough for runs on
// boards (seconds each), but an import stores hundreds a second, and among
// n ids drawn in one second two collide with odds n²/2³³ (1 in 30 000 for
// 500), whereas two processes' counters meet in a second with odds
// (n₁+n₂)/2³² (1 in 8.6 million), and one process's never. The format stays
// what boards, scripts and stores already hold.
func NewRunID() RunID {
	n := runIDCounter().Add(1)
	return RunID(fmt.Sprintf("%s-%08x", time.Now().UTC().Format(runIDTime), n))
}

// runIDCounter starts at a random point, once per process.
var runIDCounter = sync.OnceValue(func() *atomic.Uint32 {
	var b [4]byte
	rand.Read(b[:]) // never fails (crypto/rand panics rather than return short)
	c := new(atomic.Uint32)
	c.Store(binary.BigEndian.Uint32(b[:]))
	return c
})

// String is the id as it is written everywhere: on the kernel command
// line, in frames, in the store.
func (id RunID) String() string { return string(id) }

// ParseRunID reads an id in NewRunID's shape, refusing anything else.
func ParseRunID(s string) (RunID, error) {
	stamp, hex, ok := cutLast(s, "-")
	if _, err := time.Parse(runIDTime, stamp); !ok || err != nil || len(hex) != 8 || !isLowerHex(hex) {
		return "", fmt.Errorf("run id %q: want YYYYMMDD-HHMMSS-xxxxxxxx (UTC time, 8 hex digits)", s)
	}
	return RunID(s), nil
}

// Short is the id's random part, for names that must be short (network
// namespaces, interfaces).
func (id RunID) Short() string {
	if len(id) < 8 {
		return string(id)
	}
	return string(id[len(id)-8:])
}

func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

func isLowerHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
