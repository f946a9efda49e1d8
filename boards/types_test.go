package boards

import (
	"slices"
	"testing"
)

func TestMHzTexts(t *testing.T) {
	for _, tt := range []struct {
		m                                           MHz
		str, label, phrase, key, digits, or, figure string
	}{
		{680, "680 MHz", "680 MHz", "680 MHz", "680MHz", "680", "680 MHz", "680 MHz"},
		{0, "default clock", "default", "the default clock", "default", "-", "the board's default", "0 MHz"},
	} {
		got := []string{tt.m.String(), tt.m.Label(), tt.m.Phrase(), tt.m.Key(), tt.m.Digits(), tt.m.Or("the board's default"), tt.m.Figure()}
		want := []string{tt.str, tt.label, tt.phrase, tt.key, tt.digits, tt.or, tt.figure}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("MHz(%d) text %d = %q, want %q", int(tt.m), i, got[i], want[i])
			}
		}
	}
}

func TestClocksTexts(t *testing.T) {
	for _, tt := range []struct {
		cs                                  Clocks
		and, comma, digits, labels, phrases string
	}{
		{Clocks{680, 800}, "680 and 800 MHz", "680, 800 MHz", "680,800", "680 MHz, 800 MHz", "680 MHz, 800 MHz"},
		{Clocks{0, 300}, "0 and 300 MHz", "0, 300 MHz", "0,300", "default, 300 MHz", "the default clock, 300 MHz"},
		{Clocks{1500}, "1500 MHz", "1500 MHz", "1500", "1500 MHz", "1500 MHz"},
		{nil, " MHz", " MHz", "-", "", ""},
	} {
		got := []string{tt.cs.Joined(" and "), tt.cs.Joined(", "), tt.cs.Digits(), tt.cs.Labels(), tt.cs.Phrases()}
		want := []string{tt.and, tt.comma, tt.digits, tt.labels, tt.phrases}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("Clocks%v text %d = %q, want %q", []MHz(tt.cs), i, got[i], want[i])
			}
		}
	}
}

// TestParseClocks: settings as a user lists them; each names a clock, so
// the default (0) is refused, in the words ParseMHz uses.
func TestParseClocks(t *testing.T) {
	for in, want := range map[string]Clocks{"680": {680}, "680, 800MHz": {680, 800}, " 500,,1000 ": {500, 1000}, ",": nil} {
		if got, err := ParseClocks(in); err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseClocks(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{"680,fast": `"fast" is not a clock in MHz`, "0": `"0" is not a clock in MHz`, "680, 0MHz": `"0MHz" is not a clock in MHz`, "-5": `"-5" is not a clock in MHz`} {
		if got, err := ParseClocks(in); err == nil || err.Error() != msg {
			t.Errorf("ParseClocks(%q) = %v, %v; want %s", in, got, err, msg)
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
