package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/internal/testkit/needs"
)

// piFiles is what the Pi 4's ROM and firmware fetch from bootbench, in
// their order, under the twin's serial folder.
var piFiles = []string{"start4.elf", "fixup4.dat", "config.txt", "cmdline.txt", "bcm2711-rpi-4-b.dtb", "vmlinuz", "initramfs.cpio"}

var tftpLineRE = regexp.MustCompile(`\] tftp     (\S+) `)

// TestE2EPiTwinClocks is an overclock comparison on the Pi 4's twin through
// bootbench's own DHCP and TFTP, as on a real Pi: every boot fetches the
// ROM's files under the board's serial folder, each run's
// config.txt names its clock (arm_freq), and the built-in suite (md5) at 1000
// and 500 MHz, four boots each, interleaved, doubles with the clock
// (2.00 ± 0.02, p < 0.05), both clocks verified.
func TestE2EPiTwinClocks(t *testing.T) {
	requireBench(t)
	needs.Commands(t, "qemu-system-aarch64")
	parallelE2E(t)
	db := filepath.Join(t.TempDir(), "results.db")
	// md5 alone: the ARMv8 SHA-2 instructions Go's sha256 uses cost QEMU
	// about ten times md5's host time for the same virtual time (1.2 s
	// against 0.1 s a block size), eight of a boot's thirteen seconds.
	r := bootbench(t, db, "run", "--board", "rpi4b-twin", "--clock", "1000,500", "--reps", "4", "--algs", "md5", "--seconds", "0.3")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var fetched []string
	for _, m := range tftpLineRE.FindAllStringSubmatch(r.stderr, -1) {
		fetched = append(fetched, m[1])
	}
	// A tftp line is printed when its transfer ends, when the server
	// has read the last ACK. The ROM asks for its next file as soon as it
	// has sent that ACK, so on a loaded host a small next file (config.txt
	// after fixup4.dat) can end first: each boot is checked for holding
	// the ROM's files, whatever the order their transfers ended in.
	want := make([]string, len(piFiles))
	for i, f := range piFiles {
		want[i] = "bb0004b1/" + f
	}
	slices.Sort(want)
	if len(fetched) != 8*len(piFiles) {
		t.Errorf("bootbench served %d files, want the ROM's %d for each of eight boots:\n%s", len(fetched), len(piFiles), strings.Join(fetched, "\n"))
	} else {
		for b := range 8 {
			boot := slices.Sorted(slices.Values(fetched[b*len(piFiles) : (b+1)*len(piFiles)]))
			if !slices.Equal(boot, want) {
				t.Errorf("boot %d: bootbench served\n%s\nwant the ROM's files:\n%s", b+1, strings.Join(boot, "\n"), strings.Join(want, "\n"))
			}
		}
	}
	// The image fetched under the serial starts the kernel stage, as it
	// does for every board (a reboot is told by it).
	if n := strings.Count(r.stderr, "] kernel   booting "); n != 8 {
		t.Errorf("%d kernel stages entered, want one per boot:\n%s", n, r.stderr)
	}
	runs := storedRuns(t, db)
	if len(runs) != 8 {
		t.Fatalf("%d runs stored, want 8", len(runs))
	}
	for _, run := range runs {
		if run.Status != "ok" || run.ClockCheck != "verified" || run.ClockReportedMHz != run.ClockMHz {
			t.Errorf("run %s at %d MHz: status %s (%s), clock %s, reported %d MHz", run.ID, run.ClockMHz, run.Status, run.Reason, run.ClockCheck, run.ClockReportedMHz)
		}
		// The twin's firmware says what config.txt asked and what it made of it.
		show := bootbench(t, db, "results", "show", run.ID, "--transcript")
		shift := map[int]int{1000: 0, 500: 1}[run.ClockMHz]
		if line := fmt.Sprintf("MESS: arm_freq=%d: -icount shift=%d", run.ClockMHz, shift); !strings.Contains(show.stdout, line) {
			t.Errorf("run %s at %d MHz: the console lacks %q:\n%s", run.ID, run.ClockMHz, line, show.stdout)
		}
	}
	if n := len(assertDoubling(t, db, "rpi4b-twin", func(string) bool { return true })); n != 6 {
		t.Errorf("%d metrics compared, want 6 (md5 at six sizes)", n)
	}
	assertNothingLeft(t, r.stderr)
}
