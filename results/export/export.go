// Package export renders runs read from the store: for people (the
// `results list` table, a run's metrics, an HTML report) and for scripts
// and other tools (JSON, which ReadJSON reads back, CSV, benchstat's
// format, the OpenWrt wiki's table).
package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/results"
)

// number marshals a float64 as a plain decimal. encoding/json switches to
// exponent form for large or tiny values, and scripts reading the export
// (and people diffing it) expect 28782800, not 2.87828e+07.
type number float64

func (n number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("non-finite metric value %v", f)
	}
	return []byte(strconv.FormatFloat(f, 'f', -1, 64)), nil
}

type jsonMetric struct {
	Name  string `json:"name"`
	Unit  string `json:"unit"`
	Value number `json:"value"`
}

type jsonStage struct {
	Name    results.StageName `json:"name"`
	Seconds number            `json:"seconds"`
}

// jsonRun is the export contract: the documented fields first, in the
// documented order, then extras scripts may use but need not.
type jsonRun struct {
	ID       results.RunID `json:"id"`
	Board    string        `json:"board"`
	ClockMHz boards.MHz    `json:"clock_mhz"`
	Status   string        `json:"status"`
	Started  string        `json:"started"`
	Bench    string        `json:"bench"`
	Metrics  []jsonMetric  `json:"metrics"`

	// StartedFrom says where an imported run's started comes from:
	// "output" (its own date) or "imported" (it had none: the import's).
	StartedFrom string `json:"started_from,omitempty"`

	Rep         int             `json:"rep"`
	Reason      string          `json:"reason,omitempty"`
	Tool        string          `json:"tool,omitempty"`
	ToolVersion string          `json:"tool_version,omitempty"`
	Finished    string          `json:"finished,omitempty"`
	Stages      []jsonStage     `json:"stages,omitempty"`
	Kernel      string          `json:"kernel,omitempty"`
	ImageDigest string          `json:"image_digest,omitempty"`
	Hello       json.RawMessage `json:"hello,omitempty"`
	// The clock the board reported and how it was checked (verified,
	// unverified, mismatch); absent for runs that asked for none.
	ClockReportedMHz boards.MHz `json:"clock_reported_mhz,omitempty"`
	ClockCheck       string     `json:"clock_check,omitempty"`
	// Throttle says why a throttled run is (results.Throttle).
	Throttle *results.Throttle `json:"throttle,omitempty"`
	// Route are a route run's settings (window, streams, udp_rate,
	// seconds); absent for other runs.
	Route *results.RouteSettings `json:"route,omitempty"`
	// What the board's power meter measured; absent without one.
	Energy *jsonEnergy `json:"energy,omitempty"`
	// The firmware that booted the run ("RouterBOOT 2.41") and the CPU
	// clock it announced in its banner; absent when its console showed
	// none. Last, as every field added after the contract was set.
	Bootloader       string     `json:"bootloader,omitempty"`
	FirmwareClockMHz boards.MHz `json:"firmware_clock_mhz,omitempty"`
}

type jsonEnergy struct {
	Meter  string `json:"meter"`
	Failed int    `json:"failed_samples"`
	// Samples are there when the export loaded them (html, json).
	Samples []jsonSample `json:"samples,omitempty"`
	Spans   []jsonSpan   `json:"spans"`
}

type jsonSample struct {
	Seconds number `json:"seconds"` // since the run started
	Watts   number `json:"watts"`
}

type jsonSpan struct {
	Name      string `json:"name"` // "idle" or the test's metric
	From      number `json:"from_seconds"`
	To        number `json:"to_seconds"`
	MeanWatts number `json:"mean_watts"`
	Joules    number `json:"joules"`
	PerJoule  number `json:"per_joule,omitempty"`
	Unit      string `json:"unit,omitempty"`
}

func jsonEnergyOf(e *results.Energy) *jsonEnergy {
	if e == nil {
		return nil
	}
	je := &jsonEnergy{Meter: e.Meter, Failed: e.Failed, Spans: []jsonSpan{}}
	for _, s := range e.Samples {
		je.Samples = append(je.Samples, jsonSample{number(s.At.Seconds()), number(s.Watts)})
	}
	for _, s := range e.Spans {
		je.Spans = append(je.Spans, jsonSpan{Name: s.Name, From: number(s.From.Seconds()), To: number(s.To.Seconds()),
			MeanWatts: number(s.MeanWatts), Joules: number(s.Joules), PerJoule: number(s.PerJoule), Unit: s.Unit})
	}
	return je
}

func jsonTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// WriteJSON writes runs in the `results export --format json` shape:
// {"runs":[{"id","board","clock_mhz","status","started","bench","metrics":[...]}, ...]},
// indented by two spaces. Metrics is never null.
func WriteJSON(w io.Writer, runs []results.Run) error {
	return writeAll(NewJSONWriter(w), runs)
}

// RunWriter writes runs one at a time, as a store walk reads them: an
// export holds one run, not the store, whatever the store's size. Close
// ends the document; nothing is complete before it.
type RunWriter interface {
	Write(r *results.Run) error
	Close() error
}

// writeAll writes runs through rw and closes it.
func writeAll(rw RunWriter, runs []results.Run) error {
	for i := range runs {
		if err := rw.Write(&runs[i]); err != nil {
			return err
		}
	}
	return rw.Close()
}

// jsonWriter writes WriteJSON's document a run at a time, byte for byte
// as encoding/json indents the whole: each run is encoded at the depth it
// has inside {"runs": [...]}.
type jsonWriter struct {
	w   io.Writer
	buf bytes.Buffer
	enc *json.Encoder
	n   int
}

// NewJSONWriter writes runs in WriteJSON's shape as they come.
func NewJSONWriter(w io.Writer) RunWriter {
	j := &jsonWriter{w: w}
	j.enc = json.NewEncoder(&j.buf)
	j.enc.SetIndent("    ", "  ") // a run's lines, inside the document's two levels
	j.enc.SetEscapeHTML(false)    // reasons and kernel strings may contain <, >, &
	return j
}

func (j *jsonWriter) Write(r *results.Run) error {
	j.buf.Reset()
	if j.n == 0 {
		j.buf.WriteString("{\n  \"runs\": [\n    ")
	} else {
		j.buf.WriteString(",\n    ")
	}
	if err := j.enc.Encode(jsonRunOf(r)); err != nil {
		return err
	}
	j.buf.Truncate(j.buf.Len() - 1) // Encode's newline: the separator or the end follows
	j.n++
	_, err := j.w.Write(j.buf.Bytes())
	return err
}

func (j *jsonWriter) Close() error {
	end := "\n  ]\n}\n"
	if j.n == 0 {
		end = "{\n  \"runs\": []\n}\n"
	}
	_, err := io.WriteString(j.w, end)
	return err
}

// jsonRunOf is r as the JSON export has it.
func jsonRunOf(r *results.Run) jsonRun {
	jr := jsonRun{
		ID:          r.ID,
		Board:       r.Board,
		ClockMHz:    r.ClockMHz,
		Status:      r.Status,
		Started:     jsonTime(r.Started),
		StartedFrom: r.StartedFrom,
		Bench:       r.Bench,
		Metrics:     make([]jsonMetric, 0, len(r.Metrics)),
		Rep:         r.Rep,
		Reason:      r.Reason,
		Tool:        r.Tool,
		ToolVersion: r.ToolVersion,
		Finished:    jsonTime(r.Finished),
		Kernel:      r.Kernel,
		ImageDigest: r.ImageDigest,

		ClockReportedMHz: r.ClockReportedMHz,
		ClockCheck:       r.ClockCheck,
		Hello:            r.Hello,
		Throttle:         r.Throttle,
		Route:            r.Route,
		Energy:           jsonEnergyOf(r.Energy),
		Bootloader:       r.Bootloader,
		FirmwareClockMHz: r.FirmwareClockMHz,
	}
	ms := append([]results.Metric(nil), r.Metrics...)
	results.SortMetrics(ms)
	for _, m := range ms {
		jr.Metrics = append(jr.Metrics, jsonMetric{m.Name, m.Unit, number(m.Value)})
	}
	for _, st := range r.Stages {
		jr.Stages = append(jr.Stages, jsonStage{st.Name, number(st.Duration.Seconds())})
	}
	return jr
}

// WriteTable writes the human listing for `bootbench results list`.
func WriteTable(w io.Writer, runs []results.Run) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tBOARD\tCLOCK\tSTATUS\tBENCH\tMETRICS\tSTARTED\tREASON")
	for _, r := range runs {
		started := "-"
		if !r.Started.IsZero() {
			// UTC with the zone shown: runs come from several hosts and
			// CI, and a listing must not change with the reader's TZ.
			started = r.Started.UTC().Format("2006-01-02 15:04:05Z")
			if r.StartedFrom == results.StartedImported {
				started += " (imported)" // not when it ran: the output did not say
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n",
			r.ID, r.Board, r.ClockMHz.Label(), r.Status, dash(r.Bench), len(r.Metrics), started, oneLine(r.Why(), 72))
	}
	return tw.Flush()
}

// WriteMetrics writes one run's metrics as an aligned table, in metric
// order (see MetricLess). Throughputs also get a scaled figure, since a raw
// 28782800 B/s is hard to read at a glance.
func WriteMetrics(w io.Writer, r *results.Run) error {
	if len(r.Metrics) == 0 {
		_, err := fmt.Fprintln(w, "no metrics recorded")
		return err
	}
	ms := append([]results.Metric(nil), r.Metrics...)
	results.SortMetrics(ms)
	vals := make([]string, len(ms))
	width := len("VALUE")
	for i, m := range ms {
		vals[i] = results.FormatValue(m.Value)
		width = max(width, len(vals[i]))
	}
	// Values are right-aligned by hand so digits line up; tabwriter's
	// AlignRight would right-align the names too.
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "METRIC\t%*s\tUNIT\n", width, "VALUE")
	for i, m := range ms {
		// The scaled figure goes last and only where there is one, so
		// no line carries trailing padding.
		if h := humanRate(m.Value, m.Unit); h != "" {
			fmt.Fprintf(tw, "%s\t%*s\t%s\t%s\n", m.Name, width, vals[i], m.Unit, h)
		} else {
			fmt.Fprintf(tw, "%s\t%*s\t%s\n", m.Name, width, vals[i], m.Unit)
		}
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine keeps a table row on one line whatever the reason text holds.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len([]rune(s)) > max {
		s = string([]rune(s)[:max-1]) + "…"
	}
	return dash(s)
}

// humanRate scales byte and bit rates with decimal prefixes, the way
// openssl speed and iperf report them.
func humanRate(v float64, unit string) string {
	var base string
	switch unit {
	case "B/s":
		base = "B/s"
	case "bit/s", "bits/s", "b/s":
		base = "bit/s"
	default:
		return ""
	}
	prefixes := []string{"", "k", "M", "G", "T"}
	i := 0
	for math.Abs(v) >= 1000 && i < len(prefixes)-1 {
		v /= 1000
		i++
	}
	if i == 0 {
		return ""
	}
	return fmt.Sprintf("(%.1f %s%s)", v, prefixes[i], base)
}

// ReadJSON reads what WriteJSON wrote (a `results export --format json`
// file): the runs with their identity, status, clock and metrics. A file
// that is not such an export is an error saying what is wrong.
func ReadJSON(r io.Reader) ([]results.Run, error) {
	var in struct {
		Runs *[]jsonRun `json:"runs"`
	}
	dec := json.NewDecoder(r)
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("not a bootbench JSON export: %w", err)
	}
	if in.Runs == nil {
		return nil, errors.New(`not a bootbench JSON export: no "runs" list`)
	}
	runs := make([]results.Run, 0, len(*in.Runs))
	for i, jr := range *in.Runs {
		if jr.ID == "" || jr.Board == "" || !results.ValidStatus(jr.Status) {
			return nil, fmt.Errorf("run %d of the export lacks an id, a board or a known status", i+1)
		}
		r := results.Run{
			ID: jr.ID, Board: jr.Board, ClockMHz: jr.ClockMHz, Status: jr.Status, Rep: jr.Rep,
			Reason: jr.Reason, Bench: jr.Bench, Tool: jr.Tool, ToolVersion: jr.ToolVersion,
			Kernel: jr.Kernel, ImageDigest: jr.ImageDigest, Hello: jr.Hello,
			ClockReportedMHz: jr.ClockReportedMHz, ClockCheck: jr.ClockCheck, Throttle: jr.Throttle,
			Route: jr.Route, StartedFrom: jr.StartedFrom, Bootloader: jr.Bootloader, FirmwareClockMHz: jr.FirmwareClockMHz,
		}
		if jr.Started != "" {
			var err error
			if r.Started, err = time.Parse(time.RFC3339Nano, jr.Started); err != nil {
				return nil, fmt.Errorf("run %s: started: %w", r.ID, err)
			}
		}
		for _, m := range jr.Metrics {
			if m.Name == "" || m.Unit == "" {
				return nil, fmt.Errorf("run %s: a metric lacks a name or unit", r.ID)
			}
			r.Metrics = append(r.Metrics, results.Metric{Name: m.Name, Unit: m.Unit, Value: float64(m.Value)})
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// WriteEnergy writes what a run's power meter measured, for `results
// show`: the meter and its samples, then the idle span and each test
// with its mean watts, joules, length and metric per joule. Nothing for a
// run without a meter.
func WriteEnergy(w io.Writer, r *results.Run) error {
	e := r.Energy
	if e == nil {
		return nil
	}
	failed := ""
	if e.Failed > 0 {
		failed = fmt.Sprintf(", %d failed", e.Failed)
	}
	fmt.Fprintf(w, "\npower    %s: %d samples%s\n", e.Meter, len(e.Samples), failed)
	if len(e.Spans) == 0 {
		_, err := fmt.Fprintln(w, "no test's time known: no idle or per-test figures")
		return err
	}
	width := len("SPAN")
	for _, s := range e.Spans {
		width = max(width, len(s.Name))
	}
	fmt.Fprintf(w, "%-*s  %8s  %9s  %8s  %s\n", width, "SPAN", "MEAN W", "JOULES", "SECONDS", "PER JOULE")
	for _, s := range e.Spans {
		perJoule := "-"
		if s.Unit != "" {
			perJoule = results.FormatValue(roundSig(s.PerJoule, 6)) + " " + s.Unit
		}
		if _, err := fmt.Fprintf(w, "%-*s  %8.2f  %9.2f  %8.2f  %s\n", width, s.Name, s.MeanWatts, s.Joules, (s.To - s.From).Seconds(), perJoule); err != nil {
			return err
		}
	}
	return nil
}

func roundSig(v float64, sig int) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', sig, 64), 64)
	return f
}
