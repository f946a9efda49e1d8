package main

import (
	"context"
	"os"
	"time"

	"github.com/bootbench/bootbench/speed"
)

// cmdSpeed runs the built-in suite on this machine, printing what a board
// prints, so it can be imported and compared with the host's own openssl.
func cmdSpeed(ctx context.Context, args []string) error {
	fs := newFlags("speed", "speed [--seconds S] [--algs a,b]\n\n"+
		"Runs the built-in benchmark suite here, in openssl 3's output layout\n"+
		"(bootbench import reads it).")
	seconds := fs.Float64("seconds", 3, "seconds per algorithm and block size")
	algs := fs.String("algs", "", "algorithms, comma separated (default: the suite's default set; 'all' for every one)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	opts := speed.Options{Duration: time.Duration(*seconds * float64(time.Second)), Algorithms: splitList(*algs)}
	if *algs == "all" {
		opts.Algorithms = speed.Algorithms()
	}
	if err := speed.Run(ctx, os.Stdout, opts); err != nil {
		return usageErr("speed: %v", err)
	}
	return nil
}
