package export

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/bootbench/bootbench/results"
)

// TestRecipeQuirks: the recipe's lines as awk and sed run them (checked
// against mawk and GNU sed; cmd/bootbench runs the recipe itself).
func TestRecipeQuirks(t *testing.T) {
	cpu := []struct {
		name  string
		lines []string
		want  string
	}{
		// FS=":" takes from the record after the first match: the
		// first line is split at blanks.
		{"mips", []string{"system type\t\t: Atheros AR7241 rev 1", "machine\t\t\t: TP-LINK TL-MR3420", "cpu model\t\t: MIPS 24Kc V7.4", "BogoMIPS\t\t: 266.24"},
			"|type | TP-LINK TL-MR3420 | MIPS 24Kc V7.4 | 266.24 |\n"},
		{"arm, BogoMIPS first", []string{"BogoMIPS\t: 38.40", "BogoMIPS\t: 38.40"}, ": | | 38.40 |\n"},
		{"a value with a colon", []string{"cpu model : MIPS 24Kc", "machine : a:b"}, "model | a\n"},
		{"none", nil, ""},
	}
	for _, tt := range cpu {
		if got := RecipeCPUInfo(tt.lines); got != tt.want {
			t.Errorf("cpuinfo %s: %q, want %q", tt.name, got, tt.want)
		}
	}
	ssl := []struct {
		name, output, want string
	}{
		// A figure without two decimals keeps its k; des/aes wait for
		// the rsa line.
		{"1.0.2", "OpenSSL 1.0.2u  20 Dec 2019\ntype 16 bytes 64 bytes 256 bytes 1024 bytes 8192 bytes\nmd5 100.00k 200.00k 300.00k 400.5k 500.00k\naes-128 cbc 1.00k 2.00k 3.00k 4.25k 5.00k\nrsa 2048 bits 0.1s 0.01s 10.0 100.0\n",
			"| 1.0.2u |  400.5k |  4250 |  10.0 |  100.0 |\n"},
		{"3.x prints no OpenSSL line; aes without rsa never shows", "version: 3.0.19\nmd5 1.00k 2.00k 3.00k 4.00k\naes-128 cbc 1.00k 2.00k 3.00k 4.00k 5.00k\n",
			"  4000 |\n"},
		{"no trailing newline", "md5 1.00k 2.00k 3.00k 4.12k", "  4120 |\n"},
		{"nothing", "", "\n"},
	}
	for _, tt := range ssl {
		if got := RecipeOpenSSL(tt.output); got != tt.want {
			t.Errorf("openssl %s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestWriteOpenWrtRuns: one recipe row per ok run with the table's
// figures, by board then clock; no hello, no cpuinfo line. ("machine : X"
// alone is split at blanks, the recipe's first match: ":".)
func TestWriteOpenWrtRuns(t *testing.T) {
	hello, _ := json.Marshal(map[string]any{"cpuinfo": []string{"machine : X"}})
	md5 := []results.Metric{{Name: "md5@1024", Unit: "B/s", Value: 4000}}
	out := "md5 1.00k 2.00k 3.00k 4.00k\n"
	runs := []results.Run{
		{ID: "a", Board: "rb2", ClockMHz: 680, Status: results.StatusOK, Metrics: md5, RawOutput: []byte(out), Hello: hello},
		{ID: "b", Board: "rb1", ClockMHz: 800, Status: results.StatusOK, Metrics: md5, RawOutput: []byte("md5 1.00k 2.00k 3.00k 8.00k\n")},
		{ID: "c", Board: "rb1", ClockMHz: 680, Status: results.StatusFailed, RawOutput: []byte(out)},
		{ID: "d", Board: "rb1", ClockMHz: 680, Status: results.StatusOK, RawOutput: []byte("iperf\n"), Metrics: []results.Metric{{Name: "tcp", Unit: "bit/s", Value: 1}}},
	}
	var b bytes.Buffer
	if err := WriteOpenWrt(&b, runs); err != nil {
		t.Fatal(err)
	}
	if want := "  8000 |\n:\n  4000 |\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
