package parse

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Metric names of dd runs.
const (
	MetricDDWrite = "dd-write"
	MetricDDRead  = "dd-read"
)

var (
	// ddRE is dd's summary line:
	//   GNU coreutils ≥ 8.24  16777216 bytes (17 MB, 16 MiB) copied, 0.0141379 s, 1.2 GB/s
	//   older GNU             134217728 bytes (134 MB) copied, 0.220513 s, 609 MB/s
	//   GNU, under 1 kB       3 bytes copied, 9.44e-05 s, 31.8 kB/s
	//   BusyBox               8388608 bytes (8.0MB) copied, 10.029590 seconds, 816.8KB/s
	ddRE = regexp.MustCompile(`^([0-9]+) bytes? (?:\([^)]*\) )?copied, ([0-9]+(?:\.[0-9]*)?(?:e[-+]?[0-9]+)?) s(?:econds)?, \S`)
	// bsdDDRE is the BSD (and macOS) summary line:
	//   67108864 bytes transferred in 0.009185 secs (7306376680 bytes/sec)
	bsdDDRE = regexp.MustCompile(`^([0-9]+) bytes transferred in ([0-9]+(?:\.[0-9]*)?) secs \(`)
	// ddStartRE is how a summary line starts, to tell one cut short from
	// other text.
	ddStartRE = regexp.MustCompile(`^[0-9]+ bytes? (\(|copied|transferred)`)
	// ddMarkerRE is a line saying what the dd runs after it measure.
	ddMarkerRE = regexp.MustCompile(`^#\s*(dd-read|dd-write)\s*$`)
)

// DD parses dd's summary lines into bytes/s, computed from the byte count
// and seconds dd printed rather than its rate, which is rounded to two or
// three digits and in units that differ (GNU's MB are 10^6 bytes,
// BusyBox's 2^20).
//
// dd cannot say whether it measured a read or a write, so each figure is
// named metric (MetricDDWrite if empty) unless a marker line before it
// says otherwise: "# dd-read" or "# dd-write" on a line of its own names
// every figure after it, up to the next marker. A script running both
// would print:
//
//	echo "# dd-write"; dd if=/dev/zero of=/mnt/f bs=1M count=64 conv=fsync 2>&1
//	echo "# dd-read";  dd if=/mnt/f of=/dev/null bs=1M 2>&1
//
// GNU dd's status=progress updates, which share the summary's format, are
// told apart by the carriage returns that overwrite them and skipped.
func DD(r io.Reader, metric string) (*Output, error) {
	if metric == "" {
		metric = MetricDDWrite
	}
	if strings.ContainsAny(metric, " \t\r\n") {
		return nil, fmt.Errorf("dd metric name %q has white space", metric)
	}
	out := &Output{Tool: "dd"}
	name := metric
	problem := 0 // first "dd: ..." message, e.g. a write error
	err := eachLine(r, func(n int, line string) error {
		if strings.Contains(line, "\r") {
			return nil // status=progress
		}
		t := strings.TrimSpace(line)
		if m := ddMarkerRE.FindStringSubmatch(t); m != nil {
			name = m[1]
			return nil
		}
		m := ddRE.FindStringSubmatch(t)
		if m == nil {
			m = bsdDDRE.FindStringSubmatch(t)
		}
		if m == nil {
			if ddStartRE.MatchString(t) {
				return &Error{Line: n, Msg: fmt.Sprintf("dd summary %q has no byte count and seconds (truncated output?)", t)}
			}
			if problem == 0 && strings.HasPrefix(t, "dd: ") {
				problem = n
			}
			return nil
		}
		b, err1 := strconv.ParseFloat(m[1], 64)
		secs, err2 := strconv.ParseFloat(m[2], 64)
		if err1 != nil || err2 != nil {
			return &Error{Line: n, Msg: fmt.Sprintf("dd summary %q: byte count or seconds is not a number", t)}
		}
		if secs <= 0 || b <= 0 {
			return &Error{Line: n, Msg: fmt.Sprintf("dd copied %s bytes in %s seconds: no rate to compute", m[1], m[2])}
		}
		out.Metrics = append(out.Metrics, Metric{Name: name, Unit: UnitBytesPerSec, Value: b / secs, Line: n})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out.Metrics) == 0 {
		if problem > 0 {
			return nil, &Error{Line: problem, Msg: "dd reported a failure and no summary"}
		}
		return nil, &Error{Line: 1, Msg: `no dd results: found no "<n> bytes ... copied, <t> s, <rate>" line`}
	}
	return out, nil
}

func looksLikeDD(data []byte) bool {
	return anyLine(data, func(line string) bool {
		t := strings.TrimSpace(line)
		return ddStartRE.MatchString(t) || ddMarkerRE.MatchString(t)
	})
}
