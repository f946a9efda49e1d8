// Package initramfs builds the image a board boots: u-root's init, with
// cmd/benchinit as its uinit and nothing else, as a newc cpio archive.
//
//	img, err := initramfs.Build(ctx, initramfs.Spec{Arch: "amd64", Source: src}, cacheDir)
//
// Builds need the Go toolchain and the bootbench module source (Spec.Source):
// u-root's init and benchinit are compiled for the target architecture. The
// result is cached by a digest of every input, so a second build of the same
// inputs is a file lookup.
package initramfs

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/u-root/gobusybox/src/pkg/golang"
	"github.com/u-root/mkuimage/uimage"
	"github.com/u-root/uio/llog"
)

// Module is the import path of the bootbench module.
const Module = "github.com/bootbench/bootbench"

// Spec is everything that decides the image's bytes.
type Spec struct {
	Arch   string // GOARCH
	GOARM  string // for arm: 5, 6, 7
	GOMIPS string // for mips/mipsle: "softfloat" (routers have no FPU emulation)
	Source string // directory of the bootbench module
}

// Image is a built (or cached) initramfs.
type Image struct {
	Path     string // the cpio archive
	Size     int64
	GzipSize int64  // what it would take compressed, for the fit on small boards
	Digest   string // sha256 of the cpio, hex
	Cached   bool
	Took     time.Duration
}

// Arches lists the architectures an image can be built for.
var Arches = []string{"amd64", "386", "arm64", "arm", "mips", "mipsle", "mips64", "mips64le", "riscv64", "ppc64le"}

func (s Spec) env() []string {
	env := []string{"GOOS=linux", "GOARCH=" + s.Arch, "CGO_ENABLED=0"}
	if s.GOARM != "" {
		env = append(env, "GOARM="+s.GOARM)
	}
	if s.GOMIPS != "" {
		env = append(env, "GOMIPS="+s.GOMIPS)
	}
	return env
}

func (s Spec) validate() error {
	for _, a := range Arches {
		if a == s.Arch {
			return nil
		}
	}
	if s.Arch == "ppc" || s.Arch == "powerpc" {
		return fmt.Errorf("arch %q: Go has no 32-bit PowerPC port, so no Go init can run on such a board", s.Arch)
	}
	return fmt.Errorf("unknown arch %q (supported: %s)", s.Arch, strings.Join(Arches, ", "))
}

// Build returns the image for spec, from cacheDir when its inputs are
// unchanged.
func Build(ctx context.Context, spec Spec, cacheDir string) (*Image, error) {
	start := time.Now()
	if err := spec.validate(); err != nil {
		return nil, err
	}
	if spec.Arch == "mips" || spec.Arch == "mipsle" {
		if spec.GOMIPS == "" {
			spec.GOMIPS = "softfloat"
		}
	}
	key, err := inputDigest(ctx, spec)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("image cache: %w", err)
	}
	out := filepath.Join(cacheDir, fmt.Sprintf("initramfs-%s-%s.cpio", spec.Arch, key[:16]))
	if _, err := os.Stat(out); err == nil {
		img, err := describe(out)
		if err != nil {
			return nil, err
		}
		img.Cached, img.Took = true, time.Since(start)
		return img, nil
	}

	tmp, err := os.MkdirTemp(cacheDir, ".build-")
	if err != nil {
		return nil, fmt.Errorf("image build dir: %w", err)
	}
	defer os.RemoveAll(tmp)

	// benchinit is built on its own, not in u-root's busybox binary: busybox
	// mode turns inlining off, and the benchmark must run at full speed.
	benchinit := filepath.Join(tmp, "benchinit")
	gobuild := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags=-s -w -buildid=", "-o", benchinit, "./cmd/benchinit")
	gobuild.Dir = spec.Source
	gobuild.Env = append(os.Environ(), spec.env()...)
	if out, err := gobuild.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build benchinit for %s: %w\n%s", spec.Arch, err, out)
	}

	cpio := filepath.Join(tmp, "initramfs.cpio")
	var logBuf bytes.Buffer
	l := llog.New(slog.LevelWarn, llog.WritePrintf(&logBuf))
	restore := setenv(spec) // u-root reads GOARM/GOMIPS from the process environment
	err = uimage.Create(l,
		uimage.WithReplaceEnv(golang.Default(golang.DisableCGO(), golang.WithGOARCH(spec.Arch), golang.WithWorkingDir(spec.Source))),
		uimage.WithBaseArchive(uimage.DefaultRamfs()),
		uimage.WithBusyboxCommands("github.com/u-root/u-root/cmds/core/init"),
		uimage.WithInit("init"),
		uimage.WithFiles(benchinit+":bin/benchinit"),
		uimage.WithUinitCommand("/bin/benchinit"),
		uimage.WithSkipLDD(),
		uimage.WithTempDir(tmp),
		uimage.WithCPIOOutput(cpio),
	)
	restore()
	if err != nil {
		return nil, fmt.Errorf("build initramfs for %s: %w\n%s", spec.Arch, err, logBuf.String())
	}
	if err := os.Rename(cpio, out); err != nil {
		return nil, fmt.Errorf("store image in cache: %w", err)
	}
	img, err := describe(out)
	if err != nil {
		return nil, err
	}
	img.Took = time.Since(start)
	return img, nil
}

// setenv sets GOARM/GOMIPS for the duration of one build and returns the
// function that puts the previous values back.
func setenv(s Spec) func() {
	type kv struct{ k, v string }
	var old []kv
	for _, e := range []kv{{"GOARM", s.GOARM}, {"GOMIPS", s.GOMIPS}} {
		prev, had := os.LookupEnv(e.k)
		if had {
			old = append(old, kv{e.k, prev})
		} else {
			old = append(old, kv{e.k, ""})
		}
		if e.v != "" {
			os.Setenv(e.k, e.v)
		} else {
			os.Unsetenv(e.k)
		}
	}
	return func() {
		for _, e := range old {
			if e.v == "" {
				os.Unsetenv(e.k)
			} else {
				os.Setenv(e.k, e.v)
			}
		}
	}
}

func describe(path string) (*Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read image: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	cw := &countWriter{}
	zw, _ := gzip.NewWriterLevel(cw, gzip.BestCompression)
	n, err := io.Copy(io.MultiWriter(h, zw), f)
	if err != nil {
		return nil, fmt.Errorf("read image: %w", err)
	}
	zw.Close()
	return &Image{Path: path, Size: n, GzipSize: cw.n, Digest: hex.EncodeToString(h.Sum(nil))}, nil
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// inputDigest hashes everything that decides the image's bytes: the target,
// the toolchain, the module's requirements and the Go source of every package
// of this module that benchinit is built from (go list -deps), so a change to
// the host side does not rebuild the board's image.
func inputDigest(ctx context.Context, spec Spec) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "bootbench-initramfs v1\n%s\n%s\n%s\n", spec.Arch, spec.GOARM, spec.GOMIPS)
	gover, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("find the Go toolchain (needed to build images): %w", err)
	}
	fmt.Fprintf(h, "%s", gover)
	list := exec.CommandContext(ctx, "go", "list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}", "./cmd/benchinit")
	list.Dir = spec.Source
	list.Env = append(os.Environ(), spec.env()...)
	out, err := list.Output()
	if err != nil {
		return "", fmt.Errorf("list benchinit's packages: %w", err)
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

// FindSource locates the bootbench module: $BOOTBENCH_SRC, else the first
// directory at or above the working directory, or the executable's, whose
// go.mod declares the module.
func FindSource() (string, error) {
	if s := os.Getenv("BOOTBENCH_SRC"); s != "" {
		return s, nil
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, dir := range starts {
		for d := dir; ; d = filepath.Dir(d) {
			b, err := os.ReadFile(filepath.Join(d, "go.mod"))
			if err == nil && strings.HasPrefix(string(b), "module "+Module+"\n") {
				return d, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", errors.New("cannot find the bootbench source to build the image from: run from the source tree or set BOOTBENCH_SRC")
}
