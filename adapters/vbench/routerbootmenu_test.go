package vbench

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startRouterBOOT powers a RouterBOOT ROM on whose flash is in dir and
// whose clock is the menu's; its NAND and network are empty.
func startRouterBOOT(t *testing.T, dir string) (*console, context.CancelFunc) {
	board, bench := net.Pipe()
	rom := &routerBOOTROM{con: board, ramMB: 256, board: "qemu-rb450g", flash: dir, ownClock: true, factoryMHz: 1000}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		rom.boot(ctx)
		board.Close()
	}()
	t.Cleanup(func() { cancel(); bench.Close() })
	return newConsole(t, bench), cancel
}

// TestRouterBOOTMenu: every item of RouterBOOT's menu is listed; cpu
// frequency and boot device take a setting, kept in flash; exit with a new
// clock starts the ROM again, announcing it; the one Ethernet boot is set.
func TestRouterBOOTMenu(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, rbFlashFile), []byte(`{"cpu_mhz": 1000, "boot_device": "nand-only", "boot_delay": 2, "boot_key": "any"}`), 0o644)
	con, _ := startRouterBOOT(t, dir)
	con.expect("CPU frequency: 1000 MHz\r\n")
	con.expect("Press any key within 2 seconds to enter setup")
	con.typeKeys("\x7f")
	con.expect("What do you want to configure?\r\n")
	items := []string{"d - boot delay", "k - boot key", "s - serial console", "o - boot device", "u - cpu mode", "f - cpu frequency",
		"r - reset booter configuration", "e - format nand", "g - upgrade firmware", "i - board info", "p - boot protocol", "t - do memory testing", "x - exit setup"}
	con.expect("   " + strings.Join(items, "\r\n   ") + "\r\n\r\nyour choice: ")
	steps := []struct{ key, want string }{
		{"f", "f - cpu frequency\r\n\r\nSelect CPU frequency:\r\n   a - 250MHz\r\n   b - 500MHz\r\n * c - 1000MHz\r\n\r\nyour choice: "},
		{"a", "a - 250MHz\r\n"},
		{"i", "Board: qemu-rb450g (virtual)\r\nBooter version: virtual\r\nCPU frequency: 250 MHz\r\n"},
		{"o", "Select boot device:\r\n   e - boot over Ethernet\r\n   n - boot from NAND, if fail then Ethernet\r\n   1 - boot Ethernet once, then NAND\r\n * o - boot from NAND only\r\n"},
		{"1", "1 - boot Ethernet once, then NAND\r\n"},
		{"t", "testing memory... 256 MB OK\r\n"},
		{"x", "x - exit setup\r\n\r\nrebooting...\r\n"},
	}
	for _, s := range steps {
		con.typeKeys(s.key)
		con.expect(s.want)
	}
	con.seen.Reset()
	con.expect("CPU frequency: 250 MHz\r\n")
	con.expect("Press any key within 2 seconds to enter setup")
	b, err := os.ReadFile(filepath.Join(dir, rbFlashFile))
	if err != nil || !strings.Contains(string(b), `"cpu_mhz": 250`) || !strings.Contains(string(b), `"boot_device": "ethernet-once"`) {
		t.Errorf("flash after exit: %s %v", b, err)
	}
}

// TestRouterBOOTNANDOnly: a board left to boot from its (empty) NAND stays
// there; no key, no menu.
func TestRouterBOOTNANDOnly(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, rbFlashFile), []byte(`{"cpu_mhz": 500, "boot_device": "nand-only", "boot_delay": 1, "boot_key": "any"}`), 0o644)
	con, _ := startRouterBOOT(t, dir)
	con.expect("CPU frequency: 500 MHz\r\n")
	con.expect("loading kernel from nand... no kernel found\r\n")
	time.Sleep(200 * time.Millisecond)
	if strings.Contains(con.seen.String(), "bootp") {
		t.Errorf("it netbooted:\n%s", con.seen.String())
	}
}
