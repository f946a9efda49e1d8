package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/internal/testkit/needs"
)

// TestE2ERB450OpenSSL boots the twin of the seed's RB450 the way RouterBOOT
// boots it (plain BOOTP, one ELF by TFTP), big-endian, with bootbench's own
// kernel, in its 32 MiB, and runs openssl speed cross-built from Debian's
// source over OpenWrt's table of algorithms: openssl 3.0's figures are
// stored, its version line is in the raw output, and the OpenWrt export has
// its row. The run lasts some 60 virtual seconds, past the two CP0 counter
// wraps after which a twin ticking from the i8253 froze QEMU
// (docs/mips-cp0-timer.md); the board must tick from its CP0 timer.
func TestE2ERB450OpenSSL(t *testing.T) {
	requireBench(t)
	needs.Commands(t, "qemu-system-mips", "mips-linux-gnu-gcc")
	parallelE2E(t)
	const board, ramMiB = "qemu-rb450", 32
	db := filepath.Join(t.TempDir(), "results.db")
	// 250 MHz, the cheapest clock.
	r := bootbench(t, db, "run", "--board", board, "--bench", "openssl", "--clock", "250", "--seconds", "1")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"bootp-reply to ", "tftp     " + board + "/kernel.elf", "clock    250 MHz, confirmed by the board", "ticks from MIPS, time from MIPS"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, r.stderr)
		}
	}
	runs := storedRuns(t, db)
	if len(runs) != 1 || runs[0].Status != "ok" || len(runs[0].Metrics) < 50 {
		t.Fatalf("stored: %+v", runs)
	}
	assertCP0Ticks(t, runs[0])
	var h struct {
		Arch       string `json:"arch"`
		CPU        string `json:"cpu"`
		MemTotalKB int    `json:"mem_total_kb"`
	}
	json.Unmarshal(runs[0].Hello, &h)
	if h.Arch != "mips" || !strings.Contains(h.CPU, "24Kc") || h.MemTotalKB <= 0 || h.MemTotalKB > ramMiB<<10 {
		t.Errorf("hello: %+v; want a big-endian 24Kc in %d MiB", h, ramMiB)
	}
	raw := bootbench(t, db, "results", "show", runs[0].ID, "--raw")
	if !strings.Contains(raw.stdout, "version: 3.0.") {
		t.Errorf("raw output has no openssl 3.0 version line:\n%s", raw.stdout)
	}
	row := bootbench(t, db, "results", "export", "--format", "openwrt", "--with-setting", "--board", board)
	if lines := strings.Split(strings.TrimSpace(row.stdout), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], "| "+board+" | 250 | 3.0.") {
		t.Errorf("openwrt export with the setting:\n%s", row.stdout)
	}
	// The wiki's own row starts with the board's /proc/cpuinfo fields.
	wiki := bootbench(t, db, "results", "export", "--format", "openwrt", "--board", board)
	if !strings.Contains(wiki.stdout, "24Kc") || !strings.Contains(wiki.stdout, "BogoMIPS") && !strings.Contains(wiki.stdout, "249.") {
		t.Errorf("openwrt export, the wiki's row:\n%s", wiki.stdout)
	}
	t.Logf("wiki row:\n%s", wiki.stdout)
	assertNothingLeft(t, r.stderr)
}

// TestE2ERB450GClocks is the seed's own experiment on the RB450G's twin,
// with nobody at the bench: openssl speed at two clocks, four boots each,
// interleaved, compared, every clock chosen in the twin's RouterBOOT setup
// menu as the seed's author chose it by hand, with a one-time Ethernet
// boot. Every boot's transcript shows the menu's choices; every @1024
// figure doubles with the clock (2.00 ± 0.02, p < 0.05); each clock is
// confirmed by what the firmware announced and by BogoMIPS, and stored
// with the firmware; the OpenWrt export has one row per clock. (QEMU
// makes only halvings of 1000 MHz exact, not the real board's 680, 800.)
func TestE2ERB450GClocks(t *testing.T) {
	requireBench(t)
	parallelE2E(t)
	needs.Commands(t, "qemu-system-mips", "mips-linux-gnu-gcc")
	db := filepath.Join(t.TempDir(), "results.db")
	// One algorithm: openssl takes whole seconds, six block sizes each,
	// eight boots; md5 doubling is the clock's proof as well as two.
	runs := runAtTwoClocks(t, db, "--board", "qemu-rb450g", "--bench", "openssl", "--algs", "md5", "--seconds", "1")
	setting := map[int]string{1000: "c - 1000MHz", 500: "b - 500MHz"}
	assertFirmwareSet(t, db, runs, func(mhz int) []string {
		return []string{"your choice: f - cpu frequency", "your choice: " + setting[mhz], "your choice: 1 - boot Ethernet once, then NAND",
			"your choice: x - exit setup", fmt.Sprintf("CPU frequency: %d MHz", mhz)}
	})
	at1024 := func(name string) bool { return strings.HasSuffix(name, "@1024") }
	if n := len(assertDoubling(t, db, "qemu-rb450g", at1024)); n != 1 {
		t.Errorf("%d @1024 metrics compared, want 1 (md5)", n)
	}
	row := bootbench(t, db, "results", "export", "--format", "openwrt", "--with-setting", "--board", "qemu-rb450g")
	lines := strings.Split(strings.TrimSpace(row.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "| qemu-rb450g | 500 | 3.0.") || !strings.HasPrefix(lines[2], "| qemu-rb450g | 1000 | 3.0.") {
		t.Errorf("openwrt export, want a row per clock:\n%s", row.stdout)
	}
	t.Logf("%s", row.stdout)
}

// assertFirmwareSet checks each run's clock was set in its firmware: the
// transcript shows what was typed there (want, by the run's clock), and
// the run is stored with the clock the firmware announced.
func assertFirmwareSet(t *testing.T, db string, runs []storedRun, want func(mhz int) []string) {
	t.Helper()
	announced := map[string]int{}
	for _, r := range exportedRuns[struct {
		ID               string `json:"id"`
		FirmwareClockMHz int    `json:"firmware_clock_mhz"`
	}](t, db) {
		announced[r.ID] = r.FirmwareClockMHz
	}
	for _, run := range runs {
		tr := bootbench(t, db, "results", "show", run.ID, "--transcript").stdout
		for _, w := range want(run.ClockMHz) {
			if !strings.Contains(tr, w) {
				t.Errorf("run %s at %d MHz: transcript lacks %q", run.ID, run.ClockMHz, w)
			}
		}
		if announced[run.ID] != run.ClockMHz {
			t.Errorf("run %s at %d MHz: stored with the firmware's announced clock %d MHz", run.ID, run.ClockMHz, announced[run.ID])
		}
	}
}
