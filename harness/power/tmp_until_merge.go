package power

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/bootbench/bootbench/boards"
)

// Operator is the person at the bench.
type Operator interface {
	Ask(ctx context.Context, msg string) (confirmed bool, err error)
	Tell(msg string)
}

// New makes the driver an inventory entry asks for.
func New(board string, spec boards.PowerSpec, op Operator) (Driver, error) {
	if spec.Driver != boards.PowerCommand {
		return nil, fmt.Errorf("power driver %s: not yet", spec.Driver)
	}
	return &command{board: board, spec: spec}, nil
}

type command struct {
	board string
	spec  boards.PowerSpec
}

func (c *command) String() string                { return fmt.Sprintf("command %q", c.spec.On) }
func (c *command) On(ctx context.Context) error  { return c.run(ctx, c.spec.On) }
func (c *command) Off(ctx context.Context) error { return c.run(ctx, c.spec.Off) }
func (c *command) run(ctx context.Context, line string) error {
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Env = append(os.Environ(), "BOOTBENCH_BOARD="+c.board)
	cmd.WaitDelay = 2 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%q: %w: %s", line, err, out)
	}
	return nil
}
