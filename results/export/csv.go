package export

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/results"
)

// csvHeader is the column contract of `results export --format csv`.
// Columns are only ever added at the end, so scripts that read them by
// position keep working.
var csvHeader = []string{"run", "board", "clock_mhz", "rep", "status", "started", "bench", "tool", "tool_version", "metric", "unit", "value",
	"bootloader", "firmware_clock_mhz"}

// WriteCSV writes runs as RFC 4180 CSV, a header row then one row per run
// and metric, in run order and metric order (see MetricLess): the long
// format spreadsheets and data-frame libraries pivot most easily.
//
// A run without metrics (a failed boot, say) still gets one row with the
// metric, unit and value left empty, so the export accounts for every
// attempt as the JSON export does; filter on status to drop them. Values are
// plain decimals, never exponent form, and times are RFC 3339 in UTC.
// The firmware that booted the run and the clock it announced close each
// row, empty when its console showed none.
func WriteCSV(w io.Writer, runs []results.Run) error {
	return writeAll(NewCSVWriter(w), runs)
}

// csvWriter writes WriteCSV's rows a run at a time; the header goes first,
// whatever follows.
type csvWriter struct {
	cw     *csv.Writer
	header bool
}

// NewCSVWriter writes runs in WriteCSV's shape as they come.
func NewCSVWriter(w io.Writer) RunWriter { return &csvWriter{cw: csv.NewWriter(w)} }

func (c *csvWriter) Write(r *results.Run) error {
	if err := c.writeHeader(); err != nil {
		return err
	}
	lead := []string{
		string(r.ID), r.Board, strconv.Itoa(int(r.ClockMHz)), strconv.Itoa(r.Rep), r.Status,
		jsonTime(r.Started), r.Bench, r.Tool, r.ToolVersion,
	}
	firmware := []string{r.Bootloader, firmwareClock(r.FirmwareClockMHz)}
	if len(r.Metrics) == 0 {
		return c.cw.Write(slices.Concat(lead, []string{"", "", ""}, firmware))
	}
	ms := append([]results.Metric(nil), r.Metrics...)
	results.SortMetrics(ms)
	for _, m := range ms {
		row := slices.Concat(lead, []string{m.Name, m.Unit, strconv.FormatFloat(m.Value, 'f', -1, 64)}, firmware)
		if err := c.cw.Write(row); err != nil {
			return err
		}
	}
	return nil
}

func (c *csvWriter) writeHeader() error {
	if c.header {
		return nil
	}
	c.header = true
	return c.cw.Write(csvHeader)
}

func (c *csvWriter) Close() error {
	if err := c.writeHeader(); err != nil {
		return err
	}
	c.cw.Flush()
	return c.cw.Error()
}

// firmwareClock is a firmware's announced clock as a cell: empty when it
// announced none, which 0 would not say (clock_mhz's 0 is the board's
// default clock).
func firmwareClock(mhz boards.MHz) string {
	if mhz == 0 {
		return ""
	}
	return strconv.Itoa(int(mhz))
}
