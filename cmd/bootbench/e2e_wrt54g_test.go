package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/internal/testkit/needs"
)

// TestE2EWRT54G boots the WRT54G's twin the way bootbench boots a WRT54G:
// the wrt54g-v3 profile's console steps typed at a CFE stand-in (Ctrl-C,
// ifconfig eth0 -auto, boot -elf), the one ELF by TFTP, in the board's
// 16 MiB of RAM, with bootbench's own Malta kernel (Debian's does not fit).
func TestE2EWRT54G(t *testing.T) {
	requireBench(t)
	for _, c := range []string{"qemu-system-mipsel", "mipsel-linux-gnu-gcc"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("%s missing (make deps installs it)", c)
		}
	}
	db := filepath.Join(t.TempDir(), "results.db")
	// 250 MHz: the cheapest of the virtual clocks.
	r := bootbench(t, db, "run", "--board", "qemu-wrt54g", "--clock", "250", "--algs", "md5,sha256", "--seconds", "0.1")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	for _, want := range []string{
		"firmware CFE version 1.0.37",
		"console  step 4: ifconfig eth0 -auto",
		"dhcp-ack to 52:54:00:bb:00:07: 198.18.0.10",
		"console  step 6: boot -elf 198.18.0.1:qemu-wrt54g/kernel.elf",
		"tftp     qemu-wrt54g/kernel.elf",
		"kernel   Starting program at 0x",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, r.stderr)
		}
	}
	e := exportJSON(t, db)
	n := len(e.Runs)
	if n == 0 || e.Runs[n-1].Status != "ok" || len(e.Runs[n-1].Metrics) != 12 {
		t.Fatalf("stored: %+v", e.Runs)
	}
	if n > 1 {
		t.Logf("the board was booted %d times: %+v", n, e.Runs[:n-1])
	}
	show := bootbench(t, db, "results", "show", e.Runs[n-1].ID, "--transcript")
	for _, want := range []string{
		"Automatic startup canceled via Ctrl-C",
		"CFE> ifconfig eth0 -auto",
		"Device eth0:  hwaddr 52-54-00-BB-00-07, ipaddr 198.18.0.10",
		"*** command status = 0",
		"CFE> boot -elf 198.18.0.1:qemu-wrt54g/kernel.elf",
		"Loader:elf Filesys:tftp Dev:eth0",
		"Starting program at 0x",
		"Welcome to u-root",
	} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("transcript lacks %q:\n%s", want, show.stdout)
		}
	}
	// The board ran in 16 MiB: what its kernel counts is less.
	raw := bootbench(t, db, "results", "export", "--format", "json")
	var full struct {
		Runs []struct {
			Hello struct {
				Arch       string `json:"arch"`
				MemTotalKB int    `json:"mem_total_kb"`
			} `json:"hello"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(raw.stdout), &full); err != nil || len(full.Runs) != n {
		t.Fatalf("export: %v", err)
	}
	hello := full.Runs[n-1].Hello
	if hello.Arch != "mipsle" || hello.MemTotalKB <= 0 || hello.MemTotalKB >= 16<<10 {
		t.Errorf("hello: arch %q, mem_total_kb %d (want mipsle, below 16 MiB)", hello.Arch, hello.MemTotalKB)
	}
	assertNothingLeft(t, r.stderr)
}

// TestE2EWRT54GClocks: the built-in suite at two clocks on the WRT54G's
// twin, four boots each, every clock set in CFE's NVRAM (nvram set
// clkfreq, nvram commit, reboot) before the netboot steps: every figure
// doubles with the clock (2.00 ± 0.02, p < 0.05), each clock confirmed by
// what CFE announced and by BogoMIPS.
func TestE2EWRT54GClocks(t *testing.T) {
	requireBench(t)
	parallelE2E(t)
	needs.Commands(t, "qemu-system-mipsel", "mipsel-linux-gnu-gcc")
	db := filepath.Join(t.TempDir(), "results.db")
	runs := runAtTwoClocks(t, db, "--board", "qemu-wrt54g", "--algs", "md5,sha256", "--seconds", "0.5")
	assertFirmwareSet(t, db, runs, func(mhz int) []string {
		return []string{fmt.Sprintf("CFE> nvram set clkfreq=%d", mhz), "CFE> nvram commit", "CFE> reboot", fmt.Sprintf("CPU type 0x29008: %dMHz", mhz), "CFE> boot -elf"}
	})
	if n := len(assertDoubling(t, db, "qemu-wrt54g", func(string) bool { return true })); n != 12 {
		t.Errorf("%d metrics compared, want 12 (md5 and sha256 at six sizes)", n)
	}
}
