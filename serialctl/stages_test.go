package serialctl

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden .marks files in testdata/")

// transcriptLines splits a transcript the way Console does.
func transcriptLines(b []byte) [][]byte {
	lines := bytes.Split(b, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimRight(l, "\r")
	}
	return lines
}

// TestClassifyTranscripts classifies every line of every real transcript in
// testdata/ (see testdata/README.md for where each comes from) and compares
// the marks with the golden <name>.marks: a pattern that starts matching
// the wrong lines shows up here.
func TestClassifyTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) < 10 {
		t.Fatalf("only %d transcripts in testdata/", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for i, l := range transcriptLines(b) {
				if m, ok := Classify(l); ok {
					fmt.Fprintf(&got, "%d: %s %s\n", i+1, m.Kind, m.Name)
				}
			}
			golden := strings.TrimSuffix(f, ".txt") + ".marks"
			if *update {
				if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got.String() != string(want) {
				t.Errorf("marks differ from %s:\ngot:\n%swant:\n%s", golden, got.String(), want)
			}
		})
	}
}

// TestClassifyLines pins what each kind of line must give. Every line is
// looked up in a real transcript, so none is made up for the test.
func TestClassifyLines(t *testing.T) {
	tests := []struct {
		file string // in testdata/
		line string // a part of the line only it has
		want Mark   // zero: no mark
	}{
		{"qemu-arm64-uboot.txt", "U-Boot 2023.01", Mark{Firmware, "U-Boot 2023.01+dfsg-2+deb12u3"}},
		{"qemu-arm64-uboot.txt", "Starting kernel", Mark{Handoff, "U-Boot"}},
		{"qemu-arm64-uboot.txt", "Linux version", Mark{KernelStart, "6.1.0-57-arm64"}},
		{"qemu-arm64-uboot.txt", "Hit any key to stop autoboot", Mark{}},
		{"qemu-x86_64-ipxe.txt", "SeaBIOS (version", Mark{Firmware, "SeaBIOS 1.16.2-debian-1.16.2-1"}},
		{"qemu-x86_64-ipxe.txt", "iPXE initialising devices", Mark{Firmware, "iPXE"}},
		{"qemu-x86_64-ipxe.txt", "Open Source Network Boot Firmware", Mark{Firmware, "iPXE 1.0.0+git-20190125.36a4c85-5.1"}},
		// The kernel's first line continues iPXE's unfinished one.
		{"qemu-x86_64-ipxe.txt", "initramfs.cpio... o\x1bc", Mark{KernelStart, "6.1.0-57-amd64"}},
		{"qemu-x86_64-ipxe.txt", "Kernel command line:", Mark{}},
		{"qemu-x86_64-ipxe.txt", `@BB1 0 hello {"run"`, Mark{}},
		{"qemu-x86_64-panic.txt", "Kernel panic - not syncing", Mark{KernelPanic, "VFS: Unable to mount root fs on unknown-block(0,0)"}},
		{"qemu-mipsel-direct.txt", "Linux version", Mark{KernelStart, "6.1.0-50-4kc-malta"}},
		{"ovmf-pxe.txt", ">>Start PXE over IPv4.", Mark{Firmware, "UEFI PXE IPv4"}},
		{"ovmf-pxe.txt", ">>Start PXE over IPv6.", Mark{Firmware, "UEFI PXE IPv6"}},
		{"ovmf-pxe.txt", ">>Start HTTP Boot over IPv4", Mark{Firmware, "UEFI HTTP Boot IPv4"}},
		{"ovmf-pxe.txt", "PXE-E18", Mark{FirmwareError, "PXE-E18: Server response timeout."}},
		{"ovmf-pxe.txt", "PXE-E16", Mark{FirmwareError, "PXE-E16: No valid offer received."}},
		{"intel-boot-agent.txt", "Intel(R) Boot Agent", Mark{Firmware, "Intel Boot Agent GE v1.2.30"}},
		{"intel-boot-agent.txt", "PXE-E61", Mark{FirmwareError, "PXE-E61: Media test failure, check cable"}},
		{"intel-boot-agent.txt", "PXE-M0F", Mark{}},
		{"routerboot-rb433.txt", "RouterBOOT booter", Mark{Firmware, "RouterBOOT 2.20"}},
		{"routerboot-rb433.txt", "jumping to kernel code", Mark{Handoff, "RouterBOOT"}},
		{"routerboot-rb3011-backup.txt", "RouterBOOT backup booter", Mark{Firmware, "RouterBOOT backup 3.27"}},
		{"routerboot-rb3011-backup.txt", "kernel loading failed", Mark{FirmwareError, "RouterBOOT: kernel loading failed"}},
		{"routerboot-rb600a.txt", "kernel out of range", Mark{FirmwareError, "RouterBOOT: kernel out of range"}},
		{"routerboot-rb600a.txt", "RouterBOOT booter 7.1rc7", Mark{Firmware, "RouterBOOT 7.1rc7"}},
		{"routerboot-rb600a.txt", "reboot: Restarting system", Mark{}},
		{"cfe-wrt160n.txt", "CFE version", Mark{Firmware, "CFE 1.0.37"}},
		{"cfe-wrt160n.txt", "Starting program at", Mark{Handoff, "CFE"}},
		{"cfe-wrt160n.txt", "Linux version", Mark{KernelStart, "2.4.20"}},
		{"oops-arm64-juno.txt", "Internal error: Oops", Mark{KernelOops, "Oops: 96000004 [#1] PREEMPT SMP"}},
		{"oops-arm64-juno.txt", "end trace", Mark{}},
		{"oops-mips-interaptiv.txt", "Oops[#1]", Mark{KernelOops, "Oops[#1]:"}},
		{"bug-x86-lkp.txt", "BUG: kernel NULL", Mark{KernelBug, "kernel NULL pointer dereference, address: 0000002c"}},
		{"bug-x86-lkp.txt", "Oops: 0000", Mark{KernelOops, "Oops: 0000 [#1] PREEMPT SMP"}},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.line, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			var line []byte
			for _, l := range transcriptLines(b) {
				if bytes.Contains(l, []byte(tt.line)) {
					line = l
					break
				}
			}
			if line == nil {
				t.Fatalf("no line with %q in %s", tt.line, tt.file)
			}
			got, ok := Classify(line)
			if ok != (tt.want != Mark{}) || got != tt.want {
				t.Errorf("Classify(%q) = %+v, %v; want %+v", line, got, ok, tt.want)
			}
		})
	}
}

// TestClassifyNotMarks: lines that look like marks but are not.
func TestClassifyNotMarks(t *testing.T) {
	for _, l := range []string{
		"[   71.207730] PCI: BIOS BUG #81[49435000] found", // Ubuntu Forums, next to the Intel Boot Agent lines
		"[    1.550580] ---[ end Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0) ]---",
		"=> version", // a U-Boot prompt
		`@BB1 0 hello {"kernel":"Linux version 6.1.0"} 01234567`,
		"",
	} {
		if m, ok := Classify([]byte(l)); ok {
			t.Errorf("Classify(%q) = %+v, want no mark", l, m)
		}
	}
	if !KernelPanic.Failure() || Firmware.Failure() || KernelStart.Failure() {
		t.Error("Failure() is wrong")
	}
}
