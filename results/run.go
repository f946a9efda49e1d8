// Package results is bootbench's run record, free of any database:
// what a run is (Run, its metrics, boot stages, throttling and energy),
// its id, statuses and clock checks, the stage and event vocabulary, and
// the order metrics are shown in. Storing runs lives in results/store,
// rendering them in results/export, comparing them in results/compare.
package results

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/bootbench/bootbench/boards"
)

// Run statuses. A run that did not finish cleanly still gets a row, so the
// bench history shows every attempt and why it did not count.
const (
	StatusOK          = "ok"
	StatusFailed      = "failed"
	StatusCorrupt     = "corrupt"
	StatusInterrupted = "interrupted"
	// StatusClockMismatch is a run whose board did not run at the clock
	// asked for: its figures would be filed under the wrong setting.
	StatusClockMismatch = "clock-mismatch"
	// StatusThrottled is a run whose board slowed down while it ran
	// (Run.Throttle says how): its figures are real but not the
	// clock's, so comparisons leave it out unless asked.
	StatusThrottled = "throttled"
)

// How a run's clock was checked (Run.ClockCheck).
const (
	// ClockVerified: the board reported the clock asked for (cpufreq,
	// BogoMIPS), or the clock is exact by construction (a virtual clock).
	ClockVerified = "verified"
	// ClockUnverified: nothing on the board could confirm the clock.
	ClockUnverified = "unverified"
	// ClockMismatch: the board reported another clock.
	ClockMismatch = "mismatch"
)

// Saver stores a finished run; the harness knows no more of a store than this.
type Saver interface {
	SaveRun(ctx context.Context, r *Run) error
}

// SourceRun is the Source of a run made on the bench (as opposed to
// imported output). A Run with an empty Source is stored as SourceRun, and
// comes back with Source empty.
const SourceRun = "run"

// Metric is one figure a benchmark produced, e.g. sha256@1024 in B/s.
type Metric struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
}

// Stage is how long one boot stage took.
type Stage struct {
	Name     StageName
	Duration time.Duration
}

// Run is one attempt of one benchmark on one board at one clock setting.
type Run struct {
	ID       RunID
	Board    string
	ClockMHz boards.MHz // requested; 0 = unknown or the board's default
	// ClockReportedMHz is the clock the board reported (cpufreq's current
	// clock, or BogoMIPS turned into MHz by the profile's ratio); 0 when
	// it reported none.
	ClockReportedMHz boards.MHz
	// ClockCheck is ClockVerified, ClockUnverified, ClockMismatch, or ""
	// when no clock was asked for or the run is imported.
	ClockCheck string
	Rep        int
	Status     string // StatusOK, StatusFailed, StatusCorrupt, StatusInterrupted, StatusClockMismatch, StatusThrottled
	Reason     string // one-line failure reason
	Bench      string // "speed", "openssl", ...
	// Throttle says why a run is StatusThrottled; nil for any other.
	Throttle *Throttle
	// Route are a route run's settings; nil for other runs, and for
	// route runs stored before they were kept.
	Route *RouteSettings

	// Tool and ToolVersion name what printed the output, as the parser
	// saw it: "openssl" "3.0.13", "bootbench-speed" "0.1.0".
	Tool, ToolVersion string

	Started, Finished time.Time
	// StartedFrom says where an imported run's Started comes from:
	// StartedOutput, or StartedImported (the output had no date); "" for
	// a run on the bench and for runs imported before it was kept.
	StartedFrom string
	Stages      []Stage

	ImageDigest string
	Kernel      string

	// Bootloader is the firmware that booted the run, as its console
	// banner named it, name and version in one: "RouterBOOT 2.20", "CFE
	// 1.0.37", "U-Boot 1.1.4", "RPi bootloader 2024-07-30"; "" when the
	// console showed none. Figures that differ between two runs of one
	// board and clock setting may come from a firmware update; this says
	// whether there was one.
	Bootloader string
	// FirmwareClockMHz is the CPU clock the firmware announced in its
	// banner (RouterBOOT's "CPU frequency: 680 MHz", CFE's "CPU type
	// 0x29008: 216MHz"): what it set, before the kernel ran; 0 when it
	// announced none.
	FirmwareClockMHz boards.MHz

	Hello      json.RawMessage // the board's hello report, may be nil
	Transcript []byte          // byte-exact serial transcript
	RawOutput  []byte          // the benchmark's reassembled output

	Metrics []Metric

	// Energy is what the board's power meter measured; nil when its
	// switch has none.
	Energy *Energy

	// Source says where the run came from: "" for a run on the bench,
	// "import:<file name>" for imported output.
	Source string
	// InputSHA256 is the hex sha256 of the imported bytes, so the same
	// file is not imported twice by accident; "" for bench runs and for
	// deliberate re-imports. At most one stored run has a given value.
	InputSHA256 string
}

// Filter selects runs; zero fields match everything.
type Filter struct {
	Board string
	// Boards, when set, selects only runs of these boards (with Board,
	// of the boards in both): a comparison of named boards reads theirs.
	Boards   []string
	ClockMHz boards.MHz
	Status   string
	// Since and Until bound when the runs started: Since <= Started <
	// Until, each side open when zero. A store kept for years is read a
	// window at a time.
	Since, Until time.Time
	// Limit, when positive, keeps only the newest Limit runs of those
	// selected (still given oldest first): a page of a long history.
	Limit int
	// IDs, when set, selects only these runs.
	IDs []RunID
	// Skip leaves these runs out: the damaged runs results check names,
	// so what still reads can be exported.
	Skip []RunID

	// WithTranscript loads Transcript and RawOutput too, and the power
	// samples. They are the bulk of the database, so listings leave them
	// out unless asked.
	WithTranscript bool
	// WithSamples loads the power samples (Energy.Samples) without the
	// transcripts, for a report that draws them.
	WithSamples bool
}

// ValidStatus says whether s is one of the run statuses.
func ValidStatus(s string) bool {
	switch s {
	case StatusOK, StatusFailed, StatusCorrupt, StatusInterrupted, StatusClockMismatch, StatusThrottled:
		return true
	}
	return false
}

// Validate says what makes r unfit to store: no id or board, an unknown
// status, a throttled status without what throttled it (or that without
// the status), a hello that is not JSON, a metric without a name or with
// a non-finite value, a power sample or span that is not finite; nil when
// nothing does.
func (r *Run) Validate() error {
	switch {
	case r.ID == "":
		return errors.New("run has no id")
	case r.Board == "":
		return fmt.Errorf("run %s has no board", r.ID)
	case !ValidStatus(r.Status):
		return fmt.Errorf("run %s: unknown status %q (want ok, failed, corrupt, interrupted, clock-mismatch or throttled)", r.ID, r.Status)
	case (r.Status == StatusThrottled) != (r.Throttle != nil):
		return fmt.Errorf("run %s: a throttled run, and only one, says why it is throttled", r.ID)
	case r.Hello != nil && !json.Valid(r.Hello):
		return fmt.Errorf("run %s: hello report is not valid JSON", r.ID)
	}
	for _, m := range r.Metrics {
		// SQLite stores NaN as NULL and JSON cannot carry NaN or Inf;
		// refuse them here with the metric's name rather than later
		// with an opaque constraint error.
		if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
			return fmt.Errorf("run %s: metric %s has non-finite value %v", r.ID, m.Name, m.Value)
		}
		if m.Name == "" {
			return fmt.Errorf("run %s: metric with empty name", r.ID)
		}
	}
	return r.Energy.validate(r.ID)
}
