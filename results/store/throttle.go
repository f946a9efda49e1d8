package store

import (
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/bootbench/bootbench/results"
)

// throttleJSON is t as the throttle column holds it: NULL for none.
func throttleJSON(t *results.Throttle) (any, error) {
	if t == nil {
		return nil, nil
	}
	b, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("throttle: %w", err)
	}
	return string(b), nil
}

func parseThrottle(s sql.NullString) (*results.Throttle, error) {
	if !s.Valid {
		return nil, nil
	}
	var t results.Throttle
	if err := json.Unmarshal([]byte(s.String), &t); err != nil {
		return nil, err
	}
	return &t, nil
}
