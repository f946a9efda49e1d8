package initramfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/u-root/mkuimage/cpio"
)

// writeBase writes a small archive standing in for a base image: what
// compose needs of one is its records, not a Go build.
func writeBase(t *testing.T, p string) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := cpio.Newc.Writer(f)
	recs := []cpio.Record{
		cpio.Directory("bbin", 0o755), cpio.StaticFile("bbin/bb", "busybox", 0o755),
		cpio.Symlink("init", "bbin/init"), cpio.Directory("lib", 0o755),
	}
	for _, r := range recs {
		if err := w.WriteRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := cpio.WriteTrailer(w); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestCompose(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.cpio")
	writeBase(t, base)
	host := func(name, content string) addedFile {
		p := filepath.Join(dir, strings.ReplaceAll(name, "/", "_"))
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return addedFile{img: name, host: p, mode: 0o755, sum: sha256.Sum256([]byte(content))}
	}
	c := &contents{
		files: []addedFile{host("bin/openssl", "openssl"), host("lib/ld.so.1", "loader"), host("usr/lib/x/ossl-modules/legacy.so", "legacy")},
		bench: []byte(`{"name":"openssl"}` + "\n"),
	}
	out := filepath.Join(dir, "image.cpio")
	if err := compose(base, c, out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := cpio.ReadAllRecords(cpio.Newc.Reader(bytes.NewReader(b)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range recs {
		names = append(names, r.Name)
		if r.MTime != 0 || r.UID != 0 || r.Ino != 0 {
			t.Errorf("%s: mtime %d uid %d ino %d, want zeros for reproducible bytes", r.Name, r.MTime, r.UID, r.Ino)
		}
	}
	want := []string{"bbin", "bbin/bb", "init", "lib", "bin", "bin/openssl", "lib/ld.so.1",
		"usr", "usr/lib", "usr/lib/x", "usr/lib/x/ossl-modules", "usr/lib/x/ossl-modules/legacy.so",
		"etc", "etc/bootbench", "etc/bootbench/bench.json"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("records\n got %q\nwant %q", names, want)
	}
	recs2 := readCPIO(t, out)
	if got := string(content(t, recs2["bin/openssl"])); got != "openssl" || recs2["bin/openssl"].Mode&0o777 != 0o755 {
		t.Errorf("bin/openssl: %q mode %o", got, recs2["bin/openssl"].Mode)
	}
	// Same inputs, same bytes.
	again := filepath.Join(dir, "again.cpio")
	if err := compose(base, c, again); err != nil {
		t.Fatal(err)
	}
	if b2, _ := os.ReadFile(again); !bytes.Equal(b, b2) {
		t.Error("composing the same inputs twice gave different bytes")
	}
	// Nothing of the base may be replaced.
	clash := &contents{files: []addedFile{host("bbin/bb", "mine")}}
	if err := compose(base, clash, filepath.Join(dir, "clash.cpio")); err == nil || !strings.Contains(err.Error(), "/bbin/bb is part of the base image") {
		t.Errorf("replacing bbin/bb: %v", err)
	}
}

// TestPrebuiltSet makes a set from the source for amd64 and builds the same
// image from it with no source, as a bootbench binary on its own does.
func TestPrebuiltSet(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs for the board")
	}
	ctx := context.Background()
	cache := sharedCache(t)
	set := t.TempDir()
	m, err := Prebuild(ctx, []Spec{{Arch: "amd64"}}, source(t), cache, set, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Images) != 1 || m.Images[0].Arch != "amd64" || m.MadeBy == "" {
		t.Fatalf("manifest %+v", m)
	}
	fromSource, err := Build(ctx, Spec{Arch: "amd64", Source: source(t)}, cache)
	if err != nil {
		t.Fatal(err)
	}
	fresh := t.TempDir()
	fromSet, err := Build(ctx, Spec{Arch: "amd64", Prebuilt: set}, fresh)
	if err != nil {
		t.Fatal(err)
	}
	if fromSet.Digest != fromSource.Digest || fromSet.Prebuilt != m.MadeBy {
		t.Errorf("from the set: digest %s made by %q; from the source %s", fromSet.Digest, fromSet.Prebuilt, fromSource.Digest)
	}
	tests := []struct {
		name string
		spec Spec
		prep func()
		want string
	}{
		{"no such target", Spec{Arch: "mipsle", Prebuilt: set}, nil, "has no mipsle-softfloat image (it has: [amd64])"},
		{"no set", Spec{Arch: "amd64", Prebuilt: filepath.Join(set, "none")}, nil, "no prebuilt image set in"},
		{"damaged", Spec{Arch: "amd64", Prebuilt: set}, func() {
			os.WriteFile(filepath.Join(set, m.Images[0].File), []byte("not an image"), 0o644)
		}, "manifest says"},
	}
	for _, tt := range tests {
		if tt.prep != nil {
			tt.prep()
		}
		_, err := Build(ctx, tt.spec, fresh)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "no bootbench source tree") {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
