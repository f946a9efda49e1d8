package replay

import (
	"bytes"
	"slices"
	"sort"
	"strings"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/serialctl/fwclock"
	"github.com/bootbench/bootbench/serialctl/pasted"
)

// A log in which someone entered RouterBOOT's setup menu by hand shows
// what the routerboot-menu dialect will meet on that board: the log is
// read as the dialect reads a live menu, and held to the profile's clocks.

// StageSetupMenu is a firmware's setup menu, seen in the log.
const StageSetupMenu Stage = "setup-menu"

// ProblemSetupMenu is a setup menu the dialect could not drive.
const ProblemSetupMenu ProblemKind = "setup-menu"

// menuLog keeps the log's text from the first line that shows a menu on.
type menuLog struct {
	first int
	text  strings.Builder
}

var menuMarks = [][]byte{[]byte("your choice:"), []byte("What do you want to configure?")}

func (m *menuLog) line(ln pasted.Line) {
	if m.first == 0 && slices.ContainsFunc(menuMarks, func(mark []byte) bool { return bytes.Contains(ln.Text, mark) }) {
		m.first = ln.N
	}
	m.text.Write(ln.Text)
	m.text.WriteString("\n")
}

// setupMenu reports the menu the log shows, if any: what the dialect
// would choose in it, a menu it could not drive, and a clock of the
// profile's that the menu does not offer.
func (w *walker) setupMenu() {
	if w.menu.first == 0 {
		return
	}
	seen, ok := fwclock.ReadRouterBOOTMenu(w.menu.text.String())
	if !ok {
		return
	}
	n := w.menu.first
	w.fact(Fact{Line: n, Stage: StageSetupMenu, Text: "RouterBOOT's setup menu, as bootbench reads it: " + seen.Summary()})
	if err := seen.Drivable(); err != nil {
		w.problem(n, ProblemSetupMenu, "bootbench could not drive this menu: %v", err)
	}
	if p := w.r.profile; p != nil && p.ClockMethod == boards.ClockRouterBOOTMenu && seen.Frequencies != nil {
		var missing boards.Clocks
		for _, c := range p.Clocks {
			if !slices.Contains(seen.Frequencies, c) {
				missing = append(missing, c)
			}
		}
		if len(missing) > 0 {
			w.problem(n, ProblemClock, "board model %s lists %s, which this cpu frequency menu does not offer (it offers %s)",
				p.Name, missing.Joined(", "), seen.Frequencies.Joined(", "))
		}
	}
	sort.SliceStable(w.r.Facts, func(i, j int) bool { return w.r.Facts[i].Line < w.r.Facts[j].Line })
	sort.SliceStable(w.r.Problems, func(i, j int) bool { return w.r.Problems[i].Line < w.r.Problems[j].Line })
}
