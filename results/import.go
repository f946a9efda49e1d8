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

// Import describes benchmark output read from a file, already parsed, to be
// stored as a run.
type Import struct {
	Board    string
	ClockMHz boards.MHz
	Rep      int

	Path     string    // the file; its base name goes into Source
	Data     []byte    // the file's bytes, kept as the run's raw output
	Modified time.Time // when the output was written; zero: now

	// Tool and Version as the parser reported them (see SplitToolVersion).
	Tool, Version string
	Metrics       []Metric

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
	started := im.Modified
	if started.IsZero() {
		started = time.Now()
	}
	tool, ver := SplitToolVersion(im.Tool, im.Version)
	r := &Run{
		ID:          NewRunID(),
		Board:       im.Board,
		ClockMHz:    im.ClockMHz,
		Rep:         im.Rep,
		Status:      StatusOK,
		Bench:       im.Tool,
		Tool:        tool,
		ToolVersion: ver,
		Started:     started,
		RawOutput:   im.Data,
		Metrics:     append([]Metric(nil), im.Metrics...),
		Source:      SourceImportPrefix + filepath.Base(im.Path),
	}
	if im.Tables > 0 {
		r.Source += fmt.Sprintf(" table %d of %d", im.Table, im.Tables)
	}
	if !im.Again {
		r.InputSHA256 = InputSHA256(im.Data)
	}
	return r
}
