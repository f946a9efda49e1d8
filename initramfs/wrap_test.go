package initramfs

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/u-root/mkuimage/cpio"
	"github.com/ulikunitz/xz"

	"github.com/bootbench/bootbench/internal/testkit/needs"
)

// requireTool returns the path of an external program the test needs, or
// skips (fails under BOOTBENCH_E2E=1) when it is not installed.
func requireTool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		needs.Unmet(t, fmt.Sprintf("%s not found (install %s)", name, pkg))
	}
	return p
}

// newcArchive packs records into a newc cpio archive, with a trailer.
func newcArchive(t *testing.T, recs ...cpio.Record) []byte {
	t.Helper()
	var b bytes.Buffer
	w := cpio.Newc.Writer(&b)
	if err := cpio.WriteRecordsAndDirs(w, recs); err != nil {
		t.Fatal(err)
	}
	if err := cpio.WriteTrailer(w); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// cpioTestRecords is a small initramfs: what a kernel needs to start /init
// with a console, and a stand-in /init.
func cpioTestRecords() []cpio.Record {
	return []cpio.Record{
		cpio.Directory("dev", 0o755),
		cpio.CharDev("dev/console", 0o600, 5, 1),
		cpio.StaticFile("init", strings.Repeat("not a real init\n", 4096), 0o755),
	}
}

func TestCompress(t *testing.T) {
	archive := newcArchive(t, cpioTestRecords()...)
	inputs := []struct {
		name string
		data []byte
	}{{"empty", []byte{}}, {"cpio", archive}}
	decoders := map[string]func(io.Reader) (io.Reader, error){
		"cpio":    func(r io.Reader) (io.Reader, error) { return r, nil },
		"cpio.gz": func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
		"cpio.xz": func(r io.Reader) (io.Reader, error) { return xz.NewReader(r) },
	}
	for _, format := range Formats {
		for _, input := range inputs {
			in := input.data
			t.Run(format+"/"+input.name, func(t *testing.T) {
				out, err := Compress(in, format)
				if err != nil {
					t.Fatal(err)
				}
				again, err := Compress(in, format)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out, again) {
					t.Error("two compressions of the same input differ")
				}
				r, err := decoders[format](bytes.NewReader(out))
				if err != nil {
					t.Fatal(err)
				}
				back, err := io.ReadAll(r)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(back, in) {
					t.Errorf("decompressed %d bytes differ from the %d put in", len(back), len(in))
				}
				switch format {
				case "cpio.gz":
					// RFC 1952: FLG (no FNAME/FCOMMENT/FEXTRA) and MTIME must be zero.
					if out[3] != 0 || !bytes.Equal(out[4:8], []byte{0, 0, 0, 0}) {
						t.Errorf("gzip header carries a name or time: % x", out[:10])
					}
				case "cpio.xz":
					// xz file format 2.2.1: magic, then stream flags 0x00 and
					// the check type in the low nibble: 0x01 is CRC32.
					if !bytes.HasPrefix(out, []byte("\xfd7zXZ\x00")) || out[6] != 0 || out[7] != 0x01 {
						t.Errorf("xz stream header % x, want check type CRC32 (flags 00 01)", out[:8])
					}
					// The footer repeats the flags.
					if f := out[len(out)-4:]; f[0] != 0 || f[1] != 0x01 || string(f[2:]) != "YZ" {
						t.Errorf("xz stream footer % x, want flags 00 01 and YZ", f)
					}
				}
			})
		}
	}
}

// TestCompressXZTool cross-checks the xz stream with the xz tool: it must
// decode it and name its check CRC32.
func TestCompressXZTool(t *testing.T) {
	xzTool := requireTool(t, "xz", "xz-utils")
	in := bytes.Repeat([]byte("bootbench initramfs\n"), 10000)
	out, err := Compress(in, "cpio.xz")
	if err != nil {
		t.Fatal(err)
	}
	f := t.TempDir() + "/i.cpio.xz"
	if err := os.WriteFile(f, out, 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := exec.Command(xzTool, "--robot", "--list", f).Output()
	if err != nil {
		t.Fatalf("xz --list: %v", err)
	}
	if !strings.Contains(string(list), "\tCRC32\t") {
		t.Errorf("xz --list does not report a CRC32 check:\n%s", list)
	}
	dec, err := exec.Command(xzTool, "-dc", f).Output()
	if err != nil {
		t.Fatalf("xz -d: %v", err)
	}
	if !bytes.Equal(dec, in) {
		t.Error("xz -d output differs from the input")
	}
}

func TestCompressUnknownFormat(t *testing.T) {
	for _, format := range []string{"", "cpio.bz2", "gz", "CPIO"} {
		if _, err := Compress([]byte("x"), format); err == nil {
			t.Errorf("Compress(%q) succeeded", format)
		}
	}
}
