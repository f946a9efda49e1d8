package boards

// Closest is the name among names that s is most likely a typo of: the
// nearest by edit distance, at most two letters off, the first of equals;
// "" when none is that near.
func Closest(s string, names []string) string {
	best, bestDist := "", 3
	for _, n := range names {
		if n == s || len(n) <= 2 {
			continue
		}
		if d := editDistance(s, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}
