package results

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/bootbench/bootbench/boards"
)

// SourceImportPrefix starts the Source of a run imported from a file; the
// file's base name follows, and " table N of M" when the file held several
// outputs. The base name rather than the path: the path says where the
// file happened to be on one host, which means nothing on the next.
const SourceImportPrefix = "import:"

// SplitToolVersion turns what a parser reports into the program and version
// the store keeps. Parsers name the output format as tool ("openssl") and
// what printed it as version: a bare version ("0.9.8k") when the tool
// printed it, or "<program> <version>" when another program imitates the
// format ("bootbench-speed 0.1.0" prints openssl's layout).
func SplitToolVersion(tool, version string) (string, string) {
	if prog, ver, ok := strings.Cut(version, " "); ok {
		return prog, ver
	}
	return tool, version
}

// InputSHA256 is the hex sha256 of imported bytes, as stored in
// Run.InputSHA256.
func InputSHA256(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// SpeedTool is what the built-in suite calls itself in its output.
const SpeedTool = "bootbench-speed"

// Where an imported run's start time comes from (Run.StartedFrom).
const (
	// StartedOutput: the output said when it ran.
	StartedOutput = "output"
	// StartedImported: it did not; the time is the import's.
	StartedImported = "imported"
)

// Import describes benchmark output read from a file, already parsed, to be
// stored as a run.
type Import struct {
	Board    string
	ClockMHz boards.MHz
	Rep      int

	Path string // the file; its base name goes into Source
	Data []byte // the file's bytes, kept as the run's raw output
	// Measured is when the output says it ran; zero when it does not
	// say, and the run is stamped with the time it was imported (not
	// the file's: a copied or edited file's time says nothing of the
	// run), and so marked (StartedImported).
	Measured time.Time

	// Tool and Version as the parser reported them (see SplitToolVersion).
	Tool, Version string
	Metrics       []Metric

	// Bootloader and FirmwareClockMHz are the firmware a console capture
	// shows before the output (see Run's); empty for output alone.
	Bootloader       string
	FirmwareClockMHz boards.MHz

	// Again marks a deliberate re-import of output already stored. The run
	// is stored without its hash, which stays with the first import.
	Again bool

	// Table and Tables say which of several outputs in the file this is
	// (from 1), and how many the file holds; 0 when it holds one. Data is
	// then that output's own lines.
	Table, Tables int
}

// Label names the imported output for people: the file, and the table
// when the file holds several.
func (im *Import) Label() string {
	if im.Tables == 0 {
		return im.Path
	}
	return fmt.Sprintf("%s table %d", im.Path, im.Table)
}

// Run builds the run to store for im: status ok, the bench named after the
// output's format, the raw bytes kept.
func (im *Import) Run() *Run {
	started, from := im.Measured, StartedOutput
	if started.IsZero() {
		started, from = time.Now(), StartedImported
	}
	tool, ver := SplitToolVersion(im.Tool, im.Version)
	bench := im.Tool
	if tool == SpeedTool {
		bench = "speed" // bootbench speed's output is the built-in suite's, as run --bench speed stores it
	}
	r := &Run{
		ID:          NewRunID(),
		Board:       im.Board,
		ClockMHz:    im.ClockMHz,
		Rep:         im.Rep,
		Status:      StatusOK,
		Bench:       bench,
		StartedFrom: from,
		Tool:        tool,
		ToolVersion: ver,
		Started:     started,
		RawOutput:   im.Data,
		Metrics:     append([]Metric(nil), im.Metrics...),
		Source:      SourceImportPrefix + filepath.Base(im.Path),

		Bootloader:       im.Bootloader,
		FirmwareClockMHz: im.FirmwareClockMHz,
	}
	if im.Tables > 0 {
		r.Source += fmt.Sprintf(" table %d of %d", im.Table, im.Tables)
	}
	if !im.Again {
		r.InputSHA256 = InputSHA256(im.Data)
	}
	return r
}
