package parse

import (
	"bytes"
	"fmt"
	"strings"
)

// Options tune ParseWith.
type Options struct {
	// ToolVersion is the version of what printed the output, for output
	// that does not say: openssl speed -mr (which needs it to read
	// public-key figures of openssl before 1.1.1 when their shape cannot
	// tell), iperf 2, dd, tables pasted without their version line. An
	// output that names another version is an error.
	ToolVersion string
	// Table picks one of the benchmark outputs the input holds, from 1.
	// 0: the input must hold exactly one.
	Table int
}

// TablesError is what ParseWith returns when the input holds several
// benchmark outputs (a forum post pasting several openssl speed runs,
// output repeated in one capture) and Options.Table picks none. Storing
// them as one would pool runs and clash on metric names.
type TablesError struct {
	Tables []*Output
}

func (e *TablesError) Error() string {
	var s []string
	for i, t := range e.Tables {
		s = append(s, fmt.Sprintf("%d at line %d (%s)", i+1, t.Line, t.Summary()))
	}
	return fmt.Sprintf("holds %d benchmark outputs: %s; pick one", len(e.Tables), strings.Join(s, "; "))
}

// Summary describes o in a few words for a person picking among several:
// what printed it and its first metrics.
func (o *Output) Summary() string {
	var names []string
	for _, m := range o.Metrics {
		name, _, _ := strings.Cut(m.Name, "@")
		if len(names) == 0 || names[len(names)-1] != name {
			names = append(names, name)
		}
	}
	if len(names) > 3 {
		names = append(names[:3], "…")
	}
	who := o.Tool
	if o.Version != "" {
		who += " " + o.Version
	}
	return fmt.Sprintf("%s: %s", who, strings.Join(names, ", "))
}

// ParseWith parses data as the named format (one of Formats) and returns
// the benchmark output o.Table picks; see Tables.
func ParseWith(format string, data []byte, o Options) (*Output, error) {
	tables, err := Tables(format, data, o.ToolVersion)
	if err != nil {
		return nil, err
	}
	switch {
	case o.Table < 0:
		return nil, fmt.Errorf("table %d: tables count from 1", o.Table)
	case o.Table == 0 && len(tables) == 1:
		return tables[0], nil
	case o.Table == 0:
		return nil, &TablesError{Tables: tables}
	case o.Table > len(tables):
		return nil, fmt.Errorf("no table %d: the output holds %d", o.Table, len(tables))
	}
	return tables[o.Table-1], nil
}

// Tables parses data as the named format and returns every benchmark
// output it holds, in input order, each with the lines it spans. An
// output begins at a version line or the start of a new openssl speed
// report ("The 'numbers' are…", -mr's +H) once the one before has
// figures, and wherever a metric repeats: the same figure twice cannot be
// one run. toolVersion is Options.ToolVersion.
func Tables(format string, data []byte, toolVersion string) ([]*Output, error) {
	if format == "auto" {
		f, err := detect(data)
		if err != nil {
			return nil, err
		}
		format = f
	}
	var tables []*Output
	var err error
	switch format {
	case "openssl":
		tables, err = openSSLTables(bytes.NewReader(data))
	case "openssl-mr":
		tables, err = openSSLMRTables(bytes.NewReader(data), toolVersion)
	case "iperf", "iperf3", "dd":
		var out *Output
		out, err = parseOne(format, data)
		if err == nil {
			tables = splitRepeats(out)
		}
	default:
		return nil, fmt.Errorf("%w %q: want one of %s", ErrUnknownFormat, format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return nil, err
	}
	lines := lineCount(data)
	for i, t := range tables {
		if i == 0 {
			t.FirstLine = 1
		}
		if i == len(tables)-1 {
			t.LastLine = lines
		}
		if err := applyVersion(t, toolVersion, format); err != nil {
			return nil, err
		}
	}
	return tables, nil
}

func parseOne(format string, data []byte) (*Output, error) {
	switch format {
	case "iperf":
		return IPerf(bytes.NewReader(data))
	case "iperf3":
		return IPerf3(bytes.NewReader(data))
	}
	return DD(bytes.NewReader(data), MetricDDWrite)
}

// applyVersion gives t the version the caller knows when the output did
// not say, and refuses one that contradicts what it said.
func applyVersion(t *Output, toolVersion, format string) error {
	v := strings.TrimSpace(toolVersion)
	if v == "" {
		return nil
	}
	if strings.HasPrefix(format, "openssl") {
		hv, ok := versionHint(v)
		if !ok {
			return fmt.Errorf("openssl version %q: want a version such as 1.0.2u or an `openssl version` line", v)
		}
		v = hv
	}
	switch {
	case t.Version == "":
		t.Version = v
	case t.Version != v:
		return &Error{Line: t.Line, Msg: fmt.Sprintf("the output says it is %s %s, not %s", t.Tool, t.Version, v)}
	}
	return nil
}

func lineCount(data []byte) int {
	n := bytes.Count(data, []byte("\n"))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// piece is what a parser saw on one line, in input order, for cutting the
// input into outputs.
type piece struct {
	line    int
	kind    pieceKind
	version string // pieceVersion: what the line says
	metric  Metric // pieceMetric
	rec     int    // openssl -mr: the index of the +F line the metric came from
}

type pieceKind int

const (
	pieceMetric  pieceKind = iota
	pieceVersion           // a version line: a new output begins here if the current one has figures
	pieceStart             // the start of a report ("The 'numbers' are…", +H): likewise
	pieceHeader            // a table header: where an output begun by a repeated metric starts
)

// cut is one output's share of the pieces.
type cut struct {
	line, first, last int // where it starts; the lines it spans
	version           string
	metrics           []piece
}

// cutPieces cuts pieces into outputs (see Tables). Each output spans from
// the line after the previous one's last figure to its own last figure;
// the caller stretches the first to line 1 and the last to the end.
func cutPieces(pieces []piece) []*cut {
	var cuts []*cut
	cur := &cut{}
	names := map[string]bool{}
	pending := 0 // the earliest version, start or header line since the last figure
	lastFigure := 0
	next := func() {
		cuts = append(cuts, cur)
		cur, names = &cut{first: lastFigure + 1}, map[string]bool{}
	}
	for _, p := range pieces {
		switch p.kind {
		case pieceVersion, pieceStart:
			if len(cur.metrics) > 0 {
				next()
			}
			if pending == 0 {
				pending = p.line
			}
			if p.kind == pieceVersion && cur.version == "" {
				cur.version = p.version
			}
		case pieceHeader:
			if pending == 0 {
				pending = p.line
			}
		case pieceMetric:
			if names[p.metric.Name] {
				next()
			}
			if len(cur.metrics) == 0 {
				cur.line = p.line
				if pending != 0 {
					cur.line = pending
				}
			}
			names[p.metric.Name] = true
			cur.metrics = append(cur.metrics, p)
			cur.last, lastFigure, pending = p.line, p.line, 0
		}
	}
	if len(cur.metrics) > 0 {
		cuts = append(cuts, cur)
	} else if cur.version != "" && len(cuts) > 0 && cuts[len(cuts)-1].version == "" {
		// A version line after the figures, as `openssl speed -mr;
		// openssl version` prints it, belongs to the output before.
		cuts[len(cuts)-1].version = cur.version
	}
	if len(cuts) > 0 && cuts[0].first == 0 {
		cuts[0].first = 1
	}
	return cuts
}

// splitRepeats cuts out wherever a metric repeats (two dd runs in one
// capture); its Line and spans come from the metrics' lines.
func splitRepeats(out *Output) []*Output {
	pieces := make([]piece, len(out.Metrics))
	for i, m := range out.Metrics {
		pieces[i] = piece{line: m.Line, kind: pieceMetric, metric: m}
	}
	var tables []*Output
	for _, c := range cutPieces(pieces) {
		t := &Output{Tool: out.Tool, Version: out.Version, Line: c.line, FirstLine: c.first, LastLine: c.last, Measured: out.Measured}
		for _, p := range c.metrics {
			t.Metrics = append(t.Metrics, p.metric)
		}
		tables = append(tables, t)
	}
	return tables
}
