package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/bootbench/bootbench/initramfs"
)

func cmdImage(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "build" {
		return usageErr("image: say build (see 'bootbench image build --help')")
	}
	fs := newFlags("image build", "image build --arch GOARCH [-o OUT]\n\n"+
		"Builds the initramfs a board boots: u-root's init with benchinit as its only job.")
	arch := fs.String("arch", "", "target architecture: "+fmt.Sprint(initramfs.Arches))
	out := fs.String("o", "", "output file (default initramfs-ARCH.cpio)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *arch == "" {
		return usageErr("image build: --arch is required (one of %v)", initramfs.Arches)
	}
	if !slices.Contains(initramfs.Arches, *arch) {
		return usageErr("image build: unknown arch %q (supported: %v)", *arch, initramfs.Arches)
	}
	src, err := initramfs.FindSource()
	if err != nil {
		return err
	}
	if *out == "" {
		*out = "initramfs-" + *arch + ".cpio"
	}
	fmt.Fprintf(os.Stderr, "building %s initramfs...\n", *arch)
	img, err := initramfs.Build(ctx, initramfs.Spec{Arch: *arch, Source: src}, filepath.Join(cacheDir(), "images"))
	if err != nil {
		return fmt.Errorf("image build: %w", err)
	}
	b, err := os.ReadFile(img.Path)
	if err != nil {
		return err
	}
	if err := writeOut(*out, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s: %d bytes (%d gzipped), sha256 %s, %.1fs%s\n", *out, img.Size, img.GzipSize, img.Digest, img.Took.Seconds(), map[bool]string{true: " (cached)"}[img.Cached])
	return nil
}
