package power

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/bootbench/bootbench/boards"
)

// CommandTimeout is how long one power command may run. A command that
// starts something long-running (a relay daemon, QEMU) must put it in the
// background (`-daemonize`, `setsid … &`).
const CommandTimeout = 60 * time.Second

// command runs the inventory's shell commands.
type command struct {
	board   string
	on, off string
	timeout time.Duration
}

// cyclingCommand is a command with a cycle command of its own.
type cyclingCommand struct {
	*command
	cycle string
}

func newCommand(board string, spec boards.PowerSpec) (Driver, error) {
	if strings.TrimSpace(spec.On) == "" || strings.TrimSpace(spec.Off) == "" {
		return nil, fmt.Errorf(`power for %s: driver command needs both on and off commands (power: {driver: command, on: "...", off: "..."})`, board)
	}
	c := &command{board: board, on: spec.On, off: spec.Off, timeout: CommandTimeout}
	if strings.TrimSpace(spec.Cycle) != "" {
		return &cyclingCommand{command: c, cycle: spec.Cycle}, nil
	}
	return c, nil
}

func (c *command) String() string { return fmt.Sprintf("command %q", c.on) }

func (c *command) On(ctx context.Context) error  { return c.run(ctx, "on", c.on) }
func (c *command) Off(ctx context.Context) error { return c.run(ctx, "off", c.off) }

func (c *cyclingCommand) Cycle(ctx context.Context) error {
	return c.run(ctx, "power-cycle", c.cycle)
}

// run runs one command with sh -c. Its output goes to unlinked temporary
// files, not pipes: a background child that inherits them cannot hold us
// up the way one holding a pipe open would. The command gets a process
// group of its own so that a timeout or cancellation kills what it is
// still waiting for, while what it has put in the background (setsid,
// -daemonize) lives on as it intends.
func (c *command) run(ctx context.Context, what, cmdline string) error {
	what = fmt.Sprintf("switch %s %s with %q", c.board, what, cmdline)
	stdout, err := unlinkedTemp()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer stdout.Close()
	stderr, err := unlinkedTemp()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer stderr.Close()

	runCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, "sh", "-c", cmdline)
	cmd.Env = append(os.Environ(), "BOOTBENCH_BOARD="+c.board)
	cmd.Stdout, cmd.Stderr = stdout, stderr // stdin stays /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w", what, ctx.Err())
	case runCtx.Err() != nil:
		return fmt.Errorf("%s: no exit within %s, killed (put what must keep running in the background: setsid … &, or -daemonize)", what, c.timeout)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("%s: %s%s", what, exit, quoteLastLine(stderr, stdout))
	}
	return fmt.Errorf("%s: %w", what, err)
}

func unlinkedTemp() (*os.File, error) {
	f, err := os.CreateTemp("", "bootbench-power-")
	if err != nil {
		return nil, fmt.Errorf("capture the command's output: %w", err)
	}
	os.Remove(f.Name())
	return f, nil
}

// quoteLastLine is ": " and the last line of the first file that has one,
// for an error message; "" when the command said nothing.
func quoteLastLine(files ...*os.File) string {
	for _, f := range files {
		if line := lastLine(f); line != "" {
			return ": " + line
		}
	}
	return ""
}

func lastLine(f *os.File) string {
	const tail = 4096
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return ""
	}
	buf := make([]byte, min(size, tail))
	n, _ := f.ReadAt(buf, size-int64(len(buf)))
	lines := bytes.Split(bytes.TrimSpace(buf[:n]), []byte("\n"))
	line := strings.TrimSpace(string(lines[len(lines)-1]))
	if len(line) > 200 {
		line = line[:200] + "…"
	}
	return line
}
