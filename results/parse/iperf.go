package parse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Metric names of the network benchmarks.
const (
	// MetricTCPThroughput is what the receiving end got: iperf 2 reports
	// only that, iperf3 both ends, and the sender's figure can exceed what
	// arrived (data still in flight when the sender stopped).
	MetricTCPThroughput = "tcp-throughput"
	// MetricTCPThroughputSender is iperf3's sender-side figure.
	MetricTCPThroughputSender = "tcp-throughput-sender"
)

// IPerf3Test is one iperf3 -J test's figures, TCP or UDP, as a benchmark
// that runs iperf3 itself reads them. Unlike Auto's metrics, counts may
// be zero: no retransmits, no loss.
type IPerf3Test struct {
	Version  string // "3.12"
	Protocol string // "TCP" or "UDP"
	// Received is what arrived, in bits/s (end.sum_received); Sent what
	// the client sent (end.sum_sent).
	Received, Sent float64
	// Retransmits is TCP's (-1 where the system does not report them);
	// LostPercent UDP's datagram loss.
	Retransmits int64
	LostPercent float64
}

// IPerf3JSON reads the output of iperf3 -J for one test.
func IPerf3JSON(data []byte) (IPerf3Test, error) {
	off, ok := jsonStart(data)
	if !ok {
		return IPerf3Test{}, &Error{Line: 1, Msg: "no iperf3 JSON (iperf3 -J)"}
	}
	var doc iperf3Doc
	if err := json.NewDecoder(bytes.NewReader(data[off:])).Decode(&doc); err != nil {
		return IPerf3Test{}, &Error{Line: 1, Msg: fmt.Sprintf("iperf3 JSON: %v", err)}
	}
	if doc.Error != "" {
		return IPerf3Test{}, &Error{Line: 1, Msg: "iperf3: " + doc.Error}
	}
	t := IPerf3Test{Version: strings.TrimPrefix(doc.Start.Version, "iperf "), Protocol: doc.Start.TestStart.Protocol, Retransmits: -1}
	r, s := doc.End.SumReceived, doc.End.SumSent
	if r == nil || s == nil {
		return IPerf3Test{}, &Error{Line: 1, Msg: "iperf3 JSON has no end.sum_received and end.sum_sent (iperf3 before 3.7, or truncated output?)"}
	}
	t.Received, t.Sent = r.BitsPerSecond, s.BitsPerSecond
	if s.Retransmits != nil {
		t.Retransmits = *s.Retransmits
	}
	if r.LostPercent != nil {
		t.LostPercent = *r.LostPercent
	}
	return t, nil
}

var (
	// intervalRE is the start of a result row of iperf 2 and iperf3 text
	// output: "[  3]  0.0-10.0 sec", "[  1] 0.0000-2.0122 sec",
	// "[SUM]   0.00-2.00   sec"; iperf 2.1's enhanced output may number
	// its sums ("[SUM-2]").
	intervalRE = regexp.MustCompile(`^\[\s*([0-9]+|SUM(?:-[0-9]+)?)\]\s+([0-9]+(?:\.[0-9]+)?)\s*-\s*([0-9]+(?:\.[0-9]+)?)\s+sec\b`)
	// rateRE is the rest of a row: transfer, then rate, then (iperf3)
	// retransmits and "sender"/"receiver", or (iperf 2 -e) more columns.
	rateRE = regexp.MustCompile(`^\s+[0-9]+(?:\.[0-9]+)?\s+[KMGT]?Bytes\s+([0-9]+(?:\.[0-9]+)?)\s+([KMGT]?)bits/sec\b(.*)$`)
	// csvRE is one row of iperf 2's -y C output:
	// timestamp,src,sport,dst,dport,id,interval,bytes,bits_per_second
	// (2.1 may add columns after these).
	csvRE = regexp.MustCompile(`^[0-9]+(?:\.[0-9]+)?,[^,]*,[0-9]+,[^,]*,[0-9]+,(-?[0-9]+),([0-9.]+)-([0-9.]+),([0-9]+),([0-9]+(?:\.[0-9]+)?)(?:,.*)?$`)
	// iperf3VersionRE is iperf3 -V's first line, "iperf 3.12".
	iperf3VersionRE = regexp.MustCompile(`^iperf (3\.[0-9][^ ]*)$`)
)

// bitUnits gives the power of ten of iperf's rate units (decimal for
// bits, unlike its byte units).
var bitUnits = map[string]int{"": 0, "K": 3, "M": 6, "G": 9, "T": 12}

// rateRow is one throughput figure of iperf output.
type rateRow struct {
	line       int
	id         string // stream number, or "SUM"
	start, end float64
	bps        float64
	end3       string // iperf3: "sender", "receiver" or ""
}

func (r rateRow) sum() bool { return strings.HasPrefix(r.id, "SUM") || r.id == "-1" }

// parseRow reads a text result row; ok is false for lines that are not
// one, err set for lines that start like one but are cut short.
func parseRow(n int, line string) (row rateRow, ok bool, err error) {
	line = strings.TrimSpace(line)
	m := intervalRE.FindStringSubmatchIndex(line)
	if m == nil {
		return row, false, nil
	}
	row.line, row.id = n, line[m[2]:m[3]]
	row.start, _ = strconv.ParseFloat(line[m[4]:m[5]], 64)
	row.end, _ = strconv.ParseFloat(line[m[6]:m[7]], 64)
	r := rateRE.FindStringSubmatch(line[m[1]:])
	if r == nil {
		return row, false, &Error{Line: n, Msg: fmt.Sprintf("iperf result row %q has no transfer and bits/sec rate (truncated output?)", line)}
	}
	// Moving the decimal point in the string keeps "16.1 Gbits/sec"
	// exactly 16100000000, which 16.1*1e9 in floating point is not.
	row.bps, _ = strconv.ParseFloat(shiftDecimal(r[1], bitUnits[r[2]]), 64)
	if f := strings.Fields(r[3]); len(f) > 0 && (f[len(f)-1] == "sender" || f[len(f)-1] == "receiver") {
		row.end3 = f[len(f)-1]
	}
	return row, true, nil
}

// IPerf parses iperf 2 client output, text (any -f) or CSV (-y C), into
// tcp-throughput in bit/s. It takes the [SUM] row when there is one
// (-P), else the stream's row for the whole test: the one starting at 0
// with the latest end, so that -i interval rows are passed over. CSV
// output has no sum row in iperf 2.1 (2.0 gives it id -1), so there the
// streams' whole-test rows are added up. Text rows give the rate as
// printed (rounded to the -f unit); CSV rows give it exactly.
//
// UDP output is an *Error: only TCP throughput is parsed.
func IPerf(r io.Reader) (*Output, error) {
	var rows []rateRow
	problem := 0 // first line that looks like an iperf error message
	err := eachLine(r, func(n int, line string) error {
		t := strings.TrimSpace(line)
		if strings.Contains(t, "UDP port") || strings.Contains(t, "datagrams") {
			return &Error{Line: n, Msg: "iperf UDP test: only TCP throughput is parsed"}
		}
		if m := csvRE.FindStringSubmatch(t); m != nil {
			row := rateRow{line: n, id: m[1]}
			row.start, _ = strconv.ParseFloat(m[2], 64)
			row.end, _ = strconv.ParseFloat(m[3], 64)
			row.bps, _ = strconv.ParseFloat(m[5], 64)
			rows = append(rows, row)
			return nil
		}
		row, ok, err := parseRow(n, t)
		if err != nil {
			return err
		}
		if ok {
			rows = append(rows, row)
		} else if problem == 0 && isIPerfProblem(t) {
			problem = n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, noRows("iperf", problem)
	}
	bps, line := wholeTest(rows)
	if bps <= 0 {
		return nil, &Error{Line: line, Msg: "iperf measured 0 bits/sec"}
	}
	return &Output{Tool: "iperf", Metrics: []Metric{{Name: MetricTCPThroughput, Unit: UnitBitsPerSec, Value: bps}}}, nil
}

// wholeTest picks the rate over the whole test from rows, as IPerf
// describes, and the line it came from.
func wholeTest(rows []rateRow) (float64, int) {
	var sums []rateRow
	byID := map[string][]rateRow{}
	var ids []string
	for _, r := range rows {
		if r.sum() {
			sums = append(sums, r)
			continue
		}
		if _, ok := byID[r.id]; !ok {
			ids = append(ids, r.id)
		}
		byID[r.id] = append(byID[r.id], r)
	}
	if len(sums) > 0 {
		best := longest(sums)
		return best.bps, best.line
	}
	total, line := 0.0, 0
	for _, id := range ids {
		best := longest(byID[id])
		total += best.bps
		line = max(line, best.line)
	}
	return total, line
}

// longest returns the row covering the whole test: the latest end among
// rows that start at 0 (the last such, if tied), or failing any, the
// longest interval.
func longest(rows []rateRow) rateRow {
	best, found := rows[0], false
	for _, r := range rows {
		if r.start > 0.0005 {
			continue
		}
		if !found || r.end >= best.end {
			best, found = r, true
		}
	}
	if found {
		return best
	}
	for _, r := range rows {
		if r.end-r.start >= best.end-best.start {
			best = r
		}
	}
	return best
}

// isIPerfProblem reports whether line is iperf reporting a failure
// ("connect failed: Connection refused", "iperf3: error - ...").
func isIPerfProblem(line string) bool {
	l := strings.ToLower(line)
	return strings.Contains(l, "failed") || strings.Contains(l, "error") || strings.Contains(l, "refused")
}

func noRows(tool string, problem int) error {
	if problem > 0 {
		return &Error{Line: problem, Msg: tool + " reported a failure and no results"}
	}
	return &Error{Line: 1, Msg: "no " + tool + " results: found no \"[ ID] <start>-<end> sec <transfer> <rate>/sec\" row"}
}

// IPerf3 parses iperf3 client output, text or JSON (-J): tcp-throughput
// is the receiver's bit/s over the whole test (the [SUM] row with -P),
// tcp-throughput-sender the sender's. Version comes from JSON's
// start.version or -V's first line ("iperf 3.12" gives "3.12").
//
// UDP tests and iperf3's own errors ("iperf3: error - ...", JSON's
// "error") are an *Error.
func IPerf3(r io.Reader) (*Output, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &Error{Line: 1, Msg: fmt.Sprintf("reading iperf3 output: %v", err)}
	}
	if off, ok := jsonStart(data); ok {
		return iperf3JSON(data, off)
	}
	out := &Output{Tool: "iperf3"}
	var sender, receiver []rateRow
	var rows []rateRow
	problem := 0
	err = eachLine(bytes.NewReader(data), func(n int, line string) error {
		t := strings.TrimSpace(line)
		if m := iperf3VersionRE.FindStringSubmatch(t); m != nil && out.Version == "" {
			out.Version = m[1]
			return nil
		}
		// -V prints when the test started: "Time: Mon, 30 Nov 2026 08:28:24 GMT".
		if at, ok := strings.CutPrefix(t, "Time: "); ok && out.Measured.IsZero() {
			if tm, err := time.Parse(time.RFC1123, at); err == nil {
				out.Measured = tm.UTC()
			}
			return nil
		}
		if strings.Contains(t, "Lost/Total Datagrams") {
			return &Error{Line: n, Msg: "iperf3 UDP test: only TCP throughput is parsed"}
		}
		if strings.HasPrefix(t, "iperf3: error") {
			return &Error{Line: n, Msg: strings.TrimPrefix(t, "iperf3: ")}
		}
		row, ok, err := parseRow(n, t)
		if err != nil {
			return err
		}
		switch {
		case !ok:
			if problem == 0 && isIPerfProblem(t) {
				problem = n
			}
		case row.end3 == "sender":
			sender = append(sender, row)
		case row.end3 == "receiver":
			receiver = append(receiver, row)
		default:
			rows = append(rows, row)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(sender)+len(receiver) == 0 {
		if len(rows) > 0 {
			return nil, &Error{Line: rows[len(rows)-1].line + 1, Msg: "iperf3 output ends before its sender/receiver summary (truncated output?)"}
		}
		return nil, noRows("iperf3", problem)
	}
	for _, s := range []struct {
		name string
		rows []rateRow
	}{{MetricTCPThroughput, receiver}, {MetricTCPThroughputSender, sender}} {
		if len(s.rows) == 0 {
			continue
		}
		if bps, _ := wholeTest(s.rows); bps > 0 {
			out.Metrics = append(out.Metrics, Metric{Name: s.name, Unit: UnitBitsPerSec, Value: bps})
		}
	}
	if len(out.Metrics) == 0 {
		return nil, &Error{Line: max(lastLine(sender), lastLine(receiver)), Msg: "iperf3 measured 0 bits/sec"}
	}
	return out, nil
}

func lastLine(rows []rateRow) int {
	if len(rows) == 0 {
		return 0
	}
	return rows[len(rows)-1].line
}

// jsonStart finds iperf3 -J output: the offset of the first line that
// opens a JSON object, which may follow console noise.
func jsonStart(data []byte) (int, bool) {
	off := 0
	for off < len(data) {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data) - off
		}
		line := bytes.TrimSpace(data[off : off+end])
		if len(line) > 0 && line[0] == '{' {
			return off, true
		}
		off += end + 1
	}
	return 0, false
}

type iperf3Doc struct {
	Start struct {
		Version   string `json:"version"`
		Timestamp struct {
			TimeSecs int64 `json:"timesecs"`
		} `json:"timestamp"`
		TestStart struct {
			Protocol string `json:"protocol"`
		} `json:"test_start"`
	} `json:"start"`
	End struct {
		SumSent     *iperf3Sum `json:"sum_sent"`
		SumReceived *iperf3Sum `json:"sum_received"`
	} `json:"end"`
	Error string `json:"error"`
}

type iperf3Sum struct {
	BitsPerSecond float64  `json:"bits_per_second"`
	Retransmits   *int64   `json:"retransmits"`
	LostPercent   *float64 `json:"lost_percent"`
}

func iperf3JSON(data []byte, off int) (*Output, error) {
	lineAt := func(o int) int { return 1 + bytes.Count(data[:min(o, len(data))], []byte("\n")) }
	var doc iperf3Doc
	dec := json.NewDecoder(bytes.NewReader(data[off:]))
	if err := dec.Decode(&doc); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, &Error{Line: lineAt(off + int(se.Offset)), Msg: fmt.Sprintf("iperf3 JSON: %v", err)}
		case errors.As(err, &te):
			return nil, &Error{Line: lineAt(off + int(te.Offset)), Msg: fmt.Sprintf("iperf3 JSON: %v", err)}
		}
		return nil, &Error{Line: lineAt(len(data)), Msg: fmt.Sprintf("iperf3 JSON: %v (truncated output?)", err)}
	}
	keyLine := func(key string) int {
		if i := bytes.Index(data[off:], []byte(`"`+key+`"`)); i >= 0 {
			return lineAt(off + i)
		}
		return lineAt(off)
	}
	if doc.Error != "" {
		return nil, &Error{Line: keyLine("error"), Msg: "iperf3: " + doc.Error}
	}
	if p := doc.Start.TestStart.Protocol; p != "" && p != "TCP" {
		return nil, &Error{Line: keyLine("protocol"), Msg: fmt.Sprintf("iperf3 %s test: only TCP throughput is parsed", p)}
	}
	out := &Output{Tool: "iperf3", Version: strings.TrimPrefix(doc.Start.Version, "iperf ")}
	if ts := doc.Start.Timestamp.TimeSecs; ts > 0 {
		out.Measured = time.Unix(ts, 0).UTC()
	}
	for _, s := range []struct {
		name string
		sum  *iperf3Sum
	}{{MetricTCPThroughput, doc.End.SumReceived}, {MetricTCPThroughputSender, doc.End.SumSent}} {
		if s.sum != nil && s.sum.BitsPerSecond > 0 && !math.IsInf(s.sum.BitsPerSecond, 0) {
			out.Metrics = append(out.Metrics, Metric{Name: s.name, Unit: UnitBitsPerSec, Value: s.sum.BitsPerSecond})
		}
	}
	if len(out.Metrics) == 0 {
		return nil, &Error{Line: keyLine("end"), Msg: "iperf3 JSON has no end.sum_received or end.sum_sent bits_per_second (truncated output?)"}
	}
	return out, nil
}

func looksLikeIPerf3JSON(data []byte) bool {
	off, ok := jsonStart(data)
	return ok && bytes.Contains(data[off:], []byte(`"start"`)) &&
		(bytes.Contains(data[off:], []byte(`"end"`)) || bytes.Contains(data[off:], []byte(`"error"`)))
}

func looksLikeIPerf3Text(data []byte) bool {
	return anyLine(data, func(line string) bool {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "iperf3: ") || strings.HasPrefix(t, "Connecting to host ") || iperf3VersionRE.MatchString(t) {
			return true
		}
		row, ok, _ := parseRow(0, t)
		return ok && row.end3 != ""
	})
}

func looksLikeIPerf(data []byte) bool {
	return anyLine(data, func(line string) bool {
		t := strings.TrimSpace(line)
		return intervalRE.MatchString(t) || csvRE.MatchString(t) ||
			strings.HasPrefix(t, "Client connecting to ")
	})
}
