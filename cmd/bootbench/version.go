package main

import (
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/bootbench/bootbench/initramfs"
)

// cmdVersion prints this build, the Go it was built with, and where the
// images it would boot come from: what a bug report needs first.
func cmdVersion(args []string) error {
	fs := newCommand("version", "version\n\n"+
		"Prints this bootbench's version, the Go it was built with, and where it would\n"+
		"take the images it boots from: the source tree with the go command on PATH,\n"+
		"or a prebuilt set (and which).", "")
	if err := fs.parse(args); err != nil {
		return err
	}
	src, _ := initramfs.FindSource()
	fmt.Printf("bootbench %s, built with %s for %s/%s\n", initramfs.MadeBy(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Printf("images    %s\n", initramfs.ImageOrigin(src, filepath.Join(cacheDir(), "images")))
	return nil
}
