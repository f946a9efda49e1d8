package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/bootbench/bootbench/boards"
)

// WriteText writes the report for people: where the log came from and
// what was undone, one fact a line with its line number, one line per
// boot, and the verdict with each problem at its line.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "console log %s: %s", r.File, lines(r.Lines))
	if len(r.Undone) > 0 {
		fmt.Fprintf(&b, " (undone: %s)", strings.Join(r.Undone, "; "))
	}
	b.WriteString("\n")
	if r.Cut {
		fmt.Fprintf(&b, "its last line, %d, is cut off\n", r.Lines)
	}
	b.WriteString(r.heldTo() + "\n\n")
	lw := len(strconv.Itoa(r.Lines))
	sw := 0
	for _, f := range r.Facts {
		sw = max(sw, len(f.Stage))
	}
	for _, f := range r.Facts {
		fmt.Fprintf(&b, "line %*d  %-*s  %s\n", lw, f.Line, sw, f.Stage, f.Text)
	}
	if len(r.Facts) == 0 {
		b.WriteString("no stage of a boot in it\n")
	}
	b.WriteString("\n")
	for i, bt := range r.Boots {
		fmt.Fprintf(&b, "boot %d, lines %d-%d: %s\n", i+1, bt.FirstLine, bt.LastLine, bt.summary())
	}
	b.WriteString(r.verdict(lw))
	_, err := io.WriteString(w, b.String())
	return err
}

func lines(n int) string {
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}

// heldTo says which profile the log was held to, and what of it.
func (r *Report) heldTo() string {
	p := r.profile
	if p == nil {
		return "not held to a board model (--board PROFILE holds it to one)"
	}
	what := []string{"boots by " + string(p.Boot)}
	switch l := p.ClockLimits; {
	case len(p.Clocks) > 0:
		what = append(what, "clocks "+p.Clocks.Joined(", "))
	case l != nil:
		what = append(what, "clocks "+boards.Clocks{l.Min, l.Max}.Joined(" to "))
	case p.DefaultClock > 0:
		what = append(what, "clock "+p.DefaultClock.String())
	}
	if p.BogoMIPSPerMHz > 0 {
		what = append(what, fmt.Sprintf("%g BogoMIPS per MHz", p.BogoMIPSPerMHz))
	}
	return fmt.Sprintf("held to board model %s (%s)", p.Name, strings.Join(what, "; "))
}

// summary is a boot in one line: its firmware, clock, netboot, kernel and
// BogoMIPS, and how it ended.
func (b Boot) summary() string {
	var s []string
	if b.Loader != "" {
		s = append(s, strings.TrimSpace(b.Loader+" "+b.Version))
	}
	if b.ClockMHz > 0 {
		s = append(s, b.ClockMHz.String()+" announced")
	}
	switch {
	case b.ThenLocal:
		s = append(s, "netboot failed, then its own storage")
	case b.Netboot != NetbootNone:
		s = append(s, "netboot "+string(b.Netboot))
	}
	if b.Kernel != "" {
		s = append(s, "kernel "+b.Kernel)
	}
	if b.BogoMIPS != "" {
		bm := b.BogoMIPS + " BogoMIPS"
		if b.BogoMIPSMHz > 0 {
			bm += " (" + b.BogoMIPSMHz.String() + ")"
		}
		s = append(s, bm)
	}
	end := map[End]string{EndLog: "the log ends", EndNextBoot: "then the next boot",
		EndReset: "then the board reset", EndPanic: "the kernel panicked and the board rebooted"}[b.End]
	return strings.Join(append(s, end), "; ")
}

// verdict is the report's last lines: it fits, or each problem by line.
func (r *Report) verdict(lw int) string {
	if r.OK() {
		if r.profile == nil {
			return "no problems: no failure in the log\n"
		}
		return fmt.Sprintf("fits board model %s: nothing in the log contradicts it\n", r.profile.Name)
	}
	var b strings.Builder
	n := len(r.Problems)
	word := "problems"
	if n == 1 {
		word = "problem"
	}
	if r.profile != nil {
		fmt.Fprintf(&b, "%d %s (held to board model %s):\n", n, word, r.profile.Name)
	} else {
		fmt.Fprintf(&b, "%d %s:\n", n, word)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "line %*d  %s\n", lw, p.Line, p.Text)
	}
	return b.String()
}

// WriteJSON writes the report for scripts: the Report's fields, indented,
// with a console's "<", ">" and "&" as they are.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
