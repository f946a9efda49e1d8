//go:build !bootbench_gofix_usleep

package main

// runtimeFix is empty: this benchinit's runtime is the toolchain's own,
// right on every architecture but MIPS (see initramfs/gofix).
const runtimeFix = ""
