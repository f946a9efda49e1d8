package initramfs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/u-root/mkuimage/cpio"
)

// imageDigest names the image made of base plus c: the base's bytes and
// the added files by their place, mode and bytes (not their host paths, so
// the same libraries from another copy of a sysroot make the same image).
func imageDigest(base *Image, spec Spec, c *contents) string {
	h := sha256.New()
	fmt.Fprintf(h, "bootbench-image v1\nbase %s\nbench %q %d\n%s", base.Digest, spec.Bench, len(c.bench), c.bench)
	for _, f := range c.files {
		fmt.Fprintf(h, "file %q %o %x\n", f.img, f.mode, f.sum)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// compose writes to out the base archive with c's files appended: parent
// directories first, then each file, then bench.json, then the trailer. The
// records carry no times, owners or inode numbers, so the same inputs give
// the same bytes.
func compose(basePath string, c *contents, out string) error {
	bf, err := os.Open(basePath)
	if err != nil {
		return fmt.Errorf("read base image: %w", err)
	}
	defer bf.Close()
	recs, err := cpio.ReadAllRecords(cpio.Newc.Reader(bf))
	if err != nil {
		return fmt.Errorf("read base image %s: %w", basePath, err)
	}
	have := map[string]bool{}
	for _, r := range recs {
		have[r.Name] = true
	}
	var add []cpio.Record
	var opened []*os.File
	defer func() {
		for _, f := range opened {
			f.Close()
		}
	}()
	addFile := func(name string, mode os.FileMode, size int64, data io.ReaderAt) error {
		if have[name] {
			return fmt.Errorf("/%s is part of the base image: add something else there", name)
		}
		for d := path.Dir(name); d != "." && !have[d]; d = path.Dir(d) {
			have[d] = true
			add = append(add, cpio.Directory(d, 0o755))
		}
		have[name] = true
		add = append(add, cpio.Record{ReaderAt: data, Info: cpio.Info{Name: name, Mode: cpio.S_IFREG | uint64(mode.Perm()), FileSize: uint64(size)}})
		return nil
	}
	for _, f := range c.files {
		fh, err := os.Open(f.host)
		if err != nil {
			return err
		}
		opened = append(opened, fh)
		st, err := fh.Stat()
		if err != nil {
			return err
		}
		if err := addFile(f.img, f.mode, st.Size(), fh); err != nil {
			return err
		}
	}
	if c.bench != nil {
		if err := addFile(benchSpecImg, 0o644, int64(len(c.bench)), bytes.NewReader(c.bench)); err != nil {
			return err
		}
	}
	// Directories must precede what they hold: sort the parents found
	// above before the files they were found for.
	sortParentsFirst(add)

	tmp := out + ".tmp"
	of, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("write image: %w", err)
	}
	defer os.Remove(tmp)
	w := cpio.Newc.Writer(of)
	for _, r := range append(recs, add...) {
		if err := w.WriteRecord(cpio.MakeReproducible(r)); err != nil {
			of.Close()
			return fmt.Errorf("write image: %w", err)
		}
	}
	if err := cpio.WriteTrailer(w); err != nil {
		of.Close()
		return fmt.Errorf("write image: %w", err)
	}
	if err := of.Close(); err != nil {
		return fmt.Errorf("write image: %w", err)
	}
	return os.Rename(tmp, filepath.Clean(out))
}

// sortParentsFirst orders records so every directory comes before the
// entries inside it, keeping the order otherwise (a stable sort by depth
// would scatter files; this moves each directory just ahead of its first
// descendant).
func sortParentsFirst(recs []cpio.Record) {
	pos := map[string]int{}
	for i, r := range recs {
		pos[r.Name] = i
	}
	var out []cpio.Record
	placed := map[string]bool{}
	var place func(r cpio.Record)
	place = func(r cpio.Record) {
		if placed[r.Name] {
			return
		}
		if d := path.Dir(r.Name); d != "." {
			if i, ok := pos[d]; ok {
				place(recs[i])
			}
		}
		placed[r.Name] = true
		out = append(out, r)
	}
	for _, r := range recs {
		place(r)
	}
	copy(recs, out)
}
