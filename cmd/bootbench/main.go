// Command bootbench netboots bench boards into an image that runs only a
// benchmark, reads the results off the serial console, and records and
// compares them. See `bootbench help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/bootbench/bootbench/benchmark"
	"github.com/bootbench/bootbench/cmd/bootbench/internal/nocache"
	"github.com/bootbench/bootbench/internal/redact"
	"github.com/bootbench/bootbench/rig"
)

var usage = `bootbench — netboot a board, run only the benchmark, keep the numbers

Usage:
  bootbench run      [--board NAME] [--inventory FILE] [--proxy] [--clock MHZ[,MHZ...]] [--allow-overvoltage]
                     [--reps N | --reps auto [--target-ci PCT] [--max-reps N]]   # see "How many runs?"
                     [--bench ` + benchNames + `] [--db PATH] [--seconds S] [--algs a,b] [--transport http|tftp]
                     [--kernel FILE] [--append ARGS] [--boot-timeout D] [--run-timeout D] [--retries N]
                     [--route-sizes 64,...] [--route-configs plain,...] [--route-udp-rate 50M]
                     [--route-window SIZE] [--route-streams N]   # see "Routing"
  bootbench console  BOARD [--inventory FILE] [--write]
  bootbench console  --replay FILE|- [--board PROFILE] [--format text|json]   # see "Replaying a console log"
  bootbench serve    [--inventory FILE] [--db PATH] [--proxy] [--once BOARD] [--log text|json]
                     [--http [HOST:]PORT [--http-allow-remote]]   # see "The bench page"
  bootbench ci       --board NAME --baseline FILE.json|board=B,clock=MHZ[,bench=B][,since=DATE]
                     --max-regression PCT [--reps N | --reps auto [--target-ci PCT] [--max-reps N]]
                     [--metrics GLOB,...] [--junit FILE] [--summary FILE]
                     [run's flags: --inventory, --clock, --bench, --seconds, ...]
  bootbench import   --board NAME --clock MHZ [--format auto|openssl|openssl-mr|iperf|iperf3|dd]
                     [--table N] [--tool-version V] [--rep N] [--force | --skip-existing] [--new-board] FILE...
  bootbench results  list [--board NAME] [--clock MHZ] [--since DATE] [--until DATE] [--limit N] | show RUN [--transcript | --raw] | check
  bootbench results  push [--to postgres://USER@HOST/DATABASE [--board NAME]]   # deliver the spool; copy runs to a shared store
  bootbench results  compare --by clock|board [--board NAME] [--boards BOARD[@MHZ],...]
                     [--baseline [BOARD]@MHZ] [--clock MHZ] [--include-throttled] [--target-ci PCT] [--format text|json]
  bootbench results  export [--format json|openwrt|csv|gobench|html] [--with-setting] [--board NAME] [--clock MHZ]
                     [--since DATE] [--until DATE] [--skip RUN,...] [-o OUT]
  bootbench boards   list | show NAME | prepare [--bench NAME] BOARD...   # build what boards boot, ahead
  bootbench image    build --arch GOARCH|DEBIAN_ARCH [--bench ` + benchNames + `|NAME] [--bench-cmd "..."] [--add HOST:IMG]...
                     [--sysroot DIR] [--format cpio|cpio.gz|cpio.xz|uimage|elf] [--compress gz|xz|none] [--goarm 5|6|7] [--gomips softfloat|hardfloat]
                     [--kernel FILE] [--cmdline ARGS] [--ram MIB]
                     [--prebuilt DIR] -o OUT
  bootbench image    prebuild [--arch A,B,...] [-o DIR]   # base images for running without the source tree or Go
  bootbench speed    [--seconds S] [--algs a,b|all]      # the built-in suite on this machine
  bootbench tftp     --root DIR --listen IP[:PORT]       # bootbench's TFTP server alone, read-only, until Ctrl-C
  bootbench version                                      # this build, its Go, and where its images come from

Run 'bootbench COMMAND --help' (or 'bootbench help COMMAND') for a command's flags.

The results store is --db, else $BOOTBENCH_DB, else $XDG_DATA_HOME/bootbench/results.db:
a file, or a store shared by several bench hosts, postgres://USER@HOST/DATABASE. Its
password goes in ~/.pgpass or $PGPASSWORD (or with the URL in $BOOTBENCH_DB), not on
the command line, where every user of the host sees it in ps.
Exit status: 0 success, 1 a failed run, 2 bad usage or input, 130 interrupted.
`

// benchNames are the benchmarks, as the usage lists them.
var benchNames = strings.Join(benchmark.Names(), "|")

// exitError carries an exit status up to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

func main() {
	nocache.Restore()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := dispatch(ctx, os.Args[1:])
	if err == nil {
		return
	}
	code := 1
	var ee *exitError
	var se *rig.SetupError
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case errors.As(err, &se):
		code = 2 // a setup no run would get past: the user's to fix
	}
	if errors.Is(err, errSaid) {
		// Said already, on its own lines.
	} else if !errors.Is(err, errHelpShown) {
		// Whatever an error quotes, a URL's password is not printed.
		fmt.Fprintf(os.Stderr, "bootbench: %s\n", redact.Text(err.Error()))
	} else {
		code = 0
	}
	stop()
	os.Exit(code)
}

var errHelpShown = errors.New("help shown")

func dispatch(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return usageErr("no command given")
	}
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:])
	case "results":
		return cmdResults(ctx, args[1:])
	case "import":
		return cmdImport(ctx, args[1:])
	case "ci":
		return cmdCI(ctx, args[1:])
	case "serve":
		return cmdServe(ctx, args[1:])
	case "console":
		return cmdConsole(ctx, args[1:])
	case "boards":
		return cmdBoards(ctx, args[1:])
	case "image":
		return cmdImage(ctx, args[1:])
	case "speed":
		return cmdSpeed(ctx, args[1:])
	case "tftp":
		return cmdTFTP(ctx, args[1:])
	case "help", "-h", "--help":
		if len(args) > 1 {
			// "bootbench help import" is "bootbench import --help".
			return dispatch(ctx, append(slices.Clone(args[1:]), "--help"))
		}
		fmt.Print(usage)
		return nil
	case "version", "--version":
		return cmdVersion(args[1:])
	}
	return usageErr("unknown command %q (commands: run, serve, ci, console, import, results, boards, image, speed, tftp, version; see 'bootbench help')", args[0])
}
