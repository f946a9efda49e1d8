package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/serialctl"
)

// quitKey ends `console --write`: Ctrl-], as telnet and picocom's
// neighbours use, since Ctrl-C has to reach the board (it stops U-Boot's
// autoboot).
const quitKey = 0x1d

func cmdConsole(ctx context.Context, args []string) error {
	fs := newCommand("console", "console BOARD [--inventory FILE] [--write]\n"+
		"       bootbench console --replay FILE [--board PROFILE] [--format text|json]\n\n"+
		"Shows a board's serial console as it arrives, with the same lock a run takes:\n"+
		"while it is open no run, minicom or picocom can have the port, and while a run\n"+
		"has it this fails at once, naming the holder. Read-only unless --write, which\n"+
		"sends what you type (the terminal goes raw: Ctrl-C reaches the board; Ctrl-]\n"+
		"quits). Ctrl-C (or SIGINT) ends a read-only console. An adapter unplugged\n"+
		"while open is picked up again when it comes back.\n\n"+
		"The board comes from the inventory (--inventory, else $BOOTBENCH_INVENTORY,\n"+
		"else $XDG_CONFIG_HOME/bootbench/bench.yaml); the virtual qemu-* boards have\n"+
		"a console only while 'bootbench run' has them up.\n\n"+
		"--replay reads a saved console log instead (your own capture, a forum post,\n"+
		"a mail) and prints what bootbench would have seen: each stage with its line\n"+
		"number, the bootloader and its version, the clock the firmware announced, the\n"+
		"netboot, the kernel, its BogoMIPS and the clock they imply, panics and resets.\n"+
		"CRLF, \"…\", mail quoting and logger timestamps are taken as copying left them.\n"+
		"With --board, the log is held to that board profile. Exit 0 when nothing in it\n"+
		"failed or contradicts the profile, 1 when something does, 2 for bad input.", "")
	inventory := fs.String("inventory", "", "bench inventory (default $BOOTBENCH_INVENTORY, else $XDG_CONFIG_HOME/bootbench/bench.yaml)")
	write := fs.Bool("write", false, "send what you type to the board (raw terminal; Ctrl-] quits)")
	replayFile := fs.String("replay", "", "read a saved console `FILE` instead of a board's console (- for stdin)")
	profile := fs.String("board", "", "with --replay: hold the log to this board `PROFILE` (see 'bootbench boards list')")
	format := fs.String("format", "text", "with --replay: text (for people) or json (for scripts)")
	if err := fs.parseArgs(args); err != nil {
		return err
	}
	if *replayFile != "" {
		if fs.NArg() > 0 || *write || *inventory != "" {
			return usageErr("console: --replay reads a file, not a board: give no BOARD, --write or --inventory with it (see 'bootbench console --help')")
		}
		return replayConsole(*replayFile, *profile, *format)
	}
	if *profile != "" || *format != "text" {
		return usageErr("console: --board and --format go with --replay FILE; a live console is 'bootbench console BOARD'")
	}
	if fs.NArg() != 1 {
		return usageErr("console: name one board: bootbench console BOARD (see 'bootbench console --help')")
	}
	b, err := consoleBoard(ctx, fs.Arg(0), *inventory)
	if err != nil {
		return err
	}
	con, err := serialctl.OpenPort(ctx, b.Console, b.Baud, serialctl.PortOptions{Tee: os.Stdout})
	if errors.Is(err, serialctl.ErrAmbiguous) {
		return usageErr("console: %v", err) // the inventory must say which adapter
	}
	if err != nil {
		return err // it names the console already
	}
	defer con.Close()
	if !*write {
		fmt.Fprintf(os.Stderr, "bootbench: console of %s on %s at %d baud, read-only; Ctrl-C ends it\n", b.Name, b.Console, b.Baud)
		for range con.Lines() { // shown by the Tee; this waits for the end
		}
		return nil
	}
	return typeInto(ctx, con, b)
}

// consoleBoard finds a board that has a console outside a run.
func consoleBoard(ctx context.Context, name, inventory string) (boards.Board, error) {
	var inv *boards.Inventory
	if path := boards.InventoryPath(inventory); path != "" {
		var err error
		if inv, err = boards.LoadInventory(ctx, path); err != nil {
			return boards.Board{}, inventoryErr(err)
		}
	}
	b, err := boards.Resolve(name, inv)
	if err != nil {
		return b, usageErr("console: %v", err)
	}
	if b.Virtual() {
		return b, usageErr("console: %s is a virtual board: its console is QEMU's and exists only during a run ('bootbench run --board %s' shows it)", name, name)
	}
	return b, nil
}

// typeInto sends stdin to the board until Ctrl-], SIGINT or the console
// ends. A terminal is put in raw mode for it and restored after.
func typeInto(ctx context.Context, con *serialctl.Console, b boards.Board) error {
	if term.IsTerminal(int(os.Stdin.Fd())) {
		old, err := term.MakeRaw(int(os.Stdin.Fd()))
		if err != nil {
			return fmt.Errorf("console: put the terminal in raw mode: %w", err)
		}
		defer term.Restore(int(os.Stdin.Fd()), old)
	}
	fmt.Fprintf(os.Stderr, "bootbench: console of %s on %s at %d baud; what you type goes to the board; Ctrl-] quits\r\n", b.Name, b.Console, b.Baud)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	keys := make(chan error, 1)
	go func() { keys <- sendKeys(ctx, con) }()
	for {
		select {
		case err := <-keys:
			cancel()
			con.Close()
			return err
		case _, ok := <-con.Lines():
			if !ok {
				cancel()
				<-keys
				return nil
			}
		}
	}
}

// sendKeys copies stdin to the console until Ctrl-] or ctx ends. It polls
// stdin rather than block in read, so that it returns when ctx ends. At
// the end of stdin (a pipe) it waits for ctx.
func sendKeys(ctx context.Context, con *serialctl.Console) error {
	buf := make([]byte, 256)
	fds := []unix.PollFd{{Fd: int32(os.Stdin.Fd()), Events: unix.POLLIN}}
	for ctx.Err() == nil {
		n, err := unix.Poll(fds, 100)
		if n <= 0 || errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("console: read the keyboard: %w", err)
		}
		n, err = unix.Read(int(os.Stdin.Fd()), buf)
		if n <= 0 {
			if err != nil && !errors.Is(err, unix.EINTR) && !errors.Is(err, unix.EAGAIN) {
				return fmt.Errorf("console: read the keyboard: %w", err)
			}
			<-ctx.Done() // end of input: keep showing the board
			return nil
		}
		p := buf[:n]
		quit := false
		for i, c := range p {
			if c == quitKey {
				p, quit = p[:i], true
				break
			}
		}
		if len(p) > 0 {
			if _, err := con.Write(p); err != nil {
				fmt.Fprintf(os.Stderr, "\r\nbootbench: %v\r\n", err)
			}
		}
		if quit {
			return nil
		}
	}
	return nil
}
