package initramfs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/internal/testkit/userenv"
)

// mkimageNames maps GOARCH to mkimage's -A name and dumpimage's description.
var mkimageNames = map[string]struct{ arg, desc string }{
	"amd64":    {"x86_64", "AMD x86_64"},
	"386":      {"x86", "Intel x86"},
	"arm":      {"arm", "ARM"},
	"arm64":    {"arm64", "AArch64"},
	"mips":     {"mips", "MIPS"},
	"mipsle":   {"mips", "MIPS"},
	"mips64":   {"mips64", "MIPS 64 Bit"},
	"mips64le": {"mips64", "MIPS 64 Bit"},
	"riscv64":  {"riscv", "RISC-V"},
	"ppc64le":  {"powerpc", "PowerPC"},
}

// mkimage runs U-Boot's mkimage on data with a zero timestamp and returns
// the image it wrote.
func mkimage(t *testing.T, data []byte, args ...string) []byte {
	t.Helper()
	tool := requireTool(t, "mkimage", "u-boot-tools")
	dir := t.TempDir()
	in, out := filepath.Join(dir, "data"), filepath.Join(dir, "image")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tool, append(args, "-d", in, out)...)
	cmd.Env = userenv.Environ("SOURCE_DATE_EPOCH=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mkimage %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUImageMatchesMkimage(t *testing.T) {
	payload := []byte("0707010000000000000000 stand-in for a cpio archive\n")
	tests := []struct {
		opt  UImageOptions
		args []string
	}{
		{UImageOptions{Arch: "mipsle", Type: "ramdisk"}, []string{"-A", "mips", "-T", "ramdisk", "-C", "none"}},
		{UImageOptions{Arch: "arm64", Type: "ramdisk", Compression: "none", Name: "bootbench initramfs"},
			[]string{"-A", "arm64", "-T", "ramdisk", "-C", "none", "-n", "bootbench initramfs"}},
		{UImageOptions{Arch: "arm", Type: "kernel", Compression: "gzip", Load: 0x80008000, Entry: 0x80008000},
			[]string{"-A", "arm", "-T", "kernel", "-C", "gzip", "-a", "80008000", "-e", "80008000"}},
		{UImageOptions{Arch: "mips", Type: "kernel", Compression: "lzma", Load: 0x80060000, Entry: 0x80060000, Name: "12345678901234567890123456789012"},
			[]string{"-A", "mips", "-T", "kernel", "-C", "lzma", "-a", "80060000", "-e", "80060000", "-n", "12345678901234567890123456789012"}},
		{UImageOptions{Arch: "amd64", Type: "ramdisk", Compression: "zstd"}, []string{"-A", "x86_64", "-T", "ramdisk", "-C", "zstd"}},
		{UImageOptions{Arch: "386", Type: "ramdisk", Compression: "bzip2"}, []string{"-A", "x86", "-T", "ramdisk", "-C", "bzip2"}},
		{UImageOptions{Arch: "mips64le", Type: "ramdisk", Compression: "lzo"}, []string{"-A", "mips64", "-T", "ramdisk", "-C", "lzo"}},
		{UImageOptions{Arch: "riscv64", Type: "ramdisk", Compression: "lz4"}, []string{"-A", "riscv", "-T", "ramdisk", "-C", "lz4"}},
		{UImageOptions{Arch: "ppc64le", Type: "ramdisk"}, []string{"-A", "powerpc", "-T", "ramdisk", "-C", "none"}},
		{UImageOptions{Arch: "mips64", Type: "script"}, []string{"-A", "mips64", "-T", "script", "-C", "none"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, err := UImage(payload, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			want := mkimage(t, payload, append([]string{"-O", "linux"}, tt.args...)...)
			if !bytes.Equal(got, want) {
				t.Errorf("UImage differs from mkimage:\n got % x\nwant % x", got[:64], want[:64])
			}
		})
	}
}

func TestUImageGolden(t *testing.T) {
	tests := []struct {
		name, data, golden string
		make               func([]byte) ([]byte, error)
	}{
		{"script", "boot.txt", "boot.scr.uimg", func(b []byte) ([]byte, error) { return UBootScript(string(b)) }},
		{"ramdisk", "ramdisk.bin", "ramdisk.uimg", func(b []byte) ([]byte, error) {
			return UImage(b, UImageOptions{Arch: "mips", Type: "ramdisk", Name: "bootbench"})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "uimage", tt.data))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join("testdata", "uimage", tt.golden))
			if err != nil {
				t.Fatal(err)
			}
			got, err := tt.make(data)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from testdata/uimage/%s (written by mkimage)", tt.golden)
			}
		})
	}
}

func TestUBootScriptMatchesMkimage(t *testing.T) {
	// Lengths 0–3 mod 4: mkimage pads nothing after the last (only) file.
	for _, script := range []string{
		"echo hi\n",
		"echo hello\n",
		"setenv bootargs console=ttyAMA0 panic=-1\nbooti ${kernel_addr_r} - ${fdtcontroladdr}\n",
		"echo a\n\necho b",
	} {
		t.Run(fmt.Sprintf("%d bytes", len(script)), func(t *testing.T) {
			got, err := UBootScript(script)
			if err != nil {
				t.Fatal(err)
			}
			want := mkimage(t, []byte(script), "-A", "arm64", "-O", "linux", "-T", "script", "-C", "none")
			if !bytes.Equal(got, want) {
				t.Errorf("UBootScript differs from mkimage:\n got % x\nwant % x", got, want)
			}
		})
	}
}

// TestUImageDumpimage has U-Boot's dumpimage read and verify our images.
func TestUImageDumpimage(t *testing.T) {
	tool := requireTool(t, "dumpimage", "u-boot-tools")
	archive := newcArchive(t, cpioTestRecords()...)
	xzArchive, err := Compress(archive, "cpio.xz")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		data     []byte
		opt      UImageOptions
		wantType string
	}{
		{"mipsle cpio", archive, UImageOptions{Arch: "mipsle", Type: "ramdisk", Name: "bootbench"}, "MIPS Linux RAMDisk Image (uncompressed)"},
		{"arm64 cpio.xz", xzArchive, UImageOptions{Arch: "arm64", Type: "ramdisk", Compression: "none"}, "AArch64 Linux RAMDisk Image (uncompressed)"},
		{"amd64 gzip kernel", archive, UImageOptions{Arch: "amd64", Type: "kernel", Compression: "gzip", Load: 0x1000000, Entry: 0x1000000}, "AMD x86_64 Linux Kernel Image (gzip compressed)"},
		{"riscv64", archive, UImageOptions{Arch: "riscv64", Type: "ramdisk"}, "RISC-V Linux RAMDisk Image (uncompressed)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := UImage(tt.data, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			file := filepath.Join(dir, "image")
			if err := os.WriteFile(file, img, 0o644); err != nil {
				t.Fatal(err)
			}
			list, err := exec.Command(tool, "-T", tt.opt.Type, "-l", file).CombinedOutput()
			if err != nil {
				t.Fatalf("dumpimage -l: %v\n%s", err, list)
			}
			for _, want := range []string{
				"Image Name:   " + tt.opt.Name + "\n",
				"Image Type:   " + tt.wantType + "\n",
				fmt.Sprintf("Data Size:    %d Bytes", len(tt.data)),
				fmt.Sprintf("Load Address: %08x\n", tt.opt.Load),
				"Created:      Thu Jan  1 00:00:00 1970",
			} {
				if !strings.Contains(string(list), want) {
					t.Errorf("dumpimage -l lacks %q:\n%s", want, list)
				}
			}
			if testing.Verbose() && tt.name == "mipsle cpio" {
				t.Logf("dumpimage -l:\n%s", list)
			}

			out := filepath.Join(dir, "extracted")
			if msg, err := exec.Command(tool, "-T", tt.opt.Type, "-p", "0", "-o", out, file).CombinedOutput(); err != nil {
				t.Fatalf("dumpimage -p 0: %v\n%s", err, msg)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.data) {
				t.Errorf("dumpimage extracted %d bytes, not the %d put in", len(got), len(tt.data))
			}

			h, data, err := ParseUImage(img)
			if err != nil {
				t.Fatalf("ParseUImage: %v", err)
			}
			if !bytes.Equal(data, tt.data) || h.Name != tt.opt.Name || h.Load != tt.opt.Load || h.Size != uint32(len(tt.data)) {
				t.Errorf("ParseUImage gave %+v and %d bytes", h, len(data))
			}

			// One flipped byte, in the header or the data, must fail both
			// dumpimage's verification and ours.
			for _, at := range []int{12, 31, 40, uimageHeaderSize, len(img) - 1} {
				bad := bytes.Clone(img)
				bad[at] ^= 0x20
				if _, _, err := ParseUImage(bad); err == nil {
					t.Errorf("ParseUImage accepted an image with byte %d changed", at)
				}
				badFile := filepath.Join(dir, "bad")
				if err := os.WriteFile(badFile, bad, 0o644); err != nil {
					t.Fatal(err)
				}
				if msg, err := exec.Command(tool, "-T", tt.opt.Type, "-l", badFile).CombinedOutput(); err == nil {
					t.Errorf("dumpimage -l accepted an image with byte %d changed:\n%s", at, msg)
				}
			}
		})
	}
}

func TestParseUImageErrors(t *testing.T) {
	good, err := UImage([]byte("data"), UImageOptions{Arch: "arm64", Type: "ramdisk"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		b    []byte
		want string
	}{
		{"short", good[:63], "shorter"},
		{"magic", append([]byte{0}, good[1:]...), "magic"},
		{"truncated data", good[:len(good)-1], "file has"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ParseUImage(tt.b)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseUImage: %v, want an error about %q", err, tt.want)
			}
		})
	}
}

func TestUImageRejects(t *testing.T) {
	tests := []struct {
		name string
		opt  UImageOptions
	}{
		{"arch", UImageOptions{Arch: "ppc", Type: "ramdisk"}},
		{"type", UImageOptions{Arch: "arm64", Type: "firmware"}},
		{"xz", UImageOptions{Arch: "arm64", Type: "ramdisk", Compression: "xz"}},
		{"long name", UImageOptions{Arch: "arm64", Type: "ramdisk", Name: strings.Repeat("n", 33)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := UImage([]byte("x"), tt.opt); err == nil {
				t.Errorf("UImage(%+v) succeeded", tt.opt)
			}
		})
	}
}
