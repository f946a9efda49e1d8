package serialctl

import "testing"

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain line", "plain line"},
		{"\x1b[2J\x1b[01;01H\x1b[=3h\x1b[2J\x1b[01;01HSeaBIOS (version 1.16.2)", "SeaBIOS (version 1.16.2)"},
		{"Press Ctrl-B for the iPXE command line...\b \b\b \b\b \bNo bootable device.", "Press Ctrl-B for the iPXE command lineNo bootable device."}, // "\b \b" erases, as on a terminal,
		{"\x1bcreset then text\r", "reset then text"},
		{"tab\there\x07", "tab here"},
	}
	for _, tt := range tests {
		if got := Printable([]byte(tt.in)); got != tt.want {
			t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
