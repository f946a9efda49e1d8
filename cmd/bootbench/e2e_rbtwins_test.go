package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestE2ERB450GClocks is the seed's own experiment on the RB450G's twin:
// openssl speed at two clocks, four boots each, interleaved, compared.
// Every @1024 figure doubles with the clock (2.00 ± 0.02, p < 0.05), both
// clocks are confirmed by the board's BogoMIPS, and the OpenWrt export
// has one row per clock. (The real board's 680 and 800 MHz are set in
// RouterBOOT's menu; QEMU can make only powers of two exact.)
func TestE2ERB450GClocks(t *testing.T) {
	requireBench(t)
	requireTools(t, "qemu-system-mips", "mips-linux-gnu-gcc")
	db := filepath.Join(t.TempDir(), "results.db")
	runAtTwoClocks(t, db, "--board", "qemu-rb450g", "--bench", "openssl", "--algs", "md5,aes-128-cbc,rsa2048", "--seconds", "1")
	at1024 := func(name string) bool { return strings.HasSuffix(name, "@1024") }
	if n := len(assertDoubling(t, db, "qemu-rb450g", at1024)); n != 2 {
		t.Errorf("%d @1024 metrics compared, want 2 (md5, aes-128-cbc)", n)
	}
	row := bootbench(t, db, "results", "export", "--format", "openwrt", "--with-setting", "--board", "qemu-rb450g")
	lines := strings.Split(strings.TrimSpace(row.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "| qemu-rb450g | 500 | 3.0.") || !strings.HasPrefix(lines[2], "| qemu-rb450g | 1000 | 3.0.") {
		t.Errorf("openwrt export, want a row per clock:\n%s", row.stdout)
	}
	t.Logf("%s", row.stdout)
}
