package main

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/internal/kernels"
)

// checkBoard refuses, before anything is built or powered on, a board model
// bootbench cannot run (its profile says why and what works instead), and
// a run whose image cannot boot in the board's RAM: it builds the image (the run then finds
// it in the cache), sizes the kernel, and asks initramfs.CheckFit, whose
// error gives the numbers. kernel is the --kernel file; "" means the
// profile's Debian kernel, or none counted where it has none.
func checkBoard(ctx context.Context, p boards.Profile, bench, kernel, src string) error {
	if err := p.Unsupported(); err != nil {
		return usageErr("run: %v", err)
	}
	if p.RAMMB <= 0 {
		return nil
	}
	cache := filepath.Join(cacheDir(), "images")
	img, err := initramfs.Build(ctx, initramfs.Spec{Arch: p.Arch, GOARM: p.GOARM, GOMIPS: p.GOMIPS, Bench: bench, Source: src}, cache)
	if errors.Is(err, initramfs.ErrBadSpec) {
		return usageErr("run: board %s, bench %s: %v", p.Name, bench, err)
	}
	if err != nil {
		return fmt.Errorf("run: image for %s: %w", p.Name, err)
	}
	if kernel == "" && p.Kernel.Flavour != "" {
		if kernel, err = kernels.Debian(ctx, cacheDir(), src, p.Kernel.DebianArch, p.Kernel.Flavour); err != nil {
			return err
		}
	}
	var kernelBytes int64
	if kernel != "" {
		if kernelBytes, err = kernelRAM(kernel); err != nil {
			return usageErr("run: --kernel: %v", err)
		}
	}
	loaded := img.Size
	switch p.ImageFormat {
	case boards.FormatCPIOGz:
		loaded = img.GzipSize
	case boards.FormatCPIOXz, boards.FormatELF, boards.FormatUImage:
		cpio, err := os.ReadFile(img.Path)
		if err != nil {
			return err
		}
		xz, err := cachedCompress(cpio, img.Digest, "cpio.xz", cache)
		if err != nil {
			return err
		}
		loaded = int64(len(xz))
	}
	if err := initramfs.CheckFit(int64(p.RAMMB)<<20, kernelBytes, loaded, img.Size); err != nil {
		return usageErr("run: board %s, bench %s: %v", p.Name, bench, err)
	}
	return nil
}

// kernelRAM is what a kernel file takes in memory once loaded: the sum of
// an ELF kernel's loadable segments, bss included; for any other format
// (a compressed vmlinuz) its file size, which is less than it unpacks to.
func kernelRAM(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	f, err := elf.Open(path)
	if err != nil {
		return st.Size(), nil
	}
	defer f.Close()
	var n int64
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			n += int64(p.Memsz)
		}
	}
	return n, nil
}
