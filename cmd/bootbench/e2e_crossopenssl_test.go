package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/contract/bootparam"
	"github.com/bootbench/bootbench/internal/testkit/needs"
	"github.com/bootbench/bootbench/internal/testkit/userenv"
	"github.com/bootbench/bootbench/results/parse"
	"github.com/u-root/mkuimage/cpio"
)

// TestE2ECrossOpenSSL: image build --arch mips --bench openssl, which
// Debian 12 has no package for, builds openssl from Debian's source with
// Debian's cross compiler (or takes it from the cache); the image holds a
// static big-endian MIPS program and describes the same benchmark command
// as the image of Debian's mipsel openssl; under qemu-mips the program is
// openssl 3.0 and its speed gives md5 and DES (legacy provider) figures.
func TestE2ECrossOpenSSL(t *testing.T) {
	needs.Commands(t, "go", "apt-get", "dpkg-source", "perl", "make", "mips-linux-gnu-gcc", "mips-linux-gnu-strip", "qemu-mips")
	parallelE2E(t)
	files, stderr := imageFiles(t, "mips")
	t.Logf("image build --arch mips --bench openssl:\n%s", stderr)
	bin := filepath.Join(t.TempDir(), "openssl")
	if err := os.WriteFile(bin, files["bin/openssl"], 0o755); err != nil {
		t.Fatal(err)
	}
	checkStaticMIPS32BE(t, bin)
	mipsel, _ := imageFiles(t, "mipsel")
	if got, want := files["etc/bootbench/bench.json"], mipsel["etc/bootbench/bench.json"]; len(want) == 0 || !bytes.Equal(got, want) {
		t.Errorf("bench spec for mips %s, for Debian's mipsel openssl %s: want the same", got, want)
	}
	version := qemuMIPS(t, bin, "version")
	if !strings.HasPrefix(version, "OpenSSL 3.0.") {
		t.Errorf("openssl version under qemu-mips: %q, want OpenSSL 3.0.x", version)
	}
	var spec bootparam.BenchSpec
	if err := json.Unmarshal(files["etc/bootbench/bench.json"], &spec); err != nil {
		t.Fatal(err)
	}
	// The image's own command, as benchinit runs it, for a hash and DES.
	argv := spec.Command(bootparam.Params{Seconds: time.Second, Algs: []string{"md5", "des"}})
	out, err := parse.OpenSSL(strings.NewReader(qemuMIPS(t, bin, argv[1:]...)))
	if err != nil {
		t.Fatalf("openssl speed output: %v", err)
	}
	got := map[string]float64{}
	for _, m := range out.Metrics {
		got[m.Name] = m.Value
	}
	for _, name := range []string{"md5@16", "md5@8192", "des-cbc@16", "des-cbc@8192"} {
		if got[name] <= 0 {
			t.Errorf("%s = %v, want a figure (metrics %v)", name, got[name], got)
		}
	}
	t.Logf("%s: md5@1024 %.0f B/s, des-cbc@1024 %.0f B/s", strings.TrimSpace(version), got["md5@1024"], got["des-cbc@1024"])
}

// imageFiles builds the openssl image for arch with the bootbench a user
// runs and returns its regular files by path, with build's messages.
func imageFiles(t *testing.T, arch string) (map[string][]byte, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), arch+".cpio")
	r, took := bootbenchAt(t, bootbenchBin, ".", nil, "image", "build", "--arch", arch, "--bench", "openssl", "-o", out)
	if r.code != 0 {
		t.Fatalf("image build --arch %s --bench openssl: exit %d\n%s", arch, r.code, r.stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	err = cpio.ForEachRecord(cpio.Newc.Reader(f), func(rec cpio.Record) error {
		if rec.Mode&cpio.S_IFMT != cpio.S_IFREG {
			return nil
		}
		b, err := io.ReadAll(io.NewSectionReader(rec.ReaderAt, 0, int64(rec.FileSize)))
		files[rec.Name] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, strings.TrimSpace(r.stderr) + "\n(" + took.Round(time.Millisecond).String() + ")"
}

// checkStaticMIPS32BE: a 32-bit big-endian MIPS executable with no
// interpreter and no dynamic section, the one file openssl needs.
func checkStaticMIPS32BE(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS32 || f.Data != elf.ELFDATA2MSB || f.Machine != elf.EM_MIPS || f.Type != elf.ET_EXEC {
		t.Errorf("openssl is %v %v %v %v, want ELFCLASS32 ELFDATA2MSB EM_MIPS ET_EXEC", f.Class, f.Data, f.Machine, f.Type)
	}
	checkStatic(t, bin)
	if f.Section(".symtab") != nil {
		t.Errorf("openssl has a symbol table: not stripped")
	}
}

// qemuMIPS runs the big-endian MIPS program bin with args under QEMU's
// user-mode emulation, as a user would, and returns its output.
func qemuMIPS(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := userenv.Command(nil, "qemu-mips", append([]string{bin}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("qemu-mips openssl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
