package results

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"
)

// Energy is what a run's power meter measured: its samples, from power-on
// to power-off, and the figures derived from them (see results/energy).
// A run on a switch without a meter has none.
type Energy struct {
	// Meter names the meter as its driver does ("tasmota
	// http://198.18.5.7 relay 1"), without credentials.
	Meter string
	// Failed counts the samples the meter did not give.
	Failed int
	// Samples are loaded with a run's transcript (Filter.WithTranscript,
	// Store.Run) or when asked (Filter.WithSamples): a listing leaves
	// them out.
	Samples []PowerSample
	// Spans are the idle span (Name SpanIdle), then one per test, in the
	// order the board ran them.
	Spans []PowerSpan
}

// PowerSample is one reading of the meter.
type PowerSample struct {
	At    time.Duration // since the run started (Run.Started)
	Watts float64
}

// SpanIdle names the span before the benchmark's first test.
const SpanIdle = "idle"

// PowerSpan is a stretch of the run and its power: before the benchmark
// (SpanIdle), or one test, named as its metric ("aes-128-cbc@1024").
type PowerSpan struct {
	Name     string
	From, To time.Duration // since the run started
	// MeanWatts is Joules over the span's length.
	MeanWatts float64
	Joules    float64
	// PerJoule is the test's metric over MeanWatts, in Unit: bytes per
	// joule for a throughput in B/s ("B/J"), operations per joule for
	// ops/s ("ops/J"). 0 and "" for the idle span.
	PerJoule float64
	Unit     string
}

// Idle is e's span before the benchmark; ok is false when there is none.
func (e *Energy) Idle() (PowerSpan, bool) {
	return e.Span(SpanIdle)
}

// Span is e's span called name; ok is false when there is none.
func (e *Energy) Span(name string) (PowerSpan, bool) {
	if e == nil {
		return PowerSpan{}, false
	}
	for _, s := range e.Spans {
		if s.Name == name {
			return s, true
		}
	}
	return PowerSpan{}, false
}

// PerJouleUnit is the energy efficiency's unit for a metric's unit: B/s
// gives B/J, ops/s ops/J; "" when the unit is no rate.
func PerJouleUnit(metricUnit string) string {
	if u, ok := strings.CutSuffix(metricUnit, "/s"); ok && u != "" {
		return u + "/J"
	}
	return ""
}

func (e *Energy) validate(id RunID) error {
	if e == nil {
		return nil
	}
	finite := func(vs ...float64) bool {
		for _, v := range vs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
		return true
	}
	for _, s := range e.Samples {
		if !finite(s.Watts) {
			return fmt.Errorf("run %s: power sample at %s is %v W", id, s.At, s.Watts)
		}
	}
	for _, s := range e.Spans {
		if s.Name == "" || !finite(s.MeanWatts, s.Joules, s.PerJoule) {
			return fmt.Errorf("run %s: power span %q has no name or a non-finite figure", id, s.Name)
		}
	}
	return nil
}

// saveEnergy stores r's meter, samples and spans (schema version 6).
func (s *Store) saveEnergy(ctx context.Context, tx *sql.Tx, r *Run) error {
	e := r.Energy
	if e == nil {
		return nil
	}
	if _, err := tx.ExecContext(ctx, s.eng.bind(`INSERT INTO power_meters(run, meter, failed) VALUES(?, ?, ?)`), r.ID, cleanText(e.Meter), e.Failed); err != nil {
		return fmt.Errorf("power meter: %w", err)
	}
	samples := make([][]any, len(e.Samples))
	for i, p := range e.Samples {
		samples[i] = []any{r.ID, i, p.At.Seconds(), p.Watts}
	}
	if err := insertRows(ctx, tx, s.eng, `INSERT INTO power_samples(run, seq, seconds, watts) VALUES`, samples); err != nil {
		return fmt.Errorf("power samples: %w", err)
	}
	spans := make([][]any, len(e.Spans))
	for i, p := range e.Spans {
		spans[i] = []any{r.ID, i, cleanText(p.Name), p.From.Seconds(), p.To.Seconds(), p.MeanWatts, p.Joules, p.PerJoule, cleanText(p.Unit)}
	}
	if err := insertRows(ctx, tx, s.eng, `INSERT INTO power_spans(run, seq, name, from_seconds, to_seconds, mean_watts, joules, per_joule, unit) VALUES`, spans); err != nil {
		return fmt.Errorf("power spans: %w", err)
	}
	return nil
}

// loadEnergy attaches the selected runs' meters and spans, and their
// samples when withSamples.
func loadEnergy(ctx context.Context, tx *sql.Tx, cond string, args []any, runs []Run, index map[RunID]int, withSamples bool) error {
	err := eachRow(ctx, tx, `SELECT p.run, p.meter, p.failed FROM power_meters p JOIN runs r ON r.id = p.run`+cond, args, func(rows *sql.Rows) error {
		var run RunID
		e := &Energy{}
		if err := rows.Scan(&run, &e.Meter, &e.Failed); err != nil {
			return err
		}
		if i, ok := index[run]; ok {
			runs[i].Energy = e
		}
		return nil
	})
	if err != nil {
		return err
	}
	energyOf := func(run RunID) *Energy {
		if i, ok := index[run]; ok {
			return runs[i].Energy
		}
		return nil
	}
	if err := loadSpans(ctx, tx, cond, args, energyOf); err != nil || !withSamples {
		return err
	}
	return loadSamples(ctx, tx, cond, args, energyOf)
}

// loadSpans attaches the spans to the Energy energyOf gives for their run.
func loadSpans(ctx context.Context, tx *sql.Tx, cond string, args []any, energyOf func(RunID) *Energy) error {
	return eachRow(ctx, tx, `
		SELECT p.run, p.name, p.from_seconds, p.to_seconds, p.mean_watts, p.joules, p.per_joule, p.unit
		FROM power_spans p JOIN runs r ON r.id = p.run`+cond+` ORDER BY p.run, p.seq`, args, func(rows *sql.Rows) error {
		var run RunID
		var sp PowerSpan
		var from, to float64
		if err := rows.Scan(&run, &sp.Name, &from, &to, &sp.MeanWatts, &sp.Joules, &sp.PerJoule, &sp.Unit); err != nil {
			return err
		}
		sp.From, sp.To = seconds(from), seconds(to)
		if e := energyOf(run); e != nil {
			e.Spans = append(e.Spans, sp)
		}
		return nil
	})
}

// loadSamples attaches the samples as loadSpans the spans.
func loadSamples(ctx context.Context, tx *sql.Tx, cond string, args []any, energyOf func(RunID) *Energy) error {
	return eachRow(ctx, tx, `
		SELECT p.run, p.seconds, p.watts FROM power_samples p JOIN runs r ON r.id = p.run`+cond+`
		ORDER BY p.run, p.seq`, args, func(rows *sql.Rows) error {
		var run RunID
		var at, w float64
		if err := rows.Scan(&run, &at, &w); err != nil {
			return err
		}
		if e := energyOf(run); e != nil {
			e.Samples = append(e.Samples, PowerSample{At: seconds(at), Watts: w})
		}
		return nil
	})
}

// eachRow runs query and hands each row to scan.
func eachRow(ctx context.Context, tx *sql.Tx, query string, args []any, scan func(*sql.Rows) error) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

func seconds(s float64) time.Duration {
	return time.Duration(math.Round(s * float64(time.Second)))
}
