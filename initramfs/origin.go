package initramfs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ImageOrigin says where Build would take base images from, for a user
// asking which images a run boots (bootbench version): the source tree
// src with the go command on PATH, else the first prebuilt set found, else
// that there is none and where it was looked for. cacheDir is as Build
// takes it.
func ImageOrigin(src, cacheDir string) string {
	noGo := errors.New("no bootbench source tree (run from it or set BOOTBENCH_SRC)")
	if src != "" {
		var goroot string
		if goroot, noGo = toolchainRoot(); noGo == nil {
			return fmt.Sprintf("built from the source tree %s with %s (the go command on PATH)", src, goVersion(goroot))
		}
	}
	dirs := prebuiltDirs(Spec{}, cacheDir)
	for _, d := range dirs {
		m, err := ReadManifest(d)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Sprintf("none: %v, and %v", noGo, err)
		}
		images := "images"
		if len(m.Images) == 1 {
			images = "image"
		}
		return fmt.Sprintf("the prebuilt set in %s (%d %s, made by bootbench %s): %v", d, len(m.Images), images, m.MadeBy, noGo)
	}
	return fmt.Sprintf("none: %v, and no prebuilt set in %s", noGo, strings.Join(dirs, ", "))
}

// goVersion is the version of the toolchain at goroot, as its go command
// says it.
func goVersion(goroot string) string {
	out, err := exec.Command(filepath.Join(goroot, "bin", "go"), "env", "GOVERSION").Output()
	if v := strings.TrimSpace(string(out)); err == nil && v != "" {
		return v
	}
	return "Go in " + goroot
}
