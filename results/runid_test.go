package results

import (
	"regexp"
	"sync"
	"testing"
)

func TestNewRunID(t *testing.T) {
	// The shape the harness gives its runs, so imports list among them.
	shape := regexp.MustCompile(`^\d{8}-\d{6}-[0-9a-f]{8}$`)
	a, b := NewRunID(), NewRunID()
	if !shape.MatchString(string(a)) || a == b {
		t.Errorf("NewRunID() = %q, %q; want distinct ids like 20250314-150926-0123abcd", a, b)
	}
	// Far more ids a second than any import makes, from several
	// goroutines: 32 random bits drawn per id would repeat about a
	// hundred times among these.
	const workers, each = 4, 250_000
	ids := make([][]RunID, workers)
	var wg sync.WaitGroup
	for w := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				ids[w] = append(ids[w], NewRunID())
			}
		}()
	}
	wg.Wait()
	seen := make(map[RunID]bool, workers*each)
	for _, list := range ids {
		for _, id := range list {
			if seen[id] {
				t.Fatalf("NewRunID made %s twice", id)
			}
			seen[id] = true
		}
	}
}

// TestRunIDRoundTrip: an id NewRunID made reads back as itself, and what
// is not one is refused.
func TestRunIDRoundTrip(t *testing.T) {
	for _, id := range []RunID{NewRunID(), "20261130-080534-4f1c2a9e", "19991231-235959-00000000"} {
		got, err := ParseRunID(id.String())
		if err != nil || got != id {
			t.Errorf("ParseRunID(%q) = %q, %v; want it back", id, got, err)
		}
	}
	for _, s := range []string{
		"",
		"a",
		"20261130-080534",           // no hex part
		"20261130-080534-4f1c2a9",   // 7 hex digits
		"20261130-080534-4f1c2a9e0", // 9
		"20261130-080534-4F1C2A9E",  // upper case: NewRunID writes lower
		"20261130-080534-4f1c2a9g",
		"20261332-080534-4f1c2a9e", // no such day
		"20261130-250534-4f1c2a9e", // no such hour
		"2026-11-30-080534-4f1c2a9e",
	} {
		if id, err := ParseRunID(s); err == nil {
			t.Errorf("ParseRunID(%q) = %q, want an error", s, id)
		}
	}
}
