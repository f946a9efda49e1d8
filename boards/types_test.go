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

// TestBogoMIPSAgree holds the clock rule to published boots: each board's
// BogoMIPS agree with the clock it ran at and not with its other setting.
func TestBogoMIPSAgree(t *testing.T) {
	for _, tt := range []struct {
		bogomips string
		perMHz   float64
		clock    MHz
		implied  MHz
		agree    bool
	}{
		{"452.19", 0.6656, 680, 679, true},  // AR7161 (RB450G) at 680 MHz
		{"452.19", 0.6656, 800, 679, false}, // ... is not at 800
		{"265.42", 0.6656, 400, 399, true},  // AR7241 at 400 MHz, one boot
		{"266.24", 0.6656, 400, 400, true},  // ... and another
		{"198.65", 0.99, 200, 201, true},    // BCM4712 (WRT54G) at 200 MHz
		{"198.65", 0.99, 216, 201, false},   // 7 % off: not 216
		{"452.19", 0, 680, 0, false},        // the profile knows no ratio
		{"", 0.6656, 680, 0, false},         // no BogoMIPS
		{"452.19", 0.6656, 0, 679, false},   // no clock to confirm
	} {
		implied, agree := BogoMIPSAgree(tt.bogomips, tt.perMHz, tt.clock)
		if implied != tt.implied || agree != tt.agree {
			t.Errorf("BogoMIPSAgree(%q, %v, %d) = %d, %v; want %d, %v", tt.bogomips, tt.perMHz, tt.clock, implied, agree, tt.implied, tt.agree)
		}
	}
}
