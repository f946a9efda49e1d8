package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/serialctl/pasted"
	"github.com/bootbench/bootbench/serialctl/replay"
)

// replayConsole is `console --replay FILE`: the log read as copying left
// it, run through the live console's detector, held to the profile if
// one is named. Bad input exits 2; a log with a failure or a
// contradiction, 1.
func replayConsole(file, profile, format string) error {
	if format != "text" && format != "json" {
		return usageErr("console: --format %q: say text or json", format)
	}
	var p *boards.Profile
	if profile != "" {
		pr, err := replayProfile(profile)
		if err != nil {
			return err
		}
		p = &pr
	}
	log, err := readLog(file)
	if err != nil {
		return err
	}
	r := replay.Run(file, log, p)
	if format == "json" {
		err = r.WriteJSON(os.Stdout)
	} else {
		err = r.WriteText(os.Stdout)
	}
	if err != nil {
		return err
	}
	if n := len(r.Problems); n > 0 {
		what := "a problem"
		if n > 1 {
			what = fmt.Sprintf("%d problems", n)
		}
		return &exitError{code: 1, err: fmt.Errorf("console --replay: %s shows %s (each at its line above)", file, what)}
	}
	return nil
}

// replayProfile is the board profile --board names, or a usage error
// that suggests the nearest one.
func replayProfile(name string) (boards.Profile, error) {
	ps, err := boards.All()
	if err != nil {
		return boards.Profile{}, err
	}
	var names []string
	for _, p := range ps {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	hint := " (see 'bootbench boards list')"
	if near := boards.Closest(name, names); near != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", near)
	}
	return boards.Profile{}, usageErr("console: --board %q is no board profile%s", name, hint)
}

// readLog reads the log at file ("-": stdin); what cannot be read or is
// no text log is bad input.
func readLog(file string) (*pasted.Log, error) {
	var in io.Reader = os.Stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, usageErr("console: --replay: %v", unwrapPath(err))
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.IsDir() {
			return nil, usageErr("console: --replay: %s is a directory, not a console log", file)
		}
		in = f
	}
	log, err := pasted.Read(in)
	switch {
	case errors.Is(err, pasted.ErrNotText):
		return nil, usageErr("console: --replay: %s is %v", file, err)
	case err != nil:
		return nil, usageErr("console: --replay: read %s: %v", file, unwrapPath(err))
	case len(log.Lines) == 0:
		return nil, usageErr("console: --replay: %s is empty", file)
	}
	return log, nil
}

// unwrapPath gives an *os.PathError's message as "open FILE: reason"
// once, without Go's wrapping repeated.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %s: %w", pe.Op, pe.Path, pe.Err)
	}
	return err
}
