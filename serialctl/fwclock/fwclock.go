// Package fwclock sets a board's CPU clock through the board's own firmware,
// over its console, as a person at the bench would type it: RouterBOOT's
// setup menu (with a one-time Ethernet boot beside the clock) and CFE's
// NVRAM. A dialect finds what it needs by the firmware's own words, not by
// fixed letters or columns; when the firmware words it otherwise, it
// refuses with the text it saw rather than guess.
package fwclock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/serialctl"
)

// Console is a board's console as a run has it: the transcript searched
// from an offset, and keys typed.
type Console interface {
	Expect(ctx context.Context, from int, text string) (int, error)
	TranscriptFrom(off int) []byte
	Write(p []byte) (int, error)
}

// Say reports a step taken, for the run's progress.
type Say func(format string, args ...any)

// Setter sets the clock from the board's power-on: from is the offset of
// the transcript where the power-on's output starts; the offset returned
// is where the netboot's own steps take over.
type Setter interface {
	SetClock(ctx context.Context, from int, mhz boards.MHz) (next int, err error)
}

// For is the setter of a clock method, on con; nil for a method that is
// not typed into a firmware. bootTimeout bounds the wait for the
// firmware's first words after power-on.
func For(m boards.ClockMethod, con Console, say Say, bootTimeout time.Duration) Setter {
	d := dialog{con: con, say: say, bootTimeout: bootTimeout, stepTimeout: stepTimeout}
	switch m {
	case boards.ClockRouterBOOTMenu:
		return RouterBOOT{d}
	case boards.ClockCFENVRAM:
		return CFE{d}
	}
	return nil
}

// stepTimeout is how long a firmware has to answer a key or a command:
// its menus and prompts answer at once; CFE's commit writes flash.
const stepTimeout = 20 * time.Second

// A Refusal is firmware output a dialect does not recognize: a version
// that words its menu otherwise, or a board that is not what its profile
// says. Nothing was changed on the board past what Said lists.
type Refusal struct {
	Firmware string // "RouterBOOT's setup menu"
	Missing  string // what was looked for: `an item "cpu frequency"`
	Quote    string // what the firmware printed, on one line
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("%s has no %s; it printed: %s", r.Firmware, r.Missing, r.Quote)
}

// ErrNoAnswer is a firmware that did not get to where the dialect needs
// it: not booting, another firmware, a console at the wrong speed.
var ErrNoAnswer = errors.New("the firmware did not answer")

// dialog is the typing and reading both dialects do.
type dialog struct {
	con                      Console
	say                      Say
	bootTimeout, stepTimeout time.Duration
}

// await waits for text after offset from and returns the offset after it
// and what came before it.
func (d dialog) await(ctx context.Context, from int, text string, timeout time.Duration) (int, string, error) {
	ectx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	next, err := d.con.Expect(ectx, from, text)
	if ctx.Err() != nil {
		return from, "", ctx.Err()
	}
	if err != nil {
		seen := serialctl.Printable(d.con.TranscriptFrom(from))
		return from, "", fmt.Errorf("%w: %q did not come within %s (after %q)", ErrNoAnswer, text, timeout, clipTail(seen, 100))
	}
	before := string(d.con.TranscriptFrom(from))
	before = before[:max(0, min(len(before), next-from-len(text)))]
	return next, before, nil
}

func (d dialog) write(s string) error {
	if _, err := d.con.Write([]byte(s)); err != nil {
		return fmt.Errorf("type %q: %w", strings.TrimSpace(s), err)
	}
	return nil
}

// oneLine is printed text as one line: its lines' printable text joined
// by " | ", blank ones left out.
func oneLine(text string) string {
	var parts []string
	for _, l := range strings.Split(text, "\n") {
		if p := strings.TrimSpace(serialctl.Printable([]byte(l))); p != "" {
			parts = append(parts, p)
		}
	}
	return clip(strings.Join(parts, " | "), 600)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func clipTail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
