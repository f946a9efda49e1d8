package store

import (
	"context"
	"fmt"

	"github.com/bootbench/bootbench/boards"
)

// NextRep returns the repetition number after the highest stored for board
// at clockMHz, 1 if there is none (runs count from 1, as bootbench run does),
// so imports continue a series of runs.
func (s *Store) NextRep(ctx context.Context, board string, clockMHz boards.MHz) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx,
		s.eng.bind(`SELECT COALESCE(MAX(rep) + 1, 1) FROM runs WHERE board = ? AND clock_mhz = ?`),
		board, clockMHz).Scan(&n)
	if IsDamaged(err) {
		// Read for a write, which does not go ahead.
		return 0, s.damagedWrite(err)
	}
	if err != nil {
		return 0, fmt.Errorf("results: next repetition of %s at %s: %w", board, clockMHz.Figure(), err)
	}
	return n, nil
}
