package spool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/results"
)

// Format and Version mark a spooled run's file. A file of a later version
// is left for the bootbench that wrote it; every version this one wrote
// stays readable.
const (
	Format  = "bootbench spooled run"
	Version = 1
)

// file is a spooled run as it is written: the run whole, what it waits
// for, and why.
type file struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Store   string    `json:"store"` // as messages name it, no password
	Kept    time.Time `json:"kept"`
	Why     string    `json:"why"` // why the store did not take it
	Run     wireRun   `json:"run"`
}

// wireRun is every field of results.Run, spelled out so that the format
// is this file's and not whatever results.Run happens to hold: a field
// added there fails the round-trip test until it is carried here. Bytes
// go as base64, byte-exact; durations as nanoseconds.
type wireRun struct {
	ID               results.RunID     `json:"id"`
	Board            string            `json:"board"`
	ClockMHz         boards.MHz        `json:"clock_mhz"`
	ClockReportedMHz boards.MHz        `json:"clock_reported_mhz"`
	ClockCheck       string            `json:"clock_check"`
	Rep              int               `json:"rep"`
	Status           string            `json:"status"`
	Reason           string            `json:"reason"`
	Bench            string            `json:"bench"`
	Throttle         *results.Throttle `json:"throttle"`
	// Route and StartedFrom came after version 1's first files; empty,
	// they are left out, so a run without them is written as before.
	Route       *results.RouteSettings `json:"route,omitempty"`
	Tool        string                 `json:"tool"`
	ToolVersion string                 `json:"tool_version"`
	Started     time.Time              `json:"started"`
	Finished    time.Time              `json:"finished"`
	StartedFrom string                 `json:"started_from,omitempty"`
	Stages      []wireStage            `json:"stages"`
	ImageDigest string                 `json:"image_digest"`
	Kernel      string                 `json:"kernel"`
	Hello       []byte                 `json:"hello"` // bytes, not JSON: kept exactly as the board sent them
	Transcript  []byte                 `json:"transcript"`
	RawOutput   []byte                 `json:"raw_output"`
	Metrics     []results.Metric       `json:"metrics"`
	Energy      *wireEnergy            `json:"energy"`
	Source      string                 `json:"source"`
	InputSHA256 string                 `json:"input_sha256"`
	// Bootloader and FirmwareClockMHz came after version 1's first
	// files too, and are left out when empty in the same way.
	Bootloader       string     `json:"bootloader,omitempty"`
	FirmwareClockMHz boards.MHz `json:"firmware_clock_mhz,omitempty"`
}

type wireStage struct {
	Name results.StageName `json:"name"`
	NS   int64             `json:"ns"`
}

type wireEnergy struct {
	Meter   string       `json:"meter"`
	Failed  int          `json:"failed"`
	Samples []wireSample `json:"samples"`
	Spans   []wireSpan   `json:"spans"`
}

type wireSample struct {
	AtNS  int64   `json:"at_ns"`
	Watts float64 `json:"watts"`
}

type wireSpan struct {
	Name      string  `json:"name"`
	FromNS    int64   `json:"from_ns"`
	ToNS      int64   `json:"to_ns"`
	MeanWatts float64 `json:"mean_watts"`
	Joules    float64 `json:"joules"`
	PerJoule  float64 `json:"per_joule"`
	Unit      string  `json:"unit"`
}

func toWire(r *results.Run) wireRun {
	w := wireRun{
		ID: r.ID, Board: r.Board, ClockMHz: r.ClockMHz, ClockReportedMHz: r.ClockReportedMHz, ClockCheck: r.ClockCheck,
		Rep: r.Rep, Status: r.Status, Reason: r.Reason, Bench: r.Bench, Throttle: r.Throttle, Route: r.Route,
		Tool: r.Tool, ToolVersion: r.ToolVersion, Started: r.Started, Finished: r.Finished, StartedFrom: r.StartedFrom,
		ImageDigest: r.ImageDigest, Kernel: r.Kernel, Hello: r.Hello, Transcript: r.Transcript, RawOutput: r.RawOutput,
		Metrics: r.Metrics, Source: r.Source, InputSHA256: r.InputSHA256,
		Bootloader: r.Bootloader, FirmwareClockMHz: r.FirmwareClockMHz,
	}
	for _, s := range r.Stages {
		w.Stages = append(w.Stages, wireStage{Name: s.Name, NS: int64(s.Duration)})
	}
	if e := r.Energy; e != nil {
		w.Energy = &wireEnergy{Meter: e.Meter, Failed: e.Failed}
		for _, s := range e.Samples {
			w.Energy.Samples = append(w.Energy.Samples, wireSample{AtNS: int64(s.At), Watts: s.Watts})
		}
		for _, s := range e.Spans {
			w.Energy.Spans = append(w.Energy.Spans, wireSpan{Name: s.Name, FromNS: int64(s.From), ToNS: int64(s.To),
				MeanWatts: s.MeanWatts, Joules: s.Joules, PerJoule: s.PerJoule, Unit: s.Unit})
		}
	}
	return w
}

func (w wireRun) run() *results.Run {
	r := &results.Run{
		ID: w.ID, Board: w.Board, ClockMHz: w.ClockMHz, ClockReportedMHz: w.ClockReportedMHz, ClockCheck: w.ClockCheck,
		Rep: w.Rep, Status: w.Status, Reason: w.Reason, Bench: w.Bench, Throttle: w.Throttle, Route: w.Route,
		Tool: w.Tool, ToolVersion: w.ToolVersion, Started: w.Started, Finished: w.Finished, StartedFrom: w.StartedFrom,
		ImageDigest: w.ImageDigest, Kernel: w.Kernel, Hello: w.Hello, Transcript: w.Transcript, RawOutput: w.RawOutput,
		Metrics: w.Metrics, Source: w.Source, InputSHA256: w.InputSHA256,
		Bootloader: w.Bootloader, FirmwareClockMHz: w.FirmwareClockMHz,
	}
	for _, s := range w.Stages {
		r.Stages = append(r.Stages, results.Stage{Name: s.Name, Duration: time.Duration(s.NS)})
	}
	if e := w.Energy; e != nil {
		r.Energy = &results.Energy{Meter: e.Meter, Failed: e.Failed}
		for _, s := range e.Samples {
			r.Energy.Samples = append(r.Energy.Samples, results.PowerSample{At: time.Duration(s.AtNS), Watts: s.Watts})
		}
		for _, s := range e.Spans {
			r.Energy.Spans = append(r.Energy.Spans, results.PowerSpan{Name: s.Name, From: time.Duration(s.FromNS), To: time.Duration(s.ToNS),
				MeanWatts: s.MeanWatts, Joules: s.Joules, PerJoule: s.PerJoule, Unit: s.Unit})
		}
	}
	return r
}

// encode is the file that keeps r for store, with why it was not stored.
func encode(r *results.Run, store, why string, kept time.Time) ([]byte, error) {
	b, err := json.Marshal(file{Format: Format, Version: Version, Store: store, Kept: kept.UTC(), Why: why, Run: toWire(r)})
	if err != nil {
		return nil, fmt.Errorf("encode run %s: %w", r.ID, err)
	}
	return append(b, '\n'), nil
}

// errNewer is a file written by a later bootbench, in a version this one
// does not know.
var errNewer = errors.New("written by a newer bootbench")

// decode reads a spooled run's file.
func decode(b []byte) (*file, *results.Run, error) {
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, nil, fmt.Errorf("not a spooled run: %w", err)
	}
	switch {
	case head.Format != Format:
		return nil, nil, fmt.Errorf("not a spooled run (format %q)", head.Format)
	case head.Version > Version:
		return nil, nil, fmt.Errorf("version %d, %w (this one reads up to %d)", head.Version, errNewer, Version)
	case head.Version < 1:
		return nil, nil, fmt.Errorf("not a spooled run (version %d)", head.Version)
	}
	var f file
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields() // a field this version does not know would be lost on delivery
	if err := dec.Decode(&f); err != nil {
		return nil, nil, fmt.Errorf("spooled run unreadable: %w", err)
	}
	return &f, f.Run.run(), nil
}

// Keep writes r to the spool, atomically: a temporary file in the spool's
// directory, synced, renamed into place, and the directory synced, so a
// crash leaves either the whole run or none. why is why the store did not
// take it. It returns the file's path.
func (s *Spool) Keep(r *results.Run, why string) (string, error) {
	b, err := encode(r, s.Store, why, time.Now())
	if err != nil {
		return "", err
	}
	if err := s.makeDir(); err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	path := filepath.Join(s.Dir, string(r.ID)+fileSuffix)
	tmp, err := os.CreateTemp(s.Dir, fmt.Sprintf("%s%d-*", tempPrefix, os.Getpid()))
	if err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(b); err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	done = true
	if err := syncDir(s.Dir); err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	return path, nil
}

// makeDir makes the spool's directory, the user's alone: a run holds
// the board's whole console, which may show what the user would not
// share.
func (s *Spool) makeDir() error {
	if err := os.MkdirAll(filepath.Dir(s.Dir), 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(s.Dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Read reads the run in a spool file, and why it was spooled.
func Read(path string) (*results.Run, string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	f, r, err := decode(b)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return r, f.Why, nil
}
