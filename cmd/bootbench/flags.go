package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bootbench/bootbench/results"
)

// newFlags makes a flag set whose errors come back as usage errors (exit 2)
// and whose --help prints the command's own text.
func newFlags(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(os.Stdout, "Usage: bootbench %s\n\n", synopsis)
		fs.SetOutput(os.Stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parseFlags parses args allowing flags after positional arguments
// ("results show RUN --transcript"), which the flag package alone does not.
func parseFlags(fs *flag.FlagSet, args []string) error {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return errHelpShown // the flag package has printed fs.Usage
			}
			return usageErr("%s: %v (see 'bootbench %s --help')", fs.Name(), err, fs.Name())
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	// Leave the positional arguments where fs.Args() finds them.
	return fs.Parse(append([]string{"--"}, positional...))
}

func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", "", "results store (default $BOOTBENCH_DB, else $XDG_DATA_HOME/bootbench/results.db)")
}

func openStore(path string) (*results.Store, string, error) {
	if path == "" {
		path = results.DefaultPath()
	}
	s, err := results.Open(path)
	if err != nil {
		return nil, path, fmt.Errorf("open results store %s: %w", path, err)
	}
	return s, path, nil
}

// cacheDir holds images, kernels and run directories.
func cacheDir() string {
	if d := os.Getenv("BOOTBENCH_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return d + "/bootbench"
	}
	return ".bootbench-cache"
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
