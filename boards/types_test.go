package boards

import "testing"

func TestMHzTexts(t *testing.T) {
	for _, tt := range []struct {
		m                                   MHz
		str, label, phrase, key, digits, or string
	}{
		{680, "680 MHz", "680 MHz", "680 MHz", "680MHz", "680", "680 MHz"},
		{0, "default clock", "default", "the default clock", "default", "-", "the board's default"},
	} {
		got := []string{tt.m.String(), tt.m.Label(), tt.m.Phrase(), tt.m.Key(), tt.m.Digits(), tt.m.Or("the board's default")}
		want := []string{tt.str, tt.label, tt.phrase, tt.key, tt.digits, tt.or}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("MHz(%d) text %d = %q, want %q", int(tt.m), i, got[i], want[i])
			}
		}
	}
}

func TestMHzFromKHz(t *testing.T) {
	for khz, want := range map[int]MHz{680000: 680, 799999: 800, 1200500: 1201, 0: 0} {
		if got := MHzFromKHz(khz); got != want {
			t.Errorf("MHzFromKHz(%d) = %d, want %d", khz, got, want)
		}
	}
}

func TestMHzFromBogoMIPS(t *testing.T) {
	for _, tt := range []struct {
		bogomips string
		perMHz   float64
		want     MHz
	}{
		{"452.19", 2.0 / 3, 678},
		{" 1599.07\n", 2, 800},
		{"452.19", 0, 0}, // the profile knows no ratio
		{"", 2, 0},       // the board reported none
		{"fast", 2, 0},   // not a number
		{"-10", 2, 0},    // not a clock
	} {
		if got := MHzFromBogoMIPS(tt.bogomips, tt.perMHz); got != tt.want {
			t.Errorf("MHzFromBogoMIPS(%q, %v) = %d, want %d", tt.bogomips, tt.perMHz, got, tt.want)
		}
	}
}
