package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bootbench/bootbench/benchmark"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/plan"
)

// imageFormats are what --format writes. cpio* are the initramfs itself;
// uimage is a U-Boot legacy ramdisk image; elf is a MIPS kernel ELF with the
// initramfs as an extra segment, for loaders that take one ELF (RouterBOOT).
var imageFormats = []string{"cpio", "cpio.gz", "cpio.xz", "uimage", "elf"}

// repeated collects a flag given several times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, " ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// imageHelp is what 'bootbench image --help' prints.
const imageHelp = `Usage: bootbench image build | prebuild [flags]

  bootbench image build --arch GOARCH|DEBIAN_ARCH [flags] -o OUT   the initramfs a board boots
  bootbench image prebuild [--arch A,B,...] [-o DIR]              base images for running without the source tree or Go

Run 'bootbench image SUBCOMMAND --help' for a subcommand's flags.
`

func cmdImage(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usageErr("image: say build or prebuild (see 'bootbench image --help')")
	}
	if sub, ok := groupHelp(args, imageHelp); ok {
		if sub == nil {
			return errHelpShown
		}
		return cmdImage(ctx, sub)
	}
	if args[0] == "prebuild" {
		return cmdPrebuild(ctx, args[1:])
	}
	if args[0] != "build" {
		return usageErr("image: unknown subcommand %q: say build or prebuild (see 'bootbench image --help')", args[0])
	}
	fs := newCommand("image build", "image build --arch GOARCH [--goarm N] [--gomips softfloat|hardfloat]\n"+
		"    [--bench "+strings.Join(benchmark.Names(), "|")+"|NAME] [--bench-cmd \"CMD ARGS\"] [--add HOST:IMG]... [--sysroot DIR]\n"+
		"    [--format cpio|cpio.gz|cpio.xz|uimage|elf] [--compress gz|xz|none] [--kernel FILE] [--cmdline ARGS] [--ram MIB] [-o OUT]\n\n"+
		"Builds the initramfs a board boots: u-root's init with benchinit as its only job,\n"+
		"and optionally an external benchmark with the libraries it needs. Without the\n"+
		"source tree or Go it starts from the prebuilt set ('image prebuild').", "")
	f := addImageFlags(fs.FlagSet)
	if err := fs.parseArgs(args[1:]); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	spec, err := f.spec()
	if err != nil {
		return err
	}
	return f.build(ctx, spec)
}

// imageFlags are image build's flags.
type imageFlags struct {
	arch, prebuilt, goarm, gomips, bench, benchCmd, sysroot *string
	format, compress, kernel, cmdline, out                  *string
	add                                                     repeated
	ramMiB                                                  *int
}

func addImageFlags(fs *flag.FlagSet) *imageFlags {
	f := &imageFlags{
		arch:     fs.String("arch", "", "target architecture: "+strings.Join(initramfs.Arches, ", ")+", or Debian's name (armhf, armel, i386, mipsel, mips64el, ppc64el)"),
		prebuilt: fs.String("prebuilt", "", "prebuilt image set to start from when there is no source tree or Go (default: the cache's)"),
		goarm:    fs.String("goarm", "", "for arm: 5, 6 or 7 (default "+initramfs.DefaultGOARM+": runs on every ARM core)"),
		gomips:   fs.String("gomips", "", "for mips/mipsle: softfloat or hardfloat (default "+initramfs.DefaultGOMIPS+": router kernels have no FPU emulation)"),
		bench:    fs.String("bench", benchmark.Speed, "benchmark the image carries: "+benchmark.Help()+"; or a NAME with --bench-cmd"),
		benchCmd: fs.String("bench-cmd", "", `command the board runs for --bench, e.g. "/bin/openssl speed -seconds {seconds} md5" (quotes group words; no shell)`),
		sysroot:  fs.String("sysroot", "", "board root to take dynamic ELF files' interpreter and libraries from (default / for the host's arch)"),
		format:   fs.String("format", "cpio", "output: "+strings.Join(imageFormats, ", ")),
		compress: fs.String("compress", "gz", "how uimage and elf carry the initramfs: gz, xz or none (the kernel unpacks it)"),
		kernel:   fs.String("kernel", "", "kernel file: wrapped by --format elf, counted by --ram"),
		cmdline:  fs.String("cmdline", "", "for --format elf: kernel parameters written, with rd_start/rd_size, into the kernel's own command line area (OpenWrt's CMDLINE:), for loaders that pass none of ours (RouterBOOT)"),
		ramMiB:   fs.Int("ram", 0, "board RAM in MiB: refuse an image that cannot boot in it"),
		out:      fs.String("o", "", "output file (default initramfs-ARCH.FORMAT)"),
	}
	fs.Var(&f.add, "add", "put host file HOST at IMG in the image (repeatable); dynamic ELF files bring their libraries")
	return f
}

// check refuses flags that do not go together.
func (f *imageFlags) check() error {
	switch {
	case *f.arch == "":
		return usageErr("image build: --arch is required (one of %s)", strings.Join(initramfs.Arches, ", "))
	case !slices.Contains(imageFormats, *f.format):
		return usageErr("image build: unknown --format %q (supported: %s)", *f.format, strings.Join(imageFormats, ", "))
	case !slices.Contains([]string{"gz", "xz", "none"}, *f.compress):
		return usageErr("image build: unknown --compress %q (supported: gz, xz, none)", *f.compress)
	case *f.format == "elf" && *f.kernel == "":
		return usageErr("image build: --format elf needs --kernel (the kernel ELF to wrap)")
	case *f.cmdline != "" && *f.format != "elf":
		return usageErr("image build: --cmdline is for --format elf (other formats' loaders pass the command line)")
	case *f.ramMiB < 0:
		return usageErr("image build: --ram %d: want MiB of RAM", *f.ramMiB)
	}
	return nil
}

// spec is the image the flags describe, its arch and benchmark resolved:
// a Debian arch name becomes GOARCH (and GOARM), a benchmark is one the
// registry knows or one with its command.
func (f *imageFlags) spec() (initramfs.Spec, error) {
	arch, goarm := *f.arch, *f.goarm
	if a, goarmFor := initramfs.ParseArch(arch); a != arch {
		if goarm != "" && goarm != goarmFor {
			return initramfs.Spec{}, usageErr("image build: --arch %s means GOARM %s, not --goarm %s", arch, goarmFor, goarm)
		}
		arch, goarm = a, goarmFor
	}
	// Without the source tree the image starts from the prebuilt set.
	src, _ := initramfs.FindSource()
	spec := initramfs.Spec{
		Arch: arch, GOARM: goarm, GOMIPS: *f.gomips, Source: src,
		Bench: *f.bench, BenchCmd: *f.benchCmd, Add: f.add, Sysroot: *f.sysroot, Prebuilt: *f.prebuilt,
		Progress: func(step string) { fmt.Fprintf(os.Stderr, "%s\n", step) },
	}
	if err := spec.Check(); err != nil {
		return spec, usageErr("image build: %v", err)
	}
	return spec, nil
}

// build builds spec, wraps it in the flags' format and writes it out.
func (f *imageFlags) build(ctx context.Context, spec initramfs.Spec) error {
	var kernelBytes []byte
	if *f.kernel != "" {
		b, err := os.ReadFile(*f.kernel)
		if err != nil {
			return usageErr("image build: --kernel: %v", err)
		}
		if err := initramfs.CheckKernelArch(b, spec.Arch); err != nil {
			return usageErr("image build: --kernel %s: %v", *f.kernel, err)
		}
		kernelBytes = b
	}
	out := *f.out
	if out == "" {
		out = "initramfs-" + spec.Arch + "." + *f.format
	}
	start := time.Now()
	cache := filepath.Join(cacheDir(), "images")
	img, err := initramfs.Build(ctx, spec, cache)
	if errors.Is(err, initramfs.ErrBadSpec) {
		return usageErr("image build: %v", err)
	}
	if err != nil {
		return fmt.Errorf("image build: %w", err)
	}
	cpio, err := os.ReadFile(img.Path)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "writing %s\n", *f.format)
	data, loaded, note, err := formatImage(cpio, img.Digest, *f.format, *f.compress, spec.Arch, kernelBytes, *f.cmdline, cache)
	if err != nil {
		return usageErr("image build: %v", err)
	}
	if *f.ramMiB > 0 {
		if *f.kernel == "" {
			fmt.Fprintln(os.Stderr, "--ram: the kernel is not counted (give --kernel)")
		}
		if err := initramfs.CheckFit(int64(*f.ramMiB)<<20, int64(len(kernelBytes)), loaded, img.Size); err != nil {
			return usageErr("image build: %v", err)
		}
	}
	if err := writeOut(out, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	how := "built"
	if img.Cached {
		how = "cached"
	}
	if img.Prebuilt != "" {
		how += " from the prebuilt set of bootbench " + img.Prebuilt
	}
	fmt.Fprintf(os.Stderr, "%s: %d bytes (cpio %d), sha256 %s, %.1fs, %s\n", out, len(data), img.Size, hex.EncodeToString(sum[:]), time.Since(start).Seconds(), how)
	if note != "" {
		fmt.Fprintln(os.Stderr, note)
	}
	return nil
}

// formatImage turns the cpio into format. loaded is how many bytes of it the
// boot loader puts in RAM beside the kernel, for the fit check. The
// compressed forms are cached by the cpio's digest: xz is the slow step of a
// cached rebuild.
//
// A uImage carries the initramfs compressed by --compress with header
// compression "none": U-Boot's bootm/booti hand a ramdisk to the kernel as
// is, and the kernel unpacks gz or xz itself (legacy uImage headers have no
// xz, and a "gzip" header would make U-Boot inflate it first for nothing).
func formatImage(cpio []byte, digest, format, compress, arch string, kernel []byte, cmdline, cache string) (data []byte, loaded int64, note string, err error) {
	inner := map[string]string{"gz": "cpio.gz", "xz": "cpio.xz", "none": "cpio"}[compress]
	if strings.HasPrefix(format, "cpio") {
		inner = format
	}
	_, payload, err := plan.Compressed(cpio, digest, inner, cache)
	if err != nil {
		return nil, 0, "", err
	}
	switch format {
	case "cpio", "cpio.gz", "cpio.xz":
		return payload, int64(len(payload)), "", nil
	case "uimage":
		u, err := initramfs.UImage(payload, initramfs.UImageOptions{Arch: arch, Type: "ramdisk", Compression: "none", Name: "bootbench " + arch})
		return u, int64(len(u)), "", err
	case "elf":
		e, rd, err := initramfs.WrapELF(kernel, payload, initramfs.ELFOptions{EmbedCmdline: cmdline})
		switch {
		case errors.Is(err, initramfs.ErrNoBuiltinCmdline) && cmdline != "":
			return nil, 0, "", fmt.Errorf("--cmdline: %w (OpenWrt's MIPS kernels have one, a CMDLINE: area; pass the parameters by the bootloader instead)", err)
		case err != nil && !errors.Is(err, initramfs.ErrNoBuiltinCmdline):
			return nil, 0, "", err
		case cmdline != "":
			return e, int64(len(payload)), "kernel command line area holds: " + cmdline + " " + rd, nil
		}
		return e, int64(len(payload)), "kernel command line must add: " + rd, nil
	}
	return nil, 0, "", fmt.Errorf("unknown format %q", format)
}

// cmdPrebuild writes the base images (u-root's init and benchinit) for
// every target into a prebuilt set, from which a bootbench binary without
// the source tree or Go builds its images.
func cmdPrebuild(ctx context.Context, args []string) error {
	fs := newCommand("image prebuild", "image prebuild [--arch A,B,...] [-o DIR]\n\n"+
		"Builds u-root's init and benchinit for each architecture from the source tree\n"+
		"and writes them, with a manifest, where 'image build' and 'run' find them when\n"+
		"there is no source tree or no Go: the cache's prebuilt set by default. A release\n"+
		"carries such a set.", "")
	arches := fs.String("arch", "", "targets, comma separated, GOARCH or Debian names (default: every architecture, and armhf)")
	out := fs.String("o", "", "directory of the set (default: the cache's, "+initramfs.PrebuiltDir(filepath.Join(cacheDir(), "images"))+")")
	if err := fs.parseArgs(args); err != nil {
		return err
	}
	src, err := initramfs.FindSource()
	if err != nil {
		return usageErr("image prebuild: %v", err)
	}
	cache := filepath.Join(cacheDir(), "images")
	if *out == "" {
		*out = initramfs.PrebuiltDir(cache)
	}
	targets := initramfs.DefaultTargets()
	if *arches != "" {
		targets = nil
		for _, a := range splitList(*arches) {
			arch, goarm := initramfs.ParseArch(a)
			targets = append(targets, initramfs.Spec{Arch: arch, GOARM: goarm})
		}
	}
	start := time.Now()
	m, err := initramfs.Prebuild(ctx, targets, src, cache, *out, func(s string) { fmt.Fprintln(os.Stderr, s) })
	if errors.Is(err, initramfs.ErrBadSpec) {
		return usageErr("image prebuild: %v", err)
	}
	if err != nil {
		return fmt.Errorf("image prebuild: %w", err)
	}
	fmt.Fprintf(os.Stderr, "%s: %d images by bootbench %s, %.1fs\n", *out, len(m.Images), m.MadeBy, time.Since(start).Seconds())
	return nil
}
