package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/bootbench/bootbench/results"
)

// saveEnergy stores r's meter, samples and spans (schema version 6).
func (s *Store) saveEnergy(ctx context.Context, tx writer, r *results.Run) error {
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
func loadEnergy(ctx context.Context, tx *sql.Tx, q runSel, runs []results.Run, index map[results.RunID]int, withSamples bool) error {
	err := eachRow(ctx, tx, `SELECT p.run, p.meter, p.failed`+q.from("power_meters", "p"), q.args, func(rows *sql.Rows) error {
		var run results.RunID
		e := &results.Energy{}
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
	energyOf := func(run results.RunID) *results.Energy {
		if i, ok := index[run]; ok {
			return runs[i].Energy
		}
		return nil
	}
	if err := loadSpans(ctx, tx, q, energyOf); err != nil || !withSamples {
		return err
	}
	return loadSamples(ctx, tx, q, energyOf)
}

// loadSpans attaches the spans to the Energy energyOf gives for their run.
func loadSpans(ctx context.Context, tx *sql.Tx, q runSel, energyOf func(results.RunID) *results.Energy) error {
	return eachRow(ctx, tx, `
		SELECT p.run, p.name, p.from_seconds, p.to_seconds, p.mean_watts, p.joules, p.per_joule, p.unit`+
		q.from("power_spans", "p")+` ORDER BY p.run, p.seq`, q.args, func(rows *sql.Rows) error {
		var run results.RunID
		var sp results.PowerSpan
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
func loadSamples(ctx context.Context, tx *sql.Tx, q runSel, energyOf func(results.RunID) *results.Energy) error {
	return eachRow(ctx, tx, `SELECT p.run, p.seconds, p.watts`+q.from("power_samples", "p")+` ORDER BY p.run, p.seq`, q.args, func(rows *sql.Rows) error {
		var run results.RunID
		var at, w float64
		if err := rows.Scan(&run, &at, &w); err != nil {
			return err
		}
		if e := energyOf(run); e != nil {
			e.Samples = append(e.Samples, results.PowerSample{At: seconds(at), Watts: w})
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
