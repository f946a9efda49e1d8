package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/bootbench/bootbench/results"
)

// runIn is one array argument, not a list of them: a statement whose
// text and plan are the same for every page, where a list of 500
// arguments has the server plan each page's queries anew.
func (pgEngine) runIn(ids []results.RunID) (string, []any) {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	return " = ANY(?)", []any{s}
}

// eachMetric reads the metric rows through pgx itself, on the connection
// in's transaction is on. Through database/sql, pgx's driver turns each
// row's three text columns into strings of their own, and boxes them and
// the value, before a Scan copies them again: for the million rows of a
// comparison of 2 × 5,000 runs, near half of bootbench's time. Here fn
// gets the bytes as they arrived, the value asked for in binary.
func (pgEngine) eachMetric(ctx context.Context, in inTx, query string, args []any, fn metricRow) error {
	return in.conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("read metrics: a connection of %T, not pgx's", dc)
		}
		formats := pgx.QueryResultFormats{pgx.TextFormatCode, pgx.TextFormatCode, pgx.TextFormatCode, pgx.BinaryFormatCode}
		rows, err := c.Conn().Query(ctx, query, append([]any{formats}, args...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		var binaryValue bool
		if fd := rows.FieldDescriptions(); len(fd) == 4 {
			// A URL may ask for the simple protocol, which has every
			// column in text whatever the query asks.
			binaryValue = fd[3].Format == pgx.BinaryFormatCode && fd[3].DataTypeOID == pgtype.Float8OID
		}
		for rows.Next() {
			raw := rows.RawValues()
			v, err := pgFloat(raw[3], binaryValue)
			if err != nil {
				return fmt.Errorf("metric %s of run %s: %w", raw[1], raw[0], err)
			}
			fn(raw[0], raw[1], raw[2], v)
		}
		return rows.Err()
	})
}

// pgFloat is a float8 column's value, in binary (big-endian IEEE 754) or
// in text.
func pgFloat(b []byte, binaryFormat bool) (float64, error) {
	switch {
	case b == nil:
		return 0, fmt.Errorf("value is NULL")
	case !binaryFormat:
		return strconv.ParseFloat(string(b), 64)
	case len(b) != 8:
		return 0, fmt.Errorf("value of %d bytes, not a float8's 8", len(b))
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
}
