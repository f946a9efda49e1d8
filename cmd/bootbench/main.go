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
	"strings"
	"syscall"

	"github.com/bootbench/bootbench/benchmark"
	"github.com/bootbench/bootbench/cmd/bootbench/internal/nocache"
	"github.com/bootbench/bootbench/internal/redact"
)

var usage = `bootbench — netboot a board, run only the benchmark, keep the numbers

Usage:
  bootbench run     [--board NAME] [--clock MHZ[,MHZ...]] [--reps N] [--bench ` + benchNames + `] [--db PATH] ...
  bootbench serve   [--inventory FILE] [--db PATH] [--proxy] [--once BOARD] [--log text|json]   # the bench daemon
  bootbench ci      --board NAME --baseline FILE.json|board=B,clock=MHZ --max-regression PCT [--reps N] [--junit FILE]
  bootbench console BOARD [--inventory FILE] [--write]   # a board's serial console, live
  bootbench console --replay FILE [--board PROFILE] [--format text|json]   # what bootbench sees in a saved log
  bootbench import  --board NAME --clock MHZ [--format auto|openssl|openssl-mr|iperf|iperf3|dd]
                    [--table N] [--tool-version V] [--rep N] [--force | --skip-existing] [--new-board] FILE...
  bootbench results list [--board NAME] | show RUN [--transcript | --raw] | check
  bootbench results compare --by clock|board [--board NAME] [--boards BOARD[@MHZ],...]
                    [--baseline [BOARD]@MHZ] [--clock MHZ] [--format text|json]
  bootbench results export --format openwrt|csv|json|gobench|html [--with-setting] [--board NAME] [--clock MHZ] [-o OUT]
  bootbench results push [--to postgres://USER@HOST/DATABASE [--board NAME]]   # deliver the spool; copy runs to a shared store
  bootbench boards  list | show NAME
  bootbench image   build --arch GOARCH [--bench ` + benchNames + `|NAME] [--bench-cmd "..."] [--add HOST:IMG]...
                    [--sysroot DIR] [--format cpio|cpio.gz|cpio.xz|uimage|elf] [--kernel FILE] [--ram MIB] -o OUT
  bootbench speed   [--seconds S] [--algs a,b|all]     # the built-in suite, on this machine
  bootbench tftp    --root DIR --listen ADDR           # serve DIR read-only by TFTP until Ctrl-C

Run 'bootbench COMMAND --help' for a command's flags.

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
	if errors.As(err, &ee) {
		code = ee.code
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
		return cmdBoards(args[1:])
	case "image":
		return cmdImage(ctx, args[1:])
	case "speed":
		return cmdSpeed(ctx, args[1:])
	case "tftp":
		return cmdTFTP(ctx, args[1:])
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	}
	return usageErr("unknown command %q (commands: run, serve, ci, console, import, results, boards, image, speed, tftp; see 'bootbench help')", args[0])
}
