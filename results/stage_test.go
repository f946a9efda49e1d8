package results

import "testing"

// TestEventKindsDistinct: a stage and another event never share a name,
// or a progress line would not say which it is.
func TestEventKindsDistinct(t *testing.T) {
	kinds := EventKinds()
	if len(kinds) != len(Stages)+len(otherEvents) {
		t.Fatalf("%d event kinds, want %d stages and %d others", len(kinds), len(Stages), len(otherEvents))
	}
	seen := map[EventKind]bool{}
	for i, k := range kinds {
		if k == "" || seen[k] {
			t.Errorf("event kind %d %q is empty or listed twice", i, k)
		}
		seen[k] = true
	}
	for _, s := range Stages {
		if !seen[s.Event()] {
			t.Errorf("stage %s is not an event kind", s)
		}
	}
}
