package boards

import (
	"strings"
	"testing"
)

func TestShippedProfilesParse(t *testing.T) {
	ps, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) == 0 {
		t.Fatal("no profiles shipped")
	}
	if _, err := Get(Default); err != nil {
		t.Fatalf("default board: %v", err)
	}
	for _, p := range ps {
		if p.ClockMethod == "qemu-icount" {
			for _, c := range p.Clocks {
				if _, err := IcountShift(c); err != nil {
					t.Errorf("%s: %v", p.Name, err)
				}
			}
		}
	}
}

func TestGetUnknown(t *testing.T) {
	_, err := Get("rb9999")
	if err == nil || !strings.Contains(err.Error(), Default) {
		t.Fatalf("error %v should list the known boards", err)
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"typo field", "name: x\narch: amd64\nram: 5\n", "field ram not found"},
		{"no arch", "name: x\n", "needs name and arch"},
		{"bad default clock", "name: x\narch: arm\nclocks: [680]\ndefault_clock: 800\n", "not among"},
		{"bad mac", "name: x\narch: arm\nvirtual: {mac: zz}\n", "bad MAC"},
	}
	for _, tt := range tests {
		if _, err := Parse([]byte(tt.yaml)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestIcountShift(t *testing.T) {
	for mhz, want := range map[int]int{1000: 0, 500: 1, 250: 2} {
		if got, err := IcountShift(mhz); err != nil || got != want {
			t.Errorf("IcountShift(%d) = %d, %v", mhz, got, err)
		}
	}
	if _, err := IcountShift(680); err == nil {
		t.Error("680 MHz accepted as a virtual clock")
	}
}
