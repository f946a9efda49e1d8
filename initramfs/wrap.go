package initramfs

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os/exec"
	"strings"

	"github.com/ulikunitz/xz"
)

// Formats lists the initramfs formats Compress produces.
var Formats = []string{"cpio", "cpio.gz", "cpio.xz"}

// xzDictCap bounds the LZMA2 dictionary. The kernel's decoder allocates a
// buffer as large as the dictionary the stream declares, so a small one keeps
// unpacking cheap on boards with little RAM; the kernel's own documentation
// (Documentation/staging/xz.rst) suggests 1 MiB for initramfs images.
const xzDictCap = 1 << 20

// Compress returns cpio in the given format: "cpio" (unchanged), "cpio.gz" or
// "cpio.xz". The output depends only on the input: the gzip header carries no
// name and no time, so the same image always gives the same bytes.
//
// The xz stream uses a CRC32 integrity check: the kernel's XZ decoder
// (lib/xz) accepts only CRC32 or no check, while xz tools default to CRC64,
// which the kernel rejects when unpacking the initramfs.
func Compress(cpio []byte, format string) ([]byte, error) {
	switch format {
	case "cpio":
		return cpio, nil
	case "cpio.gz":
		var b bytes.Buffer
		zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
		if err != nil {
			return nil, err
		}
		// The zero Header is what makes the output reproducible: no ModTime, no
		// Name. Go writes OS=255 (unknown) regardless of the host.
		if _, err := zw.Write(cpio); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		if err := zw.Close(); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return b.Bytes(), nil
	case "cpio.xz":
		if path, err := exec.LookPath("xz"); err == nil {
			return xzCLI(path, cpio)
		}
		var b bytes.Buffer
		zw, err := xz.WriterConfig{CheckSum: xz.CRC32, DictCap: xzDictCap}.NewWriter(&b)
		if err != nil {
			return nil, fmt.Errorf("xz: %w", err)
		}
		if _, err := zw.Write(cpio); err != nil {
			return nil, fmt.Errorf("xz: %w", err)
		}
		if err := zw.Close(); err != nil {
			return nil, fmt.Errorf("xz: %w", err)
		}
		return b.Bytes(), nil
	}
	return nil, fmt.Errorf("unknown initramfs format %q (supported: cpio, cpio.gz, cpio.xz)", format)
}

// xzCLI compresses with XZ Utils. Its encoder packs a u-root image about
// 15 % smaller than the pure-Go one at the same 1 MiB dictionary, which is
// what keeps a MIPS image under 2 MiB; one thread keeps the output the same
// run to run. The Go encoder remains the fallback where xz is not installed.
func xzCLI(path string, cpio []byte) ([]byte, error) {
	cmd := exec.Command(path, "--format=xz", "--check=crc32", "--lzma2=preset=9e,dict=1MiB", "--threads=1", "-c")
	cmd.Stdin = bytes.NewReader(cpio)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("xz: %w: %s", err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

// XZEncoder names the encoder Compress uses for cpio.xz, so that caches of
// compressed images can tell outputs of different encoders apart.
func XZEncoder() string {
	path, err := exec.LookPath("xz")
	if err != nil {
		return "go-xz"
	}
	v, err := exec.Command(path, "--version").Output()
	if err != nil {
		return "xz"
	}
	return strings.Fields(string(v) + " xz")[0] + "-" + strings.TrimSpace(strings.SplitN(string(v), "\n", 2)[0])
}
