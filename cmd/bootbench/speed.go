package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/bootbench/bootbench/speed"
)

const speedSynopsis = "speed [--seconds S] [--algs a,b]"

// cmdSpeed runs the built-in suite on this machine, printing what a board
// prints, so it can be imported and compared with the host's own openssl.
func cmdSpeed(ctx context.Context, args []string) error {
	fs := newCommand("speed", speedSynopsis, "Runs the built-in benchmark suite here, in openssl 3's output layout\n"+
		"(bootbench import reads it).")
	seconds := fs.Float64("seconds", 3, "seconds per algorithm and block size")
	algs := fs.String("algs", "", "algorithms, comma separated (default: the suite's default set; 'all' for every one)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := checkSeconds("speed", *seconds); err != nil {
		return err
	}
	opts := speed.Options{Duration: time.Duration(*seconds * float64(time.Second)), Algorithms: splitList(*algs)}
	if *algs == "all" {
		opts.Algorithms = speed.Algorithms()
	}
	out := &countingWriter{w: os.Stdout}
	err := speed.Run(ctx, out, opts)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return &exitError{code: 130, err: errors.New("speed: interrupted; no tables printed")}
	case out.n == 0:
		// speed.Run checks its options before it writes anything.
		return usageErr("%s", speedErr(err))
	}
	return speedErr(err)
}

// speedErr says "speed:" once: the suite's own errors already do.
func speedErr(err error) error {
	if strings.HasPrefix(err.Error(), "speed: ") {
		return err
	}
	return fmt.Errorf("speed: %w", err)
}

// countingWriter counts what went through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
