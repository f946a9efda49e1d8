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
)

// Metric is one figure a benchmark produced, e.g. sha256@1024 in B/s.
type Metric struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
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
}

// Error is a problem with the input, located by its 1-based line number.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Formats are the names Parse accepts, "auto" first.
var Formats = []string{"auto", "openssl", "openssl-mr", "iperf", "iperf3", "dd"}

// ErrUnknownFormat is what Parse returns (wrapped, naming the formats it
// knows) for a format name not in Formats, so that a command line can tell
// a usage mistake from bad benchmark output.
var ErrUnknownFormat = errors.New("unknown benchmark output format")

// Parse parses data as the named format, one of Formats. "iperf" takes
// iperf 2's text or CSV (-y C) output, "iperf3" its text or JSON (-J)
// output, "openssl" the human `openssl speed` table; "openssl-mr" assumes
// 1.1.1 or later semantics unless data has a version line (use OpenSSLMR
// to say which version printed it), "dd" names its figures dd-write
// unless a marker line says otherwise (see DD).
func Parse(format string, data []byte) (*Output, error) {
	switch format {
	case "auto":
		return Auto(data)
	case "openssl":
		return OpenSSL(bytes.NewReader(data))
	case "openssl-mr":
		return OpenSSLMR(bytes.NewReader(data), "")
	case "iperf":
		return IPerf(bytes.NewReader(data))
	case "iperf3":
		return IPerf3(bytes.NewReader(data))
	case "dd":
		return DD(bytes.NewReader(data), MetricDDWrite)
	}
	return nil, fmt.Errorf("%w %q: want one of %s", ErrUnknownFormat, format, strings.Join(Formats, ", "))
}

// Auto recognises the format of data and parses it: `openssl speed`
// output, human (real openssl of any version since 0.9.8, and
// bootbench-speed, which imitates it) or -mr; iperf 2 text or CSV; iperf3
// text or JSON; dd's summary line (GNU, BusyBox, BSD). Data that is none
// of these is an *Error at line 1; data that is recognised but broken is
// an *Error at the line that broke it.
func Auto(data []byte) (*Output, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Error{Line: 1, Msg: "empty benchmark output"}
	}
	// The human openssl table goes first: a console capture of it may
	// carry -mr style progress lines, never the other way round.
	switch {
	case looksLikeOpenSSL(data):
		return OpenSSL(bytes.NewReader(data))
	case looksLikeOpenSSLMR(data):
		return OpenSSLMR(bytes.NewReader(data), "")
	case looksLikeIPerf3JSON(data) || looksLikeIPerf3Text(data):
		return IPerf3(bytes.NewReader(data))
	case looksLikeIPerf(data):
		return IPerf(bytes.NewReader(data))
	case looksLikeDD(data):
		return DD(bytes.NewReader(data), MetricDDWrite)
	}
	return nil, &Error{Line: 1, Msg: "unrecognised benchmark output: expected openssl speed (human or -mr), iperf, iperf3 or dd output"}
}

// maxLine bounds one line of input; console captures have short lines,
// and a longer one means the data is not benchmark output.
const maxLine = 1 << 20

// eachLine calls fn with each line of r and its 1-based number, without
// the line ending (LF or CRLF: console captures come with either). It
// stops at the first error fn returns.
func eachLine(r io.Reader, fn func(n int, line string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
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
