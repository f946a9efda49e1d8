// Package frame encodes and decodes the lines a board sends to the host over
// its serial console:
//
//	@BB1 <seq> <type> <json> <crc32>
//
// crc32 is CRC-32/IEEE in 8 lowercase hex digits over "<seq> <type> <json>".
// The console also carries kernel messages, and a UART drops or mangles bytes,
// so every result travels in a line the host can verify on its own. The
// package is shared by the board side (cmd/benchinit) and the host side
// (serialctl), and imports nothing but the standard library so the board
// binary stays small.
package frame

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// Prefix starts every frame line.
const Prefix = "@BB1 "

// Frame types.
const (
	Hello = "hello" // the board's system report
	Raw   = "raw"   // a base64 chunk of the benchmark's own output
	Done  = "done"  // chunk count, sha256 of the raw output, exit status
	Fail  = "fail"  // the board could not run the benchmark
	// The route benchmark's steps: the board has applied a
	// configuration and routes (ready), and what its kernel counted
	// while the host sent traffic through it (counters).
	Ready    = "ready"
	Counters = "counters"
)

// Frame is one decoded line.
type Frame struct {
	Seq  int
	Type string
	Body json.RawMessage
}

// ErrCRC marks a line that looked like a frame but failed its checksum.
var ErrCRC = errors.New("frame checksum mismatch")

// Encode returns the frame line for body, without the trailing newline.
func Encode(seq int, typ string, body any) (string, error) {
	js, err := json.Marshal(body)
	if err != nil {
		return "", fmt.Errorf("encode %s frame: %w", typ, err)
	}
	if !validType(typ) {
		return "", fmt.Errorf("encode frame: bad type %q", typ)
	}
	payload := strconv.Itoa(seq) + " " + typ + " " + string(js)
	return fmt.Sprintf("%s%s %08x", Prefix, payload, crc32.ChecksumIEEE([]byte(payload))), nil
}

// validType is a type a frame line can carry: one word.
func validType(typ string) bool {
	return typ != "" && !strings.ContainsAny(typ, " \r\n")
}

// IsFrame reports whether line claims to be a frame. Such a line is never
// plain transcript: if it does not decode, the run is corrupt.
func IsFrame(line []byte) bool {
	return bytes.Contains(line, []byte(Prefix))
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
	parts := strings.SplitN(payload, " ", 3)
	if len(parts) != 3 {
		return Frame{}, errors.New("frame has no body")
	}
	if !validType(parts[1]) {
		return Frame{}, fmt.Errorf("frame has bad type %q", parts[1])
	}
	seq, err := strconv.Atoi(parts[0])
	if err != nil || seq < 0 {
		return Frame{}, fmt.Errorf("frame has bad sequence %q", parts[0])
	}
	if !json.Valid([]byte(parts[2])) {
		return Frame{}, errors.New("frame body is not JSON")
	}
	return Frame{Seq: seq, Type: parts[1], Body: json.RawMessage(parts[2])}, nil
}

// HelloBody is what the board reports before it runs anything. Fields the
// board could not find out are left out rather than sent as zero, so the
// host can tell "unknown" from a figure.
type HelloBody struct {
	Run      string `json:"run"`
	Arch     string `json:"arch"`
	Kernel   string `json:"kernel"`
	CPU      string `json:"cpu,omitempty"`
	BogoMIPS string `json:"bogomips,omitempty"`
	Bench    string `json:"bench"`
	// Machine is the board or SoC as /proc/cpuinfo names it ("machine",
	// else "system type" on MIPS, "Hardware" on older ARM).
	Machine string `json:"machine,omitempty"`
	// Cpufreq's view of CPU 0 once the clock was set: the current clock
	// and the policy's limits.
	CPUFreqCurKHz int `json:"cpufreq_cur_khz,omitempty"`
	CPUFreqMinKHz int `json:"cpufreq_min_khz,omitempty"`
	CPUFreqMaxKHz int `json:"cpufreq_max_khz,omitempty"`
	// ClockRequestedMHz echoes bootbench.clock; ClockSet says what came of
	// it: "userspace 800000 kHz", "scaling_max_freq 680000 kHz", "no
	// cpufreq in this kernel", or the error.
	ClockRequestedMHz int    `json:"clock_requested_mhz,omitempty"`
	ClockSet          string `json:"clock_set,omitempty"`
	MemTotalKB        int64  `json:"mem_total_kb,omitempty"`
	Reps              int    `json:"reps,omitempty"`
	// Argv is the command an external benchmark runs as, {seconds}
	// replaced: the image, not the host, chose it.
	Argv []string `json:"argv,omitempty"`
}

// RawBody carries one chunk of the benchmark output.
type RawBody struct {
	Run  string `json:"run"`
	N    int    `json:"n"`    // chunk number, from 0
	Data string `json:"data"` // base64 (std encoding)
}

// DoneBody closes a run.
type DoneBody struct {
	Run    string `json:"run"`
	Chunks int    `json:"chunks"`
	SHA256 string `json:"sha256"` // hex, of the reassembled raw output
	Exit   int    `json:"exit"`
	// Reps is how many repetitions the output holds: fewer than asked
	// when one exited non-zero, since the board stops there.
	Reps int `json:"reps,omitempty"`
}

// FailBody says why the board gave up.
type FailBody struct {
	Run    string `json:"run"`
	Reason string `json:"reason"`
}

// ReadyBody says the board routes in one configuration, with the rule set
// as its kernel lists it back (not as the board meant to write it).
type ReadyBody struct {
	Run    string `json:"run"`
	Config string `json:"config"`
	// Rules are the netfilter rules in force, one line a rule
	// ("inet bootbench forward: meta iifname == ... counter accept"),
	// none for a configuration without a firewall.
	Rules []string `json:"rules"`
	// Conntrack says whether the rules make the kernel track connections.
	Conntrack bool `json:"conntrack"`
}

// CountersBody is what the board's kernel counted in one configuration,
// from its ready to the host's next command.
type CountersBody struct {
	Run    string `json:"run"`
	Config string `json:"config"`
	// Forwarded is IP datagrams forwarded (/proc/net/snmp ForwDatagrams).
	Forwarded uint64 `json:"forwarded"`
	// Dropped is datagrams the IP layer discarded plus packets the rules
	// dropped.
	Dropped uint64 `json:"dropped"`
	// ConntrackEntries is the connection tracking table's size at the
	// end: the board empties the table when it applies a configuration,
	// so these are the connections tracked in this one.
	ConntrackEntries uint64 `json:"conntrack_entries"`
}
