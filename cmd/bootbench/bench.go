package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/internal/kernels"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/rig"
)

// loadBoard finds the board by name in the inventory (flag, else the
// default places) or among the virtual boards.
func loadBoard(ctx context.Context, name, inventoryFlag string) (boards.Board, *boards.Inventory, error) {
	var inv *boards.Inventory
	if path := boards.InventoryPath(inventoryFlag); path != "" {
		var err error
		if inv, err = boards.LoadInventory(ctx, path); err != nil {
			return boards.Board{}, nil, inventoryErr(err)
		}
	}
	b, err := boards.Resolve(name, inv)
	if err != nil {
		return boards.Board{}, nil, usageErr("%v", err)
	}
	return b, inv, nil
}

// inventoryErr is how a command ends when its inventory did not load: bad
// input (exit 2), or Ctrl-C while it loaded (130).
func inventoryErr(err error) error {
	if errors.Is(err, context.Canceled) {
		return &exitError{code: 130, err: fmt.Errorf("interrupted: %w", err)}
	}
	return usageErr("%v", err)
}

// builders make what a plan boots, in the cache: Debian's kernels, their
// modules, images from src (or the prebuilt set when src is "").
func builders(src string) plan.Builders {
	return plan.Builders{
		Kernels: func(ctx context.Context, k boards.DebianKernel) (string, error) {
			if k.Build != "" {
				say := func(step string) { rig.SetupNote(os.Stderr, "kernel", "%s", step) }
				return kernels.Built(ctx, cacheDir(), kernels.Variant(k.Build), say)
			}
			return kernels.Debian(ctx, cacheDir(), src, k.DebianArch, k.Flavour)
		},
		Modules: func(ctx context.Context, kernel string, names []string) ([]string, error) {
			return kernels.Modules(ctx, cacheDir(), kernel, benchinitModulesDir, names)
		},
		// A build from source takes half a minute or more: say so while
		// it runs (a cache hit says nothing).
		BuildImage: func(ctx context.Context, spec initramfs.Spec, cache string) (*initramfs.Image, error) {
			spec.Progress = func(step string) { rig.SetupNote(os.Stderr, "image", "%s", step) }
			return imagesBuilt.build(ctx, spec, cache)
		},
		CacheDir: cacheDir(),
		RaspberryPi: func(ctx context.Context, kernel string, rp plan.RaspberryPi) (map[string]string, error) {
			return raspberryPiFiles(ctx, src, kernel, rp)
		},
	}
}

// builtImages are the images one command has built or found, by spec.
// Finding even a cached image asks the go command about the source tree
// and hashes it (seconds on a busy host), and a command takes the same
// image for its fit check and for every run of its plan: it looks once.
type builtImages struct {
	mu   sync.Mutex
	done map[string]initramfs.Image
}

var imagesBuilt = &builtImages{done: map[string]initramfs.Image{}}

func (bi *builtImages) build(ctx context.Context, spec initramfs.Spec, cache string) (*initramfs.Image, error) {
	key := strings.Join(append([]string{cache, spec.Arch, spec.GOARM, spec.GOMIPS, spec.Source, spec.Bench, spec.BenchCmd, spec.Sysroot, spec.Prebuilt}, spec.Add...), "\x00")
	bi.mu.Lock()
	defer bi.mu.Unlock()
	if img, ok := bi.done[key]; ok {
		if st, err := os.Stat(img.Path); err == nil && st.Size() == img.Size {
			img.Cached, img.Took = true, 0
			return &img, nil
		}
	}
	img, err := initramfs.Build(ctx, spec, cache)
	if err != nil {
		return nil, err
	}
	bi.done[key] = *img
	return img, nil
}

// benchinitModulesDir is where benchinit loads the image's kernel modules
// from (its RouteModulesDir).
const benchinitModulesDir = "lib/modules/bootbench"
