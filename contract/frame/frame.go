// Package frame is the protocol between a board and the host over its serial
// console: the board's Writer sends each result as one line
//
//	@BB2 <run> <seq> <type> <json> <crc32>
//
// and the host's Collector checks and assembles them. crc32 is CRC-32/IEEE in
// 8 lowercase hex digits over "<run> <seq> <type> <json>"; run is the run id
// from the kernel command line, "-" for a board that was not told one. The
// console also carries kernel messages, and a UART drops or mangles bytes, so
// every result travels in a line the host can verify on its own, and the run
// id in every line keeps a stale boot's frames from being filed under the
// wrong run. The package is shared by the board side (cmd/benchinit) and the
// host side, and imports nothing but the standard library so the board binary
// stays small.
package frame

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Prefix starts every frame line. Its number is the protocol's version.
const Prefix = "@BB2 "

// noRun stands in the line for a run id the board was not told.
const noRun = "-"

// Type is what a frame carries; each type has its body (see kinds).
type Type string

// Frame types.
const (
	Hello Type = "hello" // the board's system report
	Raw   Type = "raw"   // a base64 chunk of the benchmark's own output
	Done  Type = "done"  // chunk count, sha256 of the raw output, exit status
	Fail  Type = "fail"  // the board could not run the benchmark
	// The route benchmark's steps: the board has applied a
	// configuration and routes (ready), and what its kernel counted
	// while the host sent traffic through it (counters).
	Ready    Type = "ready"
	Counters Type = "counters"
	// Watch carries the board's throttling watch: its CPU clocks and
	// thermal zones, sampled while the benchmark runs.
	Watch Type = "watch"
)

// Frame is one decoded line.
type Frame struct {
	Run  string // "" when the board was not told its run
	Seq  int
	Type Type
	Body json.RawMessage
}

// ErrCRC marks a line that looked like a frame but failed its checksum.
var ErrCRC = errors.New("frame checksum mismatch")

// Encode returns the frame line for body, without the trailing newline.
func Encode(run string, seq int, typ Type, body any) (string, error) {
	js, err := json.Marshal(body)
	if err != nil {
		return "", fmt.Errorf("encode %s frame: %w", typ, err)
	}
	if !validWord(string(typ)) {
		return "", fmt.Errorf("encode frame: bad type %q", typ)
	}
	if run == "" {
		run = noRun
	} else if !validWord(run) || run == noRun {
		return "", fmt.Errorf("encode frame: bad run id %q", run)
	}
	payload := run + " " + strconv.Itoa(seq) + " " + string(typ) + " " + string(js)
	return fmt.Sprintf("%s%s %08x", Prefix, payload, crc32.ChecksumIEEE([]byte(payload))), nil
}

// validWord is a run id or type a frame line can carry: one word of
// printable UTF-8. A control character in one can only be damage on the
// wire that the checksum happened to miss, or a board gone wrong.
func validWord(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r == ' ' || unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// IsFrame reports whether line claims to be a frame. Such a line is never
// plain transcript: if it does not decode, the run is corrupt.
func IsFrame(line []byte) bool {
	return bytes.Contains(line, []byte(Prefix))
}

// StartsAnyFrame reports whether s starts with a frame of any protocol
// version ("@BB<n> "): the transcripts of stored runs hold frames older
// boards sent, and those are never console text either.
func StartsAnyFrame(s string) bool {
	rest, ok := strings.CutPrefix(s, "@BB")
	if !ok {
		return false
	}
	digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
	return digits > 0 && strings.HasPrefix(rest[digits:], " ")
}

// Decode parses one console line. Kernel output can land on the same line
// before the frame (the console is shared), so anything ahead of the prefix is
// ignored; a trailing '\r' is dropped.
func Decode(line []byte) (Frame, error) {
	i := bytes.Index(line, []byte(Prefix))
	if i < 0 {
		return Frame{}, errors.New("not a frame")
	}
	s := strings.TrimRight(string(line[i+len(Prefix):]), "\r\n")
	sp := strings.LastIndexByte(s, ' ')
	if sp < 0 || len(s)-sp-1 != 8 {
		return Frame{}, fmt.Errorf("%w: truncated frame", ErrCRC)
	}
	payload, sum := s[:sp], s[sp+1:]
	want, err := strconv.ParseUint(sum, 16, 32)
	if err != nil || strings.ToLower(sum) != sum {
		return Frame{}, fmt.Errorf("%w: bad checksum field %q", ErrCRC, sum)
	}
	if got := crc32.ChecksumIEEE([]byte(payload)); got != uint32(want) {
		return Frame{}, fmt.Errorf("%w: got %08x, line says %s", ErrCRC, got, sum)
	}
	return parsePayload(payload)
}

// parsePayload splits a verified "<run> <seq> <type> <json>". It accepts
// only what Encode writes: whatever else passes the checksum is not read
// leniently.
func parsePayload(payload string) (Frame, error) {
	if !utf8.ValidString(payload) {
		return Frame{}, errors.New("frame is not valid UTF-8")
	}
	parts := strings.SplitN(payload, " ", 4)
	if len(parts) != 4 {
		return Frame{}, errors.New("frame has no body")
	}
	run, seqText, typ, body := parts[0], parts[1], Type(parts[2]), parts[3]
	if !validWord(run) {
		return Frame{}, fmt.Errorf("frame has bad run id %q", run)
	}
	if run == noRun {
		run = ""
	}
	if !validWord(string(typ)) {
		return Frame{}, fmt.Errorf("frame has bad type %q", typ)
	}
	// Encode writes strconv.Itoa's form: no sign, no leading zero.
	seq, err := strconv.Atoi(seqText)
	if err != nil || seq < 0 || strconv.Itoa(seq) != seqText {
		return Frame{}, fmt.Errorf("frame has bad sequence %q", seqText)
	}
	if !json.Valid([]byte(body)) {
		return Frame{}, errors.New("frame body is not JSON")
	}
	return Frame{Run: run, Seq: seq, Type: typ, Body: json.RawMessage(body)}, nil
}
