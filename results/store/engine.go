package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/bootbench/bootbench/results"
)

// engine is what differs between the databases a store can live in:
// a SQLite file, or a PostgreSQL database shared by a lab. The store's
// queries are written once, in the SQL both speak, with ? placeholders;
// opening, marking and checking a store are each engine's own (open.go,
// postgres.go).
type engine interface {
	// bind rewrites a query's ? placeholders the way the driver wants.
	bind(query string) string
	// readTx is how a read that must see one snapshot of the store begins.
	readTx() *sql.TxOptions
	// conflict says what a failed write means when another writer stored
	// the same run id (ErrExists) or the same imported input
	// (ErrDuplicateInput) first; nil when err is something else.
	conflict(err error) error
	// schemaVersion reads how many migrations the store has had.
	schemaVersion(ctx context.Context, q queryer) (int, error)
	// problems lists what the engine's consistency checks find.
	problems(ctx context.Context, db *sql.DB) ([]string, error)
	// eachMetric calls fn with each row of query, a run's id, a
	// metric's name, unit and value, read inside in's transaction: a
	// comparison reads a million of them.
	eachMetric(ctx context.Context, in inTx, query string, args []any, fn metricRow) error
	// runIn follows a run id to say it is one of ids (not empty), with
	// its arguments: see runSel.
	runIn(ids []results.RunID) (string, []any)
}

// queryer is what reads go through: the database or a transaction.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// sqliteEngine is a store in one SQLite file.
type sqliteEngine struct{}

func (sqliteEngine) bind(q string) string { return q }

func (sqliteEngine) readTx() *sql.TxOptions { return &sql.TxOptions{ReadOnly: true} }

// conflict is nil: SQLite's write transactions are immediate, so SaveRun's
// own checks inside the transaction see every earlier writer.
func (sqliteEngine) conflict(error) error { return nil }

func (sqliteEngine) schemaVersion(ctx context.Context, q queryer) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v)
	return v, err
}

func (sqliteEngine) problems(ctx context.Context, db *sql.DB) ([]string, error) {
	return integrityProblems(ctx, db)
}

func (sqliteEngine) runIn(ids []results.RunID) (string, []any) {
	return " IN (?" + strings.Repeat(", ?", len(ids)-1) + ")", anys(ids)
}

func (sqliteEngine) eachMetric(ctx context.Context, in inTx, query string, args []any, fn metricRow) error {
	return eachMetricSQL(ctx, in, query, args, fn)
}

// bindDollar numbers ? placeholders $1, $2, ... as PostgreSQL wants them.
// A ? inside a quoted literal or identifier is left alone.
func bindDollar(q string) string {
	var b strings.Builder
	n := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
