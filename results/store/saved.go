package store

import (
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bootbench/bootbench/results"
)

// A damaged page can drop a metric row, or change its run, name or value,
// without SQLite noticing on the way: the row simply reads differently.
// So each run keeps, in its own row, how many metrics it was saved with
// and a digest of them, and every read compares what it got. Runs saved
// before the store kept them (schema version 3 and older) carry NULL and
// are read as before.

// savedMetrics is what a run's own row says of its metrics.
type savedMetrics struct {
	count  sql.NullInt64
	digest sql.NullString
}

// metricsDigest is the hex sha256 of metrics, whatever their order: name,
// unit and the value's IEEE bits of each, by name.
func metricsDigest(ms []results.Metric) string {
	var d digester
	sum := d.sum(ms)
	return hex.EncodeToString(sum[:])
}

// digester digests the metrics of one run after another in one buffer:
// a read checks every run it reads, a comparison ten thousand of them.
type digester struct{ buf []byte }

// sum is the sha256 that metricsDigest gives in hex.
func (d *digester) sum(ms []results.Metric) [sha256.Size]byte {
	byName := func(a, b results.Metric) int { return strings.Compare(a.Name, b.Name) }
	sorted := ms
	// Read in their key's order, a run's metrics come sorted already.
	if !slices.IsSortedFunc(ms, byName) {
		sorted = slices.Clone(ms)
		slices.SortFunc(sorted, byName)
	}
	b := d.buf[:0]
	for _, m := range sorted {
		v := m.Value
		if v == 0 {
			v = 0 // -0 reads back from SQLite as 0
		}
		b = append(b, m.Name...)
		b = append(b, 0)
		b = append(b, m.Unit...)
		b = append(b, 0)
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(v))
	}
	d.buf = b
	return sha256.Sum256(b)
}

// matches says whether ms digest to want, a metricsDigest.
func (d *digester) matches(ms []results.Metric, want string) bool {
	sum := d.sum(ms)
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	return string(h[:]) == want
}

// DamagedRunError says which runs read otherwise than they were saved.
// It wraps ErrDamaged.
type DamagedRunError struct {
	Runs  []results.RunID // the damaged runs, in the order read
	What  string          // what is wrong with the first
	cause error           // what SQLite said of the first, if it said anything
}

func (e *DamagedRunError) Error() string {
	msg := fmt.Sprintf("run %s %s", e.Runs[0], e.What)
	if n := len(e.Runs) - 1; n > 0 {
		more := e.Runs[1:min(len(e.Runs), 4)]
		var ids []string
		for _, id := range more {
			ids = append(ids, string(id))
		}
		runs := "runs"
		if n == 1 {
			runs = "run"
		}
		msg += fmt.Sprintf("; %d more %s damaged: %s", n, runs, strings.Join(ids, ", "))
		if n > len(more) {
			msg += ", …"
		}
	}
	return msg
}

func (e *DamagedRunError) Unwrap() []error {
	if e.cause != nil {
		return []error{ErrDamaged, e.cause}
	}
	return []error{ErrDamaged}
}

// savedProblem says how r's metrics differ from what its row says it was
// saved with; "" when they do not, or the row says nothing.
func savedProblem(d *digester, r *results.Run, saved savedMetrics) string {
	if saved.count.Valid && int64(len(r.Metrics)) != saved.count.Int64 {
		return fmt.Sprintf("reads %d metrics, but was saved with %d", len(r.Metrics), saved.count.Int64)
	}
	if saved.digest.Valid && !d.matches(r.Metrics, saved.digest.String) {
		return fmt.Sprintf("reads %d metrics that differ from those it was saved with", len(r.Metrics))
	}
	return ""
}

// checkSaved compares every run read with what its row says; nil when all
// agree.
func checkSaved(runs []results.Run, saved []savedMetrics) *DamagedRunError {
	var e *DamagedRunError
	var d digester
	for i := range runs {
		what := savedProblem(&d, &runs[i], saved[i])
		if what == "" {
			continue
		}
		if e == nil {
			e = &DamagedRunError{What: what}
		}
		e.Runs = append(e.Runs, runs[i].ID)
	}
	return e
}
