package initramfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/bootbench/bootbench/initramfs/gofix"
	"github.com/bootbench/bootbench/internal/cachelock"
	"github.com/u-root/gobusybox/src/pkg/golang"
	"github.com/u-root/mkuimage/uimage"
	"github.com/u-root/uio/llog"
)

// The base image is what every image of a target shares: u-root's init and
// benchinit, compiled together as one busybox-style binary (gobusybox), so
// the board holds one Go runtime rather than two. Benchmarks and libraries
// are added to a copy of it (compose), which needs no Go toolchain; the base
// comes from the source tree or from a prebuilt set.

// variant names a target within an architecture: "mipsle-softfloat",
// "arm-5", "amd64".
func (s Spec) variant() string {
	v := s.Arch
	switch {
	case s.GOARM != "":
		v += "-" + s.GOARM
	case s.GOMIPS != "":
		v += "-" + s.GOMIPS
	}
	if gofix.Needed(s.Arch) && stockRuntime() {
		v += "-stockrt"
	}
	return v
}

// baseImage returns the base image for spec's target: from the cache when
// the source and toolchain are unchanged, built when not, and from a
// prebuilt set when there is no source tree or no Go toolchain.
func baseImage(ctx context.Context, spec Spec, cacheDir string, say func(string)) (*Image, error) {
	var goroot string
	noGo := errors.New("no bootbench source tree (run from it or set BOOTBENCH_SRC)")
	if spec.Source != "" {
		goroot, noGo = toolchainRoot()
	}
	if noGo != nil {
		img, err := prebuiltBase(spec, cacheDir)
		if err != nil {
			return nil, noImageError{fmt.Errorf("cannot build the %s image: %v, and %w", spec.variant(), noGo, err)}
		}
		say("prebuilt " + spec.variant() + " base image")
		return img, nil
	}
	fixes, err := runtimeFixes(goroot, spec.Arch)
	if err != nil {
		return nil, err
	}
	key, err := baseDigest(ctx, spec, fixes)
	if err != nil {
		return nil, err
	}
	out := filepath.Join(cacheDir, fmt.Sprintf("base-%s-%s.cpio", spec.variant(), key[:16]))
	if _, err := os.Stat(out); err == nil {
		img, err := describe(out)
		if err != nil {
			return nil, err
		}
		img.Cached = true
		return img, nil
	}
	// Under a lock: a second bootbench wanting the same image waits for
	// this build rather than running a second Go build beside it.
	waiting := func() { say("waiting for another bootbench building the " + spec.variant() + " image") }
	err = cachelock.Once(ctx, out+".lock", cachelock.Exists(out), waiting, func() error {
		say("building init and benchinit (one binary) for " + spec.variant())
		return buildBase(ctx, spec, goroot, fixes, cacheDir, out)
	})
	if err != nil {
		return nil, err
	}
	return describe(out)
}

// ErrNoImage is what Build's error is (errors.Is) when there is nothing
// to make the image from: no source tree or Go, and no prebuilt set with
// the target's base image. It is the host's setup, not a build that
// failed.
var ErrNoImage = errors.New("no image to build from")

// noImageError is such an error, its text saying what is missing.
type noImageError struct{ error }

func (e noImageError) Is(target error) bool { return target == ErrNoImage }
func (e noImageError) Unwrap() error        { return e.error }

// toolchainRoot asks the go command on PATH, once, where its toolchain
// lives. A bootbench built with -trimpath (make build, a release) knows no
// GOROOT of its own: go/build's default is then ".", and gobusybox would run
// "bin/go" relative to the working directory. A user's shell sets no GOROOT
// either; the go on PATH is the toolchain they mean.
var toolchainRoot = sync.OnceValues(func() (string, error) {
	if _, err := exec.LookPath("go"); err != nil {
		return "", errors.New("no Go toolchain on PATH")
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	root := strings.TrimSpace(string(out))
	if err != nil || root == "" {
		return "", fmt.Errorf("the go command on PATH is not usable (go env GOROOT: %v)", goError(err))
	}
	if _, err := os.Stat(filepath.Join(root, "bin", "go")); err != nil {
		return "", fmt.Errorf("the go command on PATH names GOROOT %s, which has no bin/go", root)
	}
	return root, nil
})

// goError is what a failed go command said, or how it failed.
func goError(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(bytes.TrimSpace(ee.Stderr)) > 0 {
		return string(bytes.TrimSpace(ee.Stderr))
	}
	if err == nil {
		return "printed nothing"
	}
	return err.Error()
}

// buildBase compiles u-root's init and benchinit into one busybox binary
// with the toolchain at goroot and writes the archive to out.
func buildBase(ctx context.Context, spec Spec, goroot string, fixes []gofix.File, cacheDir, out string) error {
	// Prebuild comes here straight from a new cache, as Build does not.
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return fmt.Errorf("image cache: %w", err)
	}
	tmp, err := os.MkdirTemp(cacheDir, ".build-")
	if err != nil {
		return fmt.Errorf("image build dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	cpio := filepath.Join(tmp, "initramfs.cpio")
	opts, err := fixedRuntime(tmp, spec, fixes)
	if err != nil {
		return err
	}
	var logBuf bytes.Buffer
	l := llog.New(slog.LevelWarn, llog.WritePrintf(&logBuf))
	restore := setenv(spec) // u-root reads GOARM/GOMIPS from the process environment
	err = uimage.Create(l,
		uimage.WithReplaceEnv(golang.Default(append(opts.env, golang.DisableCGO(), golang.WithGOROOT(goroot), golang.WithGOARCH(spec.Arch), golang.WithWorkingDir(spec.Source))...)),
		uimage.WithBaseArchive(uimage.DefaultRamfs()),
		uimage.WithBusyboxCommands("github.com/u-root/u-root/cmds/core/init", Module+"/cmd/benchinit"),
		uimage.WithBusyboxBuildOpts(&golang.BuildOpts{ExtraArgs: append(buildFlags(spec.Arch), opts.flags...)}),
		uimage.WithInit("init"),
		uimage.WithUinitCommand("benchinit"),
		uimage.WithSkipLDD(),
		uimage.WithTempDir(tmp),
		uimage.WithCPIOOutput(cpio),
	)
	restore()
	if err != nil {
		return fmt.Errorf("build initramfs for %s: %w\n%s", spec.Arch, err, logBuf.String())
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.Rename(cpio, out); err != nil {
		return fmt.Errorf("store image in cache: %w", err)
	}
	return nil
}

// buildFlags are the go build flags gobusybox adds to its own (-a,
// -gcflags=all=-l, -ldflags "-s -w -buildid=", -trimpath). Turning inlining
// off keeps the binary small, but the benchmark must run at full speed: the
// packages the built-in suite spends its time in are compiled with inlining
// again (for go build, the last -gcflags pattern a package matches wins).
// The list was chosen by measuring: inlining the small helpers of
// internal/byteorder and math/bits shrinks the code, inlining everything
// makes the mipsle binary 0.3 MB larger.
//
// For 32-bit MIPS the segments are aligned to 16 KiB rather than Go's
// 64 KiB: the kernel maps a segment only where its file offset and address
// agree modulo the page size, so 16 KiB serves kernels with 4 KiB pages
// (every 32-bit MIPS router's) and 16 KiB pages, and saves padding between
// segments — 64 KiB steps that decide whether a router's image fits.
func buildFlags(arch string) []string {
	flags := []string{
		"-gcflags=runtime/...=", "-gcflags=internal/bytealg=", "-gcflags=internal/byteorder=",
		"-gcflags=crypto/...=", "-gcflags=hash/...=", "-gcflags=math/big=", "-gcflags=math/bits=",
		"-gcflags=golang.org/x/crypto/...=", "-gcflags=" + Module + "/...=",
	}
	if arch == "mips" || arch == "mipsle" {
		flags = append(flags, "-ldflags=-s -w -buildid= -R 0x4000")
	}
	return flags
}

// setenv sets GOARM/GOMIPS and the pinned levels for the duration of one
// build and returns the function that puts the previous values back.
func setenv(s Spec) func() {
	type kv struct {
		k, v string
		had  bool
	}
	var old []kv
	set := []kv{{k: "GOARM", v: s.GOARM}, {k: "GOMIPS", v: s.GOMIPS}}
	for _, e := range pinnedEnv {
		k, v, _ := strings.Cut(e, "=")
		set = append(set, kv{k: k, v: v})
	}
	for _, e := range set {
		prev, had := os.LookupEnv(e.k)
		old = append(old, kv{e.k, prev, had})
		if e.v != "" {
			os.Setenv(e.k, e.v)
		} else {
			os.Unsetenv(e.k)
		}
	}
	return func() {
		for _, e := range old {
			if e.had {
				os.Setenv(e.k, e.v)
			} else {
				os.Unsetenv(e.k)
			}
		}
	}
}

// baseDigest hashes everything that decides the base image's bytes: the
// target, the build flags, the toolchain, the module's requirements and the
// Go source of every package of this module that benchinit is built from
// (go list -deps), so a change to the host side does not rebuild the
// board's image.
func baseDigest(ctx context.Context, spec Spec, fixes []gofix.File) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "bootbench-base v1\n%s\n%q\n%q\n", spec.variant(), pinnedEnv, buildFlags(spec.Arch))
	if len(fixes) > 0 {
		fmt.Fprintf(h, "runtime corrected: %s %s\n", gofix.Name, gofix.Digest(fixes))
	}
	// GOFLAGS and GOEXPERIMENT change the binaries too.
	goenv := exec.CommandContext(ctx, "go", "env", "GOVERSION", "GOFLAGS", "GOEXPERIMENT")
	goenv.Env = append(os.Environ(), spec.env()...)
	gover, err := goenv.Output()
	if err != nil {
		return "", fmt.Errorf("find the Go toolchain (needed to build images): %w", err)
	}
	fmt.Fprintf(h, "%s", gover)
	list := exec.CommandContext(ctx, "go", "list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}", "./cmd/benchinit")
	list.Dir = spec.Source
	list.Env = append(os.Environ(), spec.env()...)
	out, err := list.Output()
	if err != nil {
		return "", fmt.Errorf("list benchinit's packages in %s: %w", spec.Source, err)
	}
	files := []string{filepath.Join(spec.Source, "go.mod"), filepath.Join(spec.Source, "go.sum")}
	for _, dir := range strings.Fields(string(out)) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return "", fmt.Errorf("hash image inputs: %w", err)
		}
		for _, e := range ents {
			name := e.Name()
			if !e.IsDir() && !strings.HasSuffix(name, "_test.go") && (strings.HasSuffix(name, ".go") || !strings.HasPrefix(name, ".")) {
				files = append(files, filepath.Join(dir, name)) // embedded files count too
			}
		}
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("hash image inputs: %w", err)
		}
		rel, _ := filepath.Rel(spec.Source, f)
		fmt.Fprintf(h, "%s %d\n", rel, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
