package initramfs

import (
	"context"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/u-root/mkuimage/cpio"
)

func source(t *testing.T) string {
	t.Helper()
	src, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestBuildAmd64 builds a real image, checks what is in it, and that a second
// build of the same inputs is a cache hit with the same bytes.
func TestBuildAmd64(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs for the board")
	}
	cache := t.TempDir()
	ctx := context.Background()
	img, err := Build(ctx, Spec{Arch: "amd64", Source: source(t)}, cache)
	if err != nil {
		t.Fatal(err)
	}
	if img.Cached {
		t.Error("first build reported as cached")
	}
	f, err := os.Open(img.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rr := cpio.Newc.Reader(f)
	recs := map[string]cpio.Record{}
	for {
		rec, err := rr.ReadRecord()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		recs[rec.Name] = rec
	}
	for _, name := range []string{"init", "bbin/init", "bin/uinit", "bin/benchinit", "dev/console"} {
		if _, ok := recs[name]; !ok {
			t.Errorf("image lacks %s", name)
		}
	}
	if r, ok := recs["bin/uinit"]; ok {
		target, _ := io.ReadAll(io.NewSectionReader(r.ReaderAt, 0, int64(r.FileSize)))
		resolved := string(target)
		if !path.IsAbs(resolved) {
			resolved = path.Join("/bin", resolved)
		}
		if resolved != "/bin/benchinit" {
			t.Errorf("bin/uinit -> %q, want /bin/benchinit", target)
		}
	}
	// Nothing else runs on the board: u-root's busybox holds init alone.
	for name := range recs {
		if strings.HasPrefix(name, "bbin/") && name != "bbin/init" && name != "bbin/bb" {
			t.Errorf("unexpected command in image: %s", name)
		}
	}

	again, err := Build(ctx, Spec{Arch: "amd64", Source: source(t)}, cache)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Cached || again.Digest != img.Digest {
		t.Errorf("rebuild: cached %v digest %s, want a cache hit with %s", again.Cached, again.Digest, img.Digest)
	}
}

func TestBuildRejectsArch(t *testing.T) {
	tests := []struct{ arch, want string }{
		{"sparc", "supported: amd64"},
		{"ppc", "no 32-bit PowerPC port"},
	}
	for _, tt := range tests {
		_, err := Build(context.Background(), Spec{Arch: tt.arch, Source: source(t)}, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("arch %s: err %v, want %q", tt.arch, err, tt.want)
		}
	}
}
