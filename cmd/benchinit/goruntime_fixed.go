//go:build bootbench_gofix_usleep

package main

// runtimeFix is the correction of Go's runtime this benchinit was built
// with (initramfs/gofix): the image builder sets the tag with the overlay.
const runtimeFix = "mips-usleep"
