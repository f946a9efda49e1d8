// Package parse turns benchmark output, as captured from a board's console
// or imported from a file, into metrics named the way the results store
// names them (see the "Metric names" contract): `<alg>@<block>` in B/s for
// throughput, `<alg><bits>-sign` and friends in ops/s for public-key
// operations, `tcp-throughput` in bit/s for iperf and iperf3, and
// `dd-write`/`dd-read` in B/s for dd.
package parse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Metric is one figure a benchmark produced, e.g. sha256@1024 in B/s.
type Metric struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
	// Line is the input line the figure was read from, from 1; 0 where a
	// figure comes from no one line (iperf's totals).
	Line int `json:"-"`
}

// Units of the metrics this package produces.
const (
	UnitBytesPerSec = "B/s"
	UnitOpsPerSec   = "ops/s"
	UnitBitsPerSec  = "bit/s"
)

// Output is what a parser read from one benchmark run.
type Output struct {
	// Tool names the output format: "openssl" for `openssl speed`-style
	// output (human or -mr), whatever printed it; "iperf" for iperf 2,
	// "iperf3", "dd".
	Tool string `json:"tool"`
	// Version is what printed it: "0.9.8k", "3.0.13", "3.12" for iperf3,
	// or, for the built-in suite, "bootbench-speed 0.1.0". Empty if the
	// output did not say (iperf 2 and dd never do; openssl -mr only when
	// `openssl version` output is included).
	Version string `json:"version"`
	// Metrics in the order they appeared.
	Metrics []Metric `json:"metrics"`

	// Line is where the output starts in the input (its version line or
	// first table header), from 1. FirstLine and LastLine bound the lines
	// that belong to it: with several outputs in one input, from the line
	// after the previous output's last figure to its own last figure; the
	// first starts at line 1 and the last ends at the input's end.
	Line, FirstLine, LastLine int `json:"-"`
	// Measured is when the output says it was measured (iperf3 -J's
	// start.timestamp); zero when it does not say, as openssl, dd and
	// iperf 2's text never do.
	Measured time.Time `json:"-"`
}

// Error is a problem with the input, located by its 1-based line number.
type Error struct {
	Line int
	Msg  string
	// Err, if set, is the kind of problem (ErrEra), for errors.Is.
	Err error
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

func (e *Error) Unwrap() error { return e.Err }

// Formats are the names Parse accepts, "auto" first.
var Formats = []string{"auto", "openssl", "openssl-mr", "iperf", "iperf3", "dd"}

// ErrUnknownFormat is what Parse returns (wrapped, naming the formats it
// knows) for a format name not in Formats, so that a command line can tell
// a usage mistake from bad benchmark output.
var ErrUnknownFormat = errors.New("unknown benchmark output format")

// Parse parses data as the named format, one of Formats, and returns the
// one benchmark output it holds (see ParseWith and Tables for inputs with
// several). "iperf" takes iperf 2's text or CSV (-y C) output, "iperf3"
// its text or JSON (-J) output, "openssl" the human `openssl speed` table;
// "openssl-mr" tells openssl's era from a version line or, failing that,
// from the shape of its public-key figures (see OpenSSLMR); "dd" names its
// figures dd-write unless a marker line says otherwise (see DD).
func Parse(format string, data []byte) (*Output, error) {
	return ParseWith(format, data, Options{})
}

// Auto recognises the format of data and parses it: `openssl speed`
// output, human (real openssl of any version since 0.9.8, and
// bootbench-speed, which imitates it) or -mr; iperf 2 text or CSV; iperf3
// text or JSON; dd's summary line (GNU, BusyBox, BSD). Data that is none
// of these is an *Error at line 1; data that is recognised but broken is
// an *Error at the line that broke it; data holding several outputs is a
// *TablesError.
func Auto(data []byte) (*Output, error) {
	return ParseWith("auto", data, Options{})
}

// detect names the format of data, as Auto recognises it.
func detect(data []byte) (string, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return "", &Error{Line: 1, Msg: "empty benchmark output"}
	}
	// The human openssl table goes first: a console capture of it may
	// carry -mr style progress lines, never the other way round.
	switch {
	case looksLikeOpenSSL(data):
		return "openssl", nil
	case looksLikeOpenSSLMR(data):
		return "openssl-mr", nil
	case looksLikeIPerf3JSON(data) || looksLikeIPerf3Text(data):
		return "iperf3", nil
	case looksLikeIPerf(data):
		return "iperf", nil
	case looksLikeDD(data):
		return "dd", nil
	}
	return "", &Error{Line: 1, Msg: "unrecognised benchmark output: expected openssl speed (human or -mr), iperf, iperf3 or dd output"}
}

// maxLine bounds one line of input; console captures have short lines,
// and a longer one means the data is not benchmark output.
const maxLine = 1 << 20

// eachLine calls fn with each line of r and its 1-based number, without
// the line ending (LF or CRLF: console captures come with either). It
// stops at the first error fn returns.
func eachLine(r io.Reader, fn func(n int, line string) error) error {
	sc := bufio.NewScanner(r)
	// A small buffer to start, grown for a long line: outputs are a few
	// kilobytes, and an import parses thousands of them, each several
	// times over while its format is detected.
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	n := 0
	for sc.Scan() {
		n++
		if err := fn(n, strings.TrimSuffix(sc.Text(), "\r")); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return &Error{Line: n + 1, Msg: fmt.Sprintf("reading benchmark output: %v", err)}
	}
	return nil
}

// anyLine reports whether some line of data satisfies match; detection
// errors (a line too long) count as no match.
func anyLine(data []byte, match func(line string) bool) bool {
	errFound := errors.New("found")
	err := eachLine(bytes.NewReader(data), func(_ int, line string) error {
		if match(line) {
			return errFound
		}
		return nil
	})
	return err == errFound
}
