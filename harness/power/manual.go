package power

import (
	"context"
	"fmt"
)

// manual is the operator's hand on the switch. With nobody at a terminal to
// confirm, On only says what to do and returns: the board's DHCP request or
// console output is then what shows it is on.
type manual struct {
	board string
	op    Operator
}

func (m *manual) String() string { return "manual" }

func (m *manual) On(ctx context.Context) error {
	return m.ask(ctx, "Power on "+m.board+" now")
}

// Off does not wait: a board left on does no harm, and the operator may
// have another board to attend to.
func (m *manual) Off(ctx context.Context) error {
	m.op.Tell("You may power off " + m.board + " now.")
	return nil
}

// Cycle asks once rather than telling "power off" and then asking "power
// on" a moment later.
func (m *manual) Cycle(ctx context.Context) error {
	return m.ask(ctx, "Power-cycle "+m.board+" now (off, a few seconds, on)")
}

func (m *manual) ask(ctx context.Context, msg string) error {
	if _, err := m.op.Ask(ctx, msg); err != nil {
		return fmt.Errorf("wait for the operator to switch %s: %w", m.board, err)
	}
	return nil
}
