package openwrtwiki

import (
	"reflect"
	"strings"
	"testing"
)

func TestCPUInfoLines(t *testing.T) {
	tests := []struct {
		name, cpuinfo string
		want          []string
	}{
		{"mips router", "system type\t\t: Atheros AR7241 rev 1\nmachine\t\t\t: TP-LINK TL-MR3420\nprocessor\t\t: 0\ncpu model\t\t: MIPS 24Kc V7.4\nBogoMIPS\t\t: 266.24\nwait instruction\t: yes\n",
			[]string{"system type\t\t: Atheros AR7241 rev 1", "machine\t\t\t: TP-LINK TL-MR3420", "cpu model\t\t: MIPS 24Kc V7.4", "BogoMIPS\t\t: 266.24"}},
		{"arm, one BogoMIPS a core", "processor\t: 0\nBogoMIPS\t: 38.40\n\nprocessor\t: 1\nBogoMIPS\t: 38.40\nHardware\t: BCM2835\n",
			[]string{"BogoMIPS\t: 38.40", "BogoMIPS\t: 38.40"}},
		{"x86 says bogomips in lower case", "processor\t: 0\nmodel name\t: Intel(R) Xeon(R)\nbogomips\t: 4800.00\n", nil},
	}
	for _, tt := range tests {
		if got := CPUInfoLines(tt.cpuinfo); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
	if n := len(CPUInfoLines(strings.Repeat("BogoMIPS\t: 1.00\n", 1000))); n != MaxLines {
		t.Errorf("%d lines of 1000 kept, want %d", n, MaxLines)
	}
}
