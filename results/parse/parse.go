// Package parse turns benchmark output, as captured from a board's console
// or imported from a file, into metrics named the way the results store
// names them (see the "Metric names" contract): `<alg>@<block>` in B/s for
// throughput, `<alg><bits>-sign` and friends in ops/s for public-key
// operations.
package parse

import (
	"bytes"
	"fmt"
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
)

// Output is what a parser read from one benchmark run.
type Output struct {
	// Tool names the output format: "openssl" for `openssl speed`-style
	// output, whatever printed it.
	Tool string `json:"tool"`
	// Version is what printed it: "0.9.8k", "3.0.13", or, for the
	// built-in suite, "bootbench-speed 0.1.0". Empty if the output did not
	// say (a truncated capture).
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

// Auto recognises the format of data and parses it. For now it knows
// `openssl speed` output (real openssl of any version since 0.9.8, and
// bootbench-speed, which imitates it); anything else is an *Error at
// line 1.
func Auto(data []byte) (*Output, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Error{Line: 1, Msg: "empty benchmark output"}
	}
	if looksLikeOpenSSL(data) {
		return OpenSSL(bytes.NewReader(data))
	}
	return nil, &Error{Line: 1, Msg: "unrecognised benchmark output: expected openssl speed output (a \"type ... bytes\" table or a \"sign/s\" table)"}
}
