package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/internal/testkit/boottest"
	"github.com/bootbench/bootbench/internal/testkit/needs"
)

// TestE2EForeignOpenSSL runs Debian's openssl for the board's own
// architecture (fetched as packages into a sysroot, never installed) on
// the arm64 and MIPS virtual boards, and stores openssl 3.0's figures.
func TestE2EForeignOpenSSL(t *testing.T) {
	requireBench(t)
	parallelE2E(t)
	for _, tt := range []struct {
		board, qemu string
		args        []string
		progress    []string // stages the terminal must show
	}{
		// 250 MHz: a virtual second is a quarter of the instructions,
		// so openssl's timed seconds take a quarter of the time.
		{"qemu-arm64", "qemu-system-aarch64", []string{"--clock", "250"}, nil},
		// The MIPS router's path without a network: QEMU loads the one
		// ELF holding kernel and image, as RouterBOOT would fetch it;
		// at 250 MHz for the same reason.
		{"qemu-mipsel", "qemu-system-mipsel", []string{"--clock", "250"}, []string{"kernel and image in one ELF", "kernel   Linux version"}},
	} {
		t.Run(tt.board, func(t *testing.T) {
			needs.Commands(t, tt.qemu)
			db := filepath.Join(t.TempDir(), "results.db")
			// Some of openssl's algorithms (--algs), as openssl names
			// them: a hash, DES from the legacy provider, AES, RSA.
			r := bootbench(t, db, append([]string{"run", "--board", tt.board, "--bench", "openssl", "--seconds", "1", "--algs", "sha256,des,aes-128-cbc,rsa2048"}, tt.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
			}
			for _, want := range tt.progress {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("progress lacks %q:\n%s", want, r.stderr)
				}
			}
			raw := bootbench(t, db, "results", "export", "--format", "json")
			var e struct {
				Runs []struct {
					Status, Bench, Tool string
					ToolVersion         string `json:"tool_version"`
					Metrics             []struct {
						Name  string
						Value float64
					}
				}
			}
			if err := json.Unmarshal([]byte(raw.stdout), &e); err != nil || len(e.Runs) == 0 {
				t.Fatalf("export: %v\n%s", err, raw.stdout)
			}
			run := e.Runs[len(e.Runs)-1]
			if run.Status != "ok" || run.Bench != "openssl" || run.Tool != "openssl" || !strings.HasPrefix(run.ToolVersion, "3.0.") {
				t.Errorf("run: status %s bench %s tool %s %s", run.Status, run.Bench, run.Tool, run.ToolVersion)
			}
			got := map[string]float64{}
			for _, m := range run.Metrics {
				got[m.Name] = m.Value
			}
			for _, name := range []string{"aes-128-cbc@1024", "sha256@1024", "rsa2048-sign", "des-cbc@1024"} {
				if got[name] <= 0 {
					t.Errorf("%s = %v, want a figure from openssl", name, got[name])
				}
			}
			for _, name := range []string{"md5@1024", "dsa2048-sign"} {
				if _, ok := got[name]; ok {
					t.Errorf("%s measured, but --algs did not ask for it", name)
				}
			}
			t.Logf("%s: openssl %s, aes-128-cbc@1024 %.0f B/s, sha256@1024 %.0f B/s, rsa2048-sign %.1f/s", tt.board, run.ToolVersion, got["aes-128-cbc@1024"], got["sha256@1024"], got["rsa2048-sign"])
		})
	}
}

// TestRunRefusedBeforePowerOn: a board model bootbench cannot run, and an
// image that cannot boot in a board's RAM, are refused with the reason and
// the numbers before anything is powered on or stored.
func TestRunRefusedBeforePowerOn(t *testing.T) {
	needs.Commands(t, "go", "apt-get", "dpkg-deb")
	// A real kernel ELF for a small MIPS board's size: Debian's Malta one.
	kernels, _ := filepath.Glob(filepath.Join(sharedCacheDir(), "kernels", "mipsel", "linux-image-*-4kc-malta", "boot", "vmlinu[xz]-*"))
	if len(kernels) == 0 {
		requireBench(t)
		t.Fatal("no Debian 4kc-malta kernel in the cache (make deps fetches it)")
	}
	bigEndian := boottest.MIPSKernelOrder(t, t.TempDir(), binary.BigEndian)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"32-bit PowerPC", []string{"--board", "rb1100"}, []string{"cannot be run by bootbench", "32-bit PowerPC", "what works: bootbench import --board rb1100"}},
		{"16 MB router, built-in suite", []string{"--board", "wrt54g-v3", "--kernel", kernels[0]}, []string{"image does not fit in 16.0 MiB of RAM: kernel ", " + image ", " + unpacked ", " + working margin 3.5 MiB = "}},
		{"16 MB router, openssl", []string{"--board", "wrt54g-v3", "--bench", "openssl", "--kernel", kernels[0]}, []string{"bench openssl", "image does not fit in 16.0 MiB of RAM"}},
		{"big-endian kernel, little-endian board", []string{"--board", "qemu-mipsel", "--kernel", bigEndian}, []string{"the kernel is big-endian MIPS, the image is for mipsle, which is little-endian"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "results.db")
			r := bootbench(t, db, append([]string{"run"}, tt.args...)...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2 (refused)\n%s", r.code, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("refusal lacks %q:\n%s", w, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "] power") || strings.Contains(r.stderr, "started") {
				t.Errorf("something was powered on:\n%s", r.stderr)
			}
			if _, err := os.Stat(db); err == nil {
				t.Errorf("a refused run opened the store")
			}
			t.Logf("%s", strings.TrimSpace(r.stderr))
		})
	}
}

func sharedCacheDir() string {
	if d := os.Getenv("BOOTBENCH_CACHE"); d != "" {
		return d
	}
	d, _ := os.UserCacheDir()
	return filepath.Join(d, "bootbench")
}

// TestImageBuildRefusesOtherByteOrder: an image of one byte order is not
// wrapped with a kernel of the other; the refusal names both, before
// anything is built.
func TestImageBuildRefusesOtherByteOrder(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		arch   string
		kernel binary.ByteOrder
		want   string
	}{
		{"mipsle", binary.BigEndian, "the kernel is big-endian MIPS, the image is for mipsle, which is little-endian"},
		{"mips", binary.LittleEndian, "the kernel is little-endian MIPS, the image is for mips, which is big-endian"},
	} {
		t.Run(tt.arch, func(t *testing.T) {
			kernel := boottest.MIPSKernelOrder(t, t.TempDir(), tt.kernel)
			out := filepath.Join(dir, tt.arch+".elf")
			r, took := bootbenchAt(t, bootbenchBin, ".", nil, "image", "build", "--arch", tt.arch, "--kernel", kernel, "--format", "elf", "-o", out)
			if r.code != 2 || !strings.Contains(r.stderr, tt.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Fatalf("exit %d, want 2 and one line with %q:\n%s", r.code, tt.want, r.stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("an image was written")
			}
			t.Logf("%s (%v)", strings.TrimSpace(r.stderr), took)
		})
	}
}
