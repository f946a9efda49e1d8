package harness

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/internal/testkit/boottest"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/results"
)

// TestStageDirectCmdline: QEMU's Malta passes at most 255 bytes of -append
// on, so a kernel with a command line area of its own gets the whole line
// there and no -append, and one without is refused a line QEMU would cut.
func TestStageDirectCmdline(t *testing.T) {
	dir := t.TempDir()
	noArea := boottest.MIPSKernel(t, t.TempDir())
	withArea := filepath.Join(dir, "vmlinux-area")
	k, err := os.ReadFile(noArea)
	if err != nil {
		t.Fatal(err)
	}
	// A kernel whose own segment holds the area, as bootbench's Malta
	// kernels' head.S does: the marker, then zeros.
	area := append([]byte("CMDLINE:"), make([]byte, 0x400)...)
	if err := os.WriteFile(withArea, growSegment(t, k, area), 0o644); err != nil {
		t.Fatal(err)
	}
	image := filepath.Join(dir, "image.cpio")
	if err := os.WriteFile(image, []byte("070701 image"), 0o644); err != nil {
		t.Fatal(err)
	}
	long := "console=ttyS0,115200 bootbench.algs=" + strings.Repeat("md5,", 60) + "md5"
	tests := []struct {
		name, kernel, cmdline string
		wantArgs              string // "" for the whole line in the area
		wantErr               string
	}{
		{"short line, no area", noArea, "console=ttyS0,115200", "console=ttyS0,115200 nokaslr rd_start=", ""},
		{"long line, no area", noArea, long, "", "QEMU passes a MIPS kernel at most 255"},
		{"long line, the kernel's area", withArea, long, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := boards.Board{Name: "m1", Profile: boards.Profile{Name: "m1", Boot: boards.BootQEMUDirect, ImageFormat: boards.FormatELF}}
			r := &run{o: config{Job: plan.Job{Board: b}}, start: time.Now(), rec: &results.Run{ID: "r1"}}
			built := &plan.Built{Kernel: tt.kernel, Payload: image, Plan: plan.Plan{Wrap: plan.Wrapping{ELF: true}}}
			elf, _, args, err := r.stageDirect(built, t.TempDir(), tt.cmdline)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if tt.wantArgs == "" && args != "" || !strings.HasPrefix(args, tt.wantArgs) {
				t.Errorf("-append %q, want %q…", args, tt.wantArgs)
			}
			if tt.wantArgs == "" {
				data, _ := os.ReadFile(elf)
				got, err := initramfs.EmbeddedCmdline(data)
				if err != nil || !strings.HasPrefix(got, tt.cmdline+" nokaslr rd_start=") {
					t.Errorf("area %q (%v), want the whole line", got, err)
				}
			}
		})
	}
}

// growSegment appends extra to the one loadable segment of boottest's
// little-endian MIPS kernel, which ends the file.
func growSegment(t *testing.T, kernel, extra []byte) []byte {
	t.Helper()
	const phoff = 52
	out := append(append([]byte(nil), kernel...), extra...)
	size := binary.LittleEndian.Uint32(out[phoff+16:]) + uint32(len(extra))
	binary.LittleEndian.PutUint32(out[phoff+16:], size) // p_filesz
	binary.LittleEndian.PutUint32(out[phoff+20:], size) // p_memsz
	return out
}
