package plan

import (
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/initramfs"
)

// Builders turn a plan into files: they are the rig's, since they fetch
// and build into its cache.
type Builders struct {
	// Kernels fetches a profile's Debian kernel, or builds the one it
	// names by Build.
	Kernels func(ctx context.Context, k boards.DebianKernel) (string, error)
	// Modules returns the named modules of kernel, and what they depend
	// on, as HOST:IMG files for the image; nil adds none (a kernel that
	// has them built in).
	Modules func(ctx context.Context, kernel string, names []string) ([]string, error)
	// BuildImage builds an image; nil is initramfs.Build.
	BuildImage func(ctx context.Context, spec initramfs.Spec, cacheDir string) (*initramfs.Image, error)
	CacheDir   string // images go under images/
	// RaspberryPi finds a Raspberry Pi boot's files for kernel: the
	// firmware (Debian's raspi-firmware) and the device tree (from the
	// kernel's package), by the names the firmware asks for them.
	RaspberryPi func(ctx context.Context, kernel string, rp RaspberryPi) (map[string]string, error)
}

// ErrNoKernel is a plan whose board has no kernel: none named, and no
// Debian kernel in its profile.
var ErrNoKernel = errors.New("no kernel (name one in the inventory, kernel: FILE, or with --kernel)")

// Built is a plan made: the files a board boots.
type Built struct {
	Plan   Plan
	Kernel string // the kernel file
	Image  *initramfs.Image
	// Payload is the image as the loader puts it in RAM (Plan.Wrap's
	// Payload form): the cpio itself, or its compressed copy in the
	// cache.
	Payload     string
	PayloadSize int64
	// RaspberryPiFiles are a Raspberry Pi boot's firmware and device tree
	// files in the cache, by the name the firmware asks for each (the
	// device tree by its base name); nil for other boards.
	RaspberryPiFiles map[string]string
}

// CheckKernel is ErrNoKernel for a plan that names no kernel at all: no
// file and no Debian kernel in the profile. It fetches and builds
// nothing, so a run can refuse such a board before anything else.
func (p Plan) CheckKernel() error {
	if p.Kernel == "" && !p.Debian.Named() {
		return ErrNoKernel
	}
	return nil
}

// Kernel finds the plan's kernel file, fetching Debian's (or building the
// profile's) if it must.
func (bs Builders) Kernel(ctx context.Context, p Plan) (string, error) {
	kernel := p.Kernel
	if kernel == "" {
		if err := p.CheckKernel(); err != nil || bs.Kernels == nil {
			return "", ErrNoKernel
		}
		var err error
		if kernel, err = bs.Kernels(ctx, p.Debian); err != nil {
			return "", err
		}
	}
	if _, err := os.Stat(kernel); err != nil {
		return "", fmt.Errorf("kernel: %w", err)
	}
	return kernel, nil
}

// Make builds the plan's image for kernel (which may be "" when the
// plan carries nothing of the kernel's) and wraps it as the loader takes it.
func (bs Builders) Make(ctx context.Context, p Plan, kernel string) (*Built, error) {
	spec := p.Image
	if err := checkKernelArch(kernel, spec.Arch); err != nil {
		return nil, err
	}
	if len(p.Modules) > 0 && bs.Modules != nil {
		if kernel == "" {
			return nil, fmt.Errorf("the image carries kernel modules (%s bench), and there is no kernel to take them from", spec.Bench)
		}
		add, err := bs.Modules(ctx, kernel, p.Modules)
		if err != nil {
			return nil, err
		}
		spec.Add = append(spec.Add[:len(spec.Add):len(spec.Add)], add...)
	}
	build := bs.BuildImage
	if build == nil {
		build = initramfs.Build
	}
	cache := filepath.Join(bs.CacheDir, "images")
	img, err := build(ctx, spec, cache)
	if err != nil {
		return nil, err
	}
	b := &Built{Plan: p, Kernel: kernel, Image: img, Payload: img.Path, PayloadSize: img.Size}
	if p.Wrap.Payload != "cpio" {
		if b.Payload, b.PayloadSize, err = compressed(img, p.Wrap.Payload, cache); err != nil {
			return nil, err
		}
	}
	if rp := p.RaspberryPi; rp != nil {
		switch {
		case kernel == "":
			return nil, errors.New("a Raspberry Pi boot needs a kernel, whose package holds its device tree")
		case bs.RaspberryPi == nil:
			return nil, errors.New("a Raspberry Pi boot needs its firmware and device tree, and nothing here fetches them")
		}
		if b.RaspberryPiFiles, err = bs.RaspberryPi(ctx, kernel, *rp); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// checkKernelArch refuses, before anything is built, a kernel that cannot
// start an image for arch (initramfs.CheckKernelArch).
func checkKernelArch(kernel, arch string) error {
	if kernel == "" {
		return nil
	}
	b, err := os.ReadFile(kernel)
	if err != nil {
		return fmt.Errorf("kernel: %w", err)
	}
	if err := initramfs.CheckKernelArch(b, arch); err != nil {
		return fmt.Errorf("kernel %s: %w", kernel, err)
	}
	return nil
}

// Fit refuses an image that cannot boot in ramMB of RAM (0: not known),
// counting the kernel as it lies in memory and the payload the loader
// puts beside it. A Built without a kernel counts none.
func (b *Built) Fit(ramMB int) error {
	if ramMB <= 0 {
		return nil
	}
	kernel, loaded, unpacked, err := b.Sizes()
	if err != nil {
		return err
	}
	return initramfs.CheckFit(int64(ramMB)<<20, kernel, loaded, unpacked)
}

// Sizes are what Fit counts: the kernel in memory (0 without one), the
// image as loaded (the payload), and the image unpacked (the cpio).
func (b *Built) Sizes() (kernel, loaded, unpacked int64, err error) {
	if b.Kernel != "" {
		if kernel, err = KernelRAM(b.Kernel); err != nil {
			return 0, 0, 0, err
		}
	}
	return kernel, b.PayloadSize, b.Image.Size, nil
}

// Build makes job's plan: its kernel, and its image wrapped as the
// board's loader takes it.
func (bs Builders) Build(ctx context.Context, job Job) (*Built, error) {
	p := New(job)
	kernel, err := bs.Kernel(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("board %s: %w", job.Board.Name, err)
	}
	return bs.Make(ctx, p, kernel)
}

// KernelRAM is what a kernel file takes in memory once loaded: the sum of
// an ELF kernel's loadable segments, bss included; for any other format
// (a compressed vmlinuz) its file size, which is less than it unpacks to.
func KernelRAM(path string) (int64, error) {
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

// compressed is the image in format, kept in the cache beside it.
func compressed(img *initramfs.Image, format, cache string) (string, int64, error) {
	cpio, err := os.ReadFile(img.Path)
	if err != nil {
		return "", 0, err
	}
	path, data, err := Compressed(cpio, img.Digest, format, cache)
	if err != nil {
		return "", 0, err
	}
	if path == "" {
		return "", 0, fmt.Errorf("image cache %s cannot be written: the %s image must be a file to be served", cache, format)
	}
	return path, int64(len(data)), nil
}

// Compressed is cpio (of digest) in format, cached in cache by the cpio's
// digest: xz is the slow step of a cached rebuild. path is the cached file
// ("" for "cpio" itself, or when the cache cannot be written).
func Compressed(cpio []byte, digest, format, cache string) (path string, data []byte, err error) {
	if format == "cpio" {
		return "", cpio, nil
	}
	key := digest[:min(16, len(digest))]
	if format == "cpio.xz" {
		// Different xz encoders give different bytes for the same image.
		sum := sha256.Sum256([]byte(initramfs.XZEncoder()))
		key += "-" + hex.EncodeToString(sum[:4])
	}
	p := filepath.Join(cache, "initramfs-"+key+"."+format)
	if b, err := os.ReadFile(p); err == nil {
		return p, b, nil
	}
	b, err := initramfs.Compress(cpio, format)
	if err != nil {
		return "", nil, err
	}
	// A cache that cannot be written is only slower, for a caller that
	// needs the bytes and not the file.
	tmp := p + ".tmp" + strconv.Itoa(os.Getpid())
	if os.MkdirAll(cache, 0o755) != nil || os.WriteFile(tmp, b, 0o644) != nil {
		return "", b, nil
	}
	if os.Rename(tmp, p) != nil {
		os.Remove(tmp)
		return "", b, nil
	}
	return p, b, nil
}
