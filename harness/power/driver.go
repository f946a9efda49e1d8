// Package power switches bench boards on and off.
package power

import "context"

// Driver switches one board's power.
type Driver interface {
	On(ctx context.Context) error
	Off(ctx context.Context) error
	String() string
}
