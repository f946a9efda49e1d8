package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2ERouterBOARDTwins boots the twins of the seed's RouterBOARDs the
// way RouterBOOT boots them — plain BOOTP, one ELF by TFTP — big-endian,
// with bootbench's own kernel, and runs openssl speed cross-built from
// Debian's source: the RB450G's twin at 256 MiB and the RB450's at its
// 32 MiB. Each stores openssl 3.0's figures, its version line is in the
// raw output, and the OpenWrt export has its row.
func TestE2ERouterBOARDTwins(t *testing.T) {
	requireBench(t)
	requireTools(t, "qemu-system-mips", "mips-linux-gnu-gcc")
	for _, tt := range []struct {
		board  string
		ramMiB int
	}{{"qemu-rb450g", 256}, {"qemu-rb450", 32}} {
		t.Run(tt.board, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "results.db")
			// 250 MHz, the cheapest clock; openssl's own algorithms (the
			// OpenWrt table's): QEMU's Malta passes 255 bytes of command
			// line, which RouterBOOT's parameters and the run's fill.
			r := bootbench(t, db, "run", "--board", tt.board, "--bench", "openssl", "--clock", "250", "--seconds", "1")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			for _, want := range []string{"bootp-reply to ", "tftp     " + tt.board + "/kernel.elf", "clock    250 MHz, confirmed by the board"} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("progress lacks %q:\n%s", want, r.stderr)
				}
			}
			runs := storedRuns(t, db)
			if len(runs) != 1 || runs[0].Status != "ok" || len(runs[0].Metrics) < 50 {
				t.Fatalf("stored: %+v", runs)
			}
			var h struct {
				Arch       string `json:"arch"`
				CPU        string `json:"cpu"`
				MemTotalKB int    `json:"mem_total_kb"`
			}
			json.Unmarshal(runs[0].Hello, &h)
			if h.Arch != "mips" || !strings.Contains(h.CPU, "24Kc") || h.MemTotalKB <= 0 || h.MemTotalKB > tt.ramMiB<<10 {
				t.Errorf("hello: %+v; want a big-endian 24Kc in %d MiB", h, tt.ramMiB)
			}
			raw := bootbench(t, db, "results", "show", runs[0].ID, "--raw")
			if !strings.Contains(raw.stdout, "version: 3.0.") {
				t.Errorf("raw output has no openssl 3.0 version line:\n%s", raw.stdout)
			}
			row := bootbench(t, db, "results", "export", "--format", "openwrt", "--board", tt.board)
			if lines := strings.Split(strings.TrimSpace(row.stdout), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], "| "+tt.board+" | 250 | 3.0.") {
				t.Errorf("openwrt export:\n%s", row.stdout)
			}
			assertNothingLeft(t, r.stderr)
		})
	}
}
