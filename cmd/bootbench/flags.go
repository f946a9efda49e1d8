package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/bootbench/bootbench/internal/redact"
	"github.com/bootbench/bootbench/results/store"
)

// helpOut is where --help goes.
var helpOut io.Writer = os.Stdout

// newFlags makes a flag set whose errors come back as usage errors (exit 2)
// and whose --help prints the command's own text. The flag package calls
// Usage on every parse error too, before it returns the error: Usage does
// nothing, so a bad value is answered in one line, not under the whole
// usage; --help prints the text in parseFlags.
func newFlags(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	helpTexts[fs] = synopsis
	return fs
}

// helpTexts are the flag sets' usage texts, for printHelp.
var helpTexts = map[*flag.FlagSet]string{}

// printHelp prints a command's usage text and its flags to helpOut.
func printHelp(fs *flag.FlagSet) {
	fmt.Fprintf(helpOut, "Usage: bootbench %s\n\n", helpTexts[fs])
	fs.SetOutput(helpOut)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// parseFlags parses args allowing flags after positional arguments
// ("results show RUN --transcript"), which the flag package alone does not.
func parseFlags(fs *flag.FlagSet, args []string) error {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printHelp(fs)
				return errHelpShown
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
	return fs.String("db", "", "results store: a file, or postgres://USER@HOST/DATABASE (default $BOOTBENCH_DB, else $XDG_DATA_HOME/bootbench/results.db);\n"+
		"a password goes in ~/.pgpass or $PGPASSWORD, or with the URL in $BOOTBENCH_DB: on the command line every user sees it in ps")
}

// noArgs refuses positional arguments to a command that takes none, so a
// stray word is never silently ignored.
func noArgs(fs *flag.FlagSet, synopsis string) error {
	if fs.NArg() > 0 {
		return usageErr("%s: unexpected argument %q (usage: bootbench %s)", fs.Name(), fs.Arg(0), synopsis)
	}
	return nil
}

// storePath is the store a command line names, path ("" for the
// default); a password in it is warned about, once.
func storePath(path string) string {
	if path == "" {
		return store.DefaultPath()
	}
	if store.IsURL(path) && redact.Has(path) {
		warnPassword.Do(func() {
			fmt.Fprintf(os.Stderr, "bootbench: warning: the password in %s is visible to every user of this host (ps); "+
				"put it in ~/.pgpass or $PGPASSWORD, or the whole URL in $BOOTBENCH_DB\n", store.DisplayName(path))
		})
	}
	return path
}

var warnPassword sync.Once

// The openStore functions return the store and its name for messages: the
// path, or the URL with its password hidden.

// openStore opens the results store for writing, creating it if needed.
func openStore(path string) (*store.Store, string, error) {
	path = storePath(path)
	s, err := store.Open(path)
	return s, store.DisplayName(path), storeErr(err)
}

// openStoreChecked is openStore for commands that must not write into a
// damaged store.
func openStoreChecked(path string) (*store.Store, string, error) {
	path = storePath(path)
	s, err := store.OpenChecked(path)
	return s, store.DisplayName(path), storeErr(err)
}

// openStoreReadOnly opens the results store for reading: it never creates
// or writes one, so it works on a store the user may not write.
func openStoreReadOnly(path string) (*store.Store, string, error) {
	path = storePath(path)
	s, err := store.OpenReadOnly(path)
	return s, store.DisplayName(path), storeErr(err)
}

// storeErr makes a store that cannot be used as given (missing for a
// reader, not ours, read-only for a writer, damaged) a usage error: the
// --db given is the problem, and the error says what to do.
func storeErr(err error) error {
	var se *store.StoreError
	if errors.As(err, &se) {
		return &exitError{code: 2, err: err}
	}
	return err
}

// storeFailure turns SQLite finding the store damaged while reading it
// into an error that names the store and what to do.
func storeFailure(path string, err error) error {
	var se *store.StoreError
	if errors.As(err, &se) {
		return storeErr(err) // it names the store, and says what to do
	}
	if store.IsDamaged(err) {
		return &exitError{code: 2, err: fmt.Errorf("results store %s is damaged (%v): see bootbench results check --db %s", path, err, path)}
	}
	return storeErr(err)
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

// command is the preamble every command shares: a flag set whose --help
// prints the command's text, parsed with flags allowed after positional
// arguments, stray arguments refused where it takes none, and the results
// store (--db) where it reads or writes one.
type command struct {
	*flag.FlagSet
	synopsis string
	db       *string
}

// newCommand starts command name: its usage line is synopsis, and --help
// adds help ("" for none).
func newCommand(name, synopsis, help string) *command {
	text := synopsis
	if help != "" {
		text += "\n\n" + help
	}
	return &command{FlagSet: newFlags(name, text), synopsis: synopsis}
}

// storeFlag gives the command --db.
func (c *command) storeFlag() { c.db = dbFlag(c.FlagSet) }

// parse reads the flags of a command that takes no positional arguments.
func (c *command) parse(args []string) error {
	if err := parseFlags(c.FlagSet, args); err != nil {
		return err
	}
	return noArgs(c.FlagSet, c.synopsis)
}

// parseArgs reads the flags of a command that takes positional arguments,
// which it checks itself.
func (c *command) parseArgs(args []string) error { return parseFlags(c.FlagSet, args) }

// readStore opens --db's store for reading only.
func (c *command) readStore() (*store.Store, string, error) { return openStoreReadOnly(*c.db) }

// writeStore opens --db's store for writing, creating it if needed.
func (c *command) writeStore() (*store.Store, string, error) { return openStore(*c.db) }

// groupHelp answers --help, -h and help for a command with subcommands
// (results, boards, image), as every other command answers --help: it
// prints text for the group itself, and makes "help SUB" into
// "SUB --help". ok is false when args ask for no help; sub is the command
// line to run instead, nil when the help is printed.
func groupHelp(args []string, text string) (sub []string, ok bool) {
	switch args[0] {
	case "-h", "--help", "help":
	default:
		return nil, false
	}
	if args[0] == "help" && len(args) > 1 {
		return append(slices.Clone(args[1:]), "--help"), true
	}
	fmt.Fprint(helpOut, text)
	return nil, true
}
