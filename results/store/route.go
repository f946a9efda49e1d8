package store

import (
	"database/sql"
	"encoding/json"

	"github.com/bootbench/bootbench/results"
)

// routeJSON is s as the route_settings column holds it: NULL for none.
func routeJSON(s *results.RouteSettings) (any, error) {
	if s == nil {
		return nil, nil // NULL: not a route run, or one stored before
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

func parseRoute(s sql.NullString) (*results.RouteSettings, error) {
	if !s.Valid {
		return nil, nil
	}
	var r results.RouteSettings
	if err := json.Unmarshal([]byte(s.String), &r); err != nil {
		return nil, err
	}
	return &r, nil
}
