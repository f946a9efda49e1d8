package boards

import "testing"

func TestClosest(t *testing.T) {
	names := []string{"rb450", "rb450g", "rb750", "wrt54g-v3"}
	tests := []struct{ s, want string }{
		{"rb450gg", "rb450g"}, // rb450 is two off, rb450g one
		{"rb45g", "rb450"},    // rb450 and rb450g both one off: the first
		{"rb750x", "rb750"},
		{"wrt54g", ""}, // three off: no guess
		{"desktop", ""},
	}
	for _, tt := range tests {
		if got := Closest(tt.s, names); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}
