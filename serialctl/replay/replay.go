// Package replay runs a saved serial console log through the detector a
// live console goes through (serialctl.Classify, the firmware's announced
// clock, the kernel's BogoMIPS, the netboot steps) and the clock rule the
// harness checks a run by (boards.ClockAgrees), and reports what
// bootbench would have seen: each stage with its line, and what in the
// log contradicts a board profile.
//
//	log, _ := pasted.Read(f)
//	r := replay.Run("boot.log", log, &profile) // nil: no profile to hold it to
//	r.WriteText(os.Stdout)                     // or r.WriteJSON
//	if !r.OK() { ... }                          // a failure, or a contradiction
package replay

import (
	"fmt"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/serialctl"
	"github.com/bootbench/bootbench/serialctl/pasted"
)

// Stage is what a fact is about, the column people read it by.
type Stage string

// The stages: the firmware's and kernel's marks as serialctl names them,
// and the facts around them.
const (
	StageFirmware      Stage = "firmware"
	StageClock         Stage = "clock"
	StageNetboot       Stage = "netboot"
	StageFirmwareError Stage = "firmware-error"
	StageHandoff       Stage = "handoff"
	StageKernel        Stage = "kernel"
	StageBogoMIPS      Stage = "bogomips"
	StagePanic         Stage = "panic"
	StageOops          Stage = "oops"
	StageBug           Stage = "bug"
	StageReset         Stage = "reset"
)

// Fact is one thing a console line says.
type Fact struct {
	Line  int    `json:"line"`
	Stage Stage  `json:"stage"`
	Text  string `json:"text"` // as people read it
	// Loader and Version name a firmware ("RouterBOOT", "2.41"); Release a
	// kernel.
	Loader  string `json:"loader,omitempty"`
	Version string `json:"version,omitempty"`
	Release string `json:"release,omitempty"`
	// MHz is the clock a firmware announced, or the one BogoMIPS imply.
	MHz      boards.MHz `json:"mhz,omitempty"`
	BogoMIPS string     `json:"bogomips,omitempty"`
	// Step is a netboot step's kind (serialctl.NetbootKind's names).
	Step string `json:"step,omitempty"`
}

// Problem is something in the log that a run would have failed on, or
// that contradicts the board profile.
type Problem struct {
	Line int         `json:"line"`
	Kind ProblemKind `json:"kind"`
	Text string      `json:"text"`
}

// ProblemKind is what a problem is about.
type ProblemKind string

// The problems: a contradiction of the profile (a firmware its boot
// method does not have, a clock it does not offer, BogoMIPS that do not
// confirm the clock) or a failure whatever the profile.
const (
	ProblemBootloader ProblemKind = "bootloader"
	ProblemClock      ProblemKind = "clock"
	ProblemBogoMIPS   ProblemKind = "bogomips"
	ProblemNetboot    ProblemKind = "netboot"
	ProblemPanic      ProblemKind = "panic"
	ProblemOops       ProblemKind = "oops"
	ProblemBug        ProblemKind = "bug"
	ProblemReset      ProblemKind = "reset"
)

// End is how a boot ends in the log.
type End string

// The ends.
const (
	EndLog      End = "log ends"  // the log ends in it
	EndNextBoot End = "next boot" // its firmware started again after a failed load
	EndReset    End = "reset"     // a firmware started again after the kernel had
	EndPanic    End = "panic"     // the kernel panicked and the board rebooted
)

// Outcome is how a boot's netboot went.
type Outcome string

// The outcomes.
const (
	NetbootNone       Outcome = "none"       // no netboot in the log
	NetbootOK         Outcome = "ok"         // the kernel came over the network
	NetbootFailed     Outcome = "failed"     // the netboot failed (and nothing came after)
	NetbootLocal      Outcome = "local"      // the firmware booted from its own storage
	NetbootIncomplete Outcome = "incomplete" // the log ends while the netboot goes on
)

// Boot is one boot in the log: from a firmware's first banner to the next
// boot's.
type Boot struct {
	FirstLine int        `json:"first_line"`
	LastLine  int        `json:"last_line"`
	Loader    string     `json:"bootloader,omitempty"`
	Version   string     `json:"version,omitempty"`
	ClockMHz  boards.MHz `json:"clock_mhz,omitempty"` // announced by the firmware
	Netboot   Outcome    `json:"netboot"`
	// ThenLocal is a failed netboot after which the firmware booted from
	// its own storage.
	ThenLocal bool   `json:"then_local,omitempty"`
	Kernel    string `json:"kernel,omitempty"`
	BogoMIPS  string `json:"bogomips,omitempty"`
	// BogoMIPSMHz is the clock the BogoMIPS imply at the profile's
	// BogoMIPS per MHz (0: no profile, or it knows none).
	BogoMIPSMHz boards.MHz `json:"bogomips_mhz,omitempty"`
	End         End        `json:"end"`
}

// Report is what bootbench would have seen in a log.
type Report struct {
	File     string    `json:"file"`
	Lines    int       `json:"lines"`
	Undone   []string  `json:"undone"`
	Cut      bool      `json:"cut"`
	Board    string    `json:"board,omitempty"` // the profile held to
	Facts    []Fact    `json:"facts"`
	Boots    []Boot    `json:"boots"`
	Problems []Problem `json:"problems"`
	Verdict  string    `json:"verdict"` // "ok" or "problems"
	profile  *boards.Profile
}

// OK says whether nothing in the log failed or contradicts the profile.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// Run replays log, holding it to p where p is not nil; file names the log
// in the report.
func Run(file string, log *pasted.Log, p *boards.Profile) *Report {
	r := &Report{File: file, Undone: append([]string{}, log.Undone...), Cut: log.Cut, profile: p,
		Facts: []Fact{}, Boots: []Boot{}, Problems: []Problem{}}
	if len(log.Lines) > 0 {
		r.Lines = log.Lines[len(log.Lines)-1].N
	}
	if p != nil {
		r.Board = p.Name
	}
	w := walker{r: r}
	for _, ln := range log.Lines {
		w.line(ln)
	}
	w.endBoot(w.last, EndLog)
	w.setupMenu()
	r.Verdict = "ok"
	if !r.OK() {
		r.Verdict = "problems"
	}
	return r
}

// walker goes through the lines as the live watcher does, one boot at a
// time.
type walker struct {
	r    *Report
	boot *Boot
	last int // the last line read
	// Within the boot: the kernel started; it panicked.
	kernel, panicked bool
	// The boot's netboot: where the kernel comes from ("network" or
	// "local"), whether a file arrived, a failure nothing recovered from
	// (its line and words), a file the server did not have, how many
	// steps.
	via               string
	loaded            bool
	failLine          int
	failText          string
	missing, netSteps int
	// menu is the log from a setup menu on, read at the end.
	menu menuLog
}

func (w *walker) line(ln pasted.Line) {
	w.last = ln.N
	w.menu.line(ln)
	if mhz, ok := serialctl.AnnouncedClock(ln.Text); ok {
		w.clock(ln.N, mhz)
	}
	if st, ok := serialctl.Netboot(ln.Text); ok {
		w.netboot(ln.N, st)
	}
	if m, ok := serialctl.Classify(ln.Text); ok {
		w.mark(ln, m)
	}
	if bm, ok := serialctl.BogoMIPS(ln.Text); ok {
		w.bogomips(ln.N, bm)
	}
}

func (w *walker) fact(f Fact) { w.r.Facts = append(w.r.Facts, f) }

func (w *walker) problem(line int, kind ProblemKind, format string, args ...any) {
	w.r.Problems = append(w.r.Problems, Problem{Line: line, Kind: kind, Text: fmt.Sprintf(format, args...)})
}

// startBoot begins a boot at line n.
func (w *walker) startBoot(n int) {
	w.r.Boots = append(w.r.Boots, Boot{FirstLine: n, Netboot: NetbootNone})
	w.boot = &w.r.Boots[len(w.r.Boots)-1]
	w.kernel, w.panicked = false, false
	w.via, w.loaded, w.failLine, w.failText, w.missing, w.netSteps = "", false, 0, "", 0, 0
}

// current is the boot a fact belongs to, begun at n if the log started
// after the firmware's banner.
func (w *walker) current(n int) *Boot {
	if w.boot == nil {
		w.startBoot(n)
	}
	return w.boot
}

// endBoot ends the boot at line last, ended how.
func (w *walker) endBoot(last int, how End) {
	if w.boot == nil {
		return
	}
	b := w.boot
	b.LastLine, b.End = last, how
	b.Netboot = w.outcome()
	b.ThenLocal = b.Netboot == NetbootFailed && w.via == "local"
	switch {
	case b.Netboot == NetbootFailed && w.failLine > 0:
		w.problem(w.failLine, ProblemNetboot, "the boot of lines %d-%d failed here (%s): nothing was loaded over the network after it", b.FirstLine, b.LastLine, w.failText)
	case b.Netboot == NetbootFailed:
		w.problem(b.LastLine, ProblemNetboot, "the boot of lines %d-%d asked for files the server did not have and loaded none", b.FirstLine, b.LastLine)
	}
}

// outcome is the boot's netboot. A failure that nothing loaded over the
// network came after is a failed netboot, whatever the firmware did next
// (booting its own NAND, say): bootbench's image never reached the board.
func (w *walker) outcome() Outcome {
	switch {
	case w.failLine > 0 || w.missing > 0 && !w.loaded:
		return NetbootFailed
	case w.via == "network" && w.loaded:
		return NetbootOK
	case w.via == "local":
		return NetbootLocal
	case w.netSteps > 0:
		return NetbootIncomplete
	}
	return NetbootNone
}

func (w *walker) netboot(n int, st serialctl.NetbootStep) {
	w.current(n)
	w.netSteps++
	switch st.Kind {
	case serialctl.NetLocal:
		w.via, w.loaded = "local", true
	case serialctl.NetLoaded:
		if w.via == "" {
			w.via = "network"
		}
		w.loaded = true
		if w.via == "network" {
			w.failLine, w.failText, w.missing = 0, "", 0
		}
	case serialctl.NetFailed:
		w.fail(n, st.Text)
	case serialctl.NetMissing:
		w.missing++
	default:
		if w.via == "" {
			w.via = "network"
		}
	}
	w.fact(Fact{Line: n, Stage: StageNetboot, Text: st.Text, Step: st.Kind.String()})
}

// fail notes a failure of the boot's load, the first since the last
// success.
func (w *walker) fail(n int, text string) {
	if w.failLine == 0 {
		w.failLine, w.failText = n, text
	}
	w.loaded = false
}

func (w *walker) mark(ln pasted.Line, m serialctl.Mark) {
	n := ln.N
	switch m.Kind {
	case serialctl.Firmware:
		w.firmware(n, m)
	case serialctl.FirmwareError:
		w.current(n)
		w.fail(n, m.Name)
		w.fact(Fact{Line: n, Stage: StageFirmwareError, Text: m.Name})
	case serialctl.Handoff, serialctl.KernelStart:
		b := w.current(n)
		w.kernel = true
		if w.via == "network" && w.loaded {
			w.missing = 0 // the optional files it did not get did not matter
		}
		if m.Kind == serialctl.Handoff {
			w.fact(Fact{Line: n, Stage: StageHandoff, Text: clip(serialctl.Printable(ln.Text), 100), Loader: m.Name})
			return
		}
		if b.Kernel == "" {
			b.Kernel = m.Name
		}
		w.fact(Fact{Line: n, Stage: StageKernel, Text: "Linux " + m.Name, Release: m.Name})
	case serialctl.KernelPanic:
		w.current(n)
		w.panicked = true
		text := "Kernel panic - not syncing: " + m.Name
		w.fact(Fact{Line: n, Stage: StagePanic, Text: text})
		w.problem(n, ProblemPanic, "%s", text)
	case serialctl.KernelOops, serialctl.KernelBug:
		w.current(n)
		stage, kind := StageOops, ProblemOops
		if m.Kind == serialctl.KernelBug {
			stage, kind = StageBug, ProblemBug
		}
		text := m.Kind.String() + ": " + m.Name
		w.fact(Fact{Line: n, Stage: stage, Text: text})
		w.problem(n, kind, "%s", text)
	}
}

// firmware is a firmware's banner: a new boot after a kernel started (a
// reset, unless the kernel panicked and rebooted the board), or when the
// boot's first firmware starts again after a failed load; else the next
// loader of the same boot (SeaBIOS, then iPXE; UEFI's PXE over IPv4, then
// over IPv6).
func (w *walker) firmware(n int, m serialctl.Mark) {
	name, version := m.Loader()
	switch {
	case w.boot != nil && w.kernel && !w.panicked:
		w.fact(Fact{Line: n, Stage: StageReset, Text: fmt.Sprintf("the board reset: %s started again after the kernel had", m.Name)})
		w.problem(n, ProblemReset, "the board reset: %s started again after the kernel had", m.Name)
		w.endBoot(n-1, EndReset)
		w.startBoot(n)
	case w.boot != nil && w.kernel:
		w.endBoot(n-1, EndPanic)
		w.startBoot(n)
	case w.boot != nil && w.failLine > 0 && name == w.boot.Loader:
		w.endBoot(n-1, EndNextBoot)
		w.startBoot(n)
	}
	b := w.current(n)
	if b.Loader == "" {
		b.Loader, b.Version = name, version
	}
	w.fact(Fact{Line: n, Stage: StageFirmware, Text: m.Name, Loader: name, Version: version})
	w.checkLoader(n, name)
}

func (w *walker) clock(n int, mhz boards.MHz) {
	b := w.current(n)
	if b.ClockMHz == 0 {
		b.ClockMHz = mhz
	}
	w.fact(Fact{Line: n, Stage: StageClock, Text: fmt.Sprintf("%s announced by the firmware", mhz), MHz: mhz})
	w.checkClock(n, mhz)
}

func (w *walker) bogomips(n int, bm string) {
	b := w.current(n)
	f := Fact{Line: n, Stage: StageBogoMIPS, BogoMIPS: bm}
	f.Text, f.MHz = w.checkBogoMIPS(n, bm, b.ClockMHz)
	if b.BogoMIPS == "" {
		b.BogoMIPS, b.BogoMIPSMHz = bm, f.MHz
	}
	w.fact(f)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
