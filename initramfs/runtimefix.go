package initramfs

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bootbench/bootbench/initramfs/gofix"
	"github.com/u-root/gobusybox/src/pkg/golang"
)

// StockRuntimeEnv, set to 1, builds MIPS images with Go's runtime as the
// toolchain has it, sleeps 1000 times too short. It exists for the test
// that shows what the correction changes (the board's sleep probe, the
// host's refusal); no run should be made with it.
const StockRuntimeEnv = "BOOTBENCH_STOCK_GO_RUNTIME"

func stockRuntime() bool { return os.Getenv(StockRuntimeEnv) == "1" }

// runtimeFixes are the corrected runtime files goroot's toolchain needs
// for arch (see gofix), none for an architecture whose runtime is right.
// It is read before the image's digest, which covers the corrected text:
// a toolchain that lacks the expected lines is refused even when the cache
// holds an image.
func runtimeFixes(goroot, arch string) ([]gofix.File, error) {
	if stockRuntime() {
		return nil, nil
	}
	return gofix.For(goroot, arch)
}

// buildOpts are what a corrected runtime adds to the base image's build.
type buildOpts struct {
	env   []golang.Opt
	flags []string
}

// fixedRuntime writes the overlay for fixes into its own folder of dir
// (not inside any package, where go build would compile the copies) and
// returns the flag that applies it and the build tag that tells benchinit
// its runtime was corrected, for its hello.
func fixedRuntime(dir string, spec Spec, fixes []gofix.File) (buildOpts, error) {
	if len(fixes) == 0 {
		return buildOpts{}, nil
	}
	fixDir := filepath.Join(dir, "gofix")
	if err := os.Mkdir(fixDir, 0o755); err != nil {
		return buildOpts{}, fmt.Errorf("image build dir: %w", err)
	}
	overlay, err := gofix.WriteOverlay(fixDir, fixes)
	if err != nil {
		return buildOpts{}, err
	}
	return buildOpts{
		env:   []golang.Opt{golang.WithBuildTag(gofix.BuildTag)},
		flags: []string{"-overlay=" + overlay},
	}, nil
}
