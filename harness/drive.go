package harness

import (
	"context"
	"strings"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/boot"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/serialctl"
)

// drive works the bootloader over the console, as the profile's steps say:
// wait for its text, type its commands. It starts at offset from of the
// transcript (the power-on). An expect that times out fails the boot: the
// bootloader never got where the steps need it.
func (r *run) drive(ctx context.Context, con *serialctl.Console, from int) error {
	if r.o.Board.Profile.ClockMethod.SetInFirmware() {
		var err error
		if from, err = r.setFirmwareClock(ctx, con, from); err != nil {
			return err
		}
	}
	_, err := r.steps(ctx, con, from, r.o.Board.Profile.ConsoleSteps, "", true)
	return err
}

// drivenOverConsole: the board is worked over its console from power-on.
func drivenOverConsole(p boards.Profile) bool {
	return len(p.ConsoleSteps) > 0 || p.ClockMethod.SetInFirmware()
}

// stepVars are what a send step can name: {server}, {ip}, {board}, {file}.
func (r *run) stepVars() *strings.Replacer {
	o := r.o
	server, ip := "", ""
	if o.Bench != nil {
		server = o.Bench.ServerIP().String()
	}
	if o.Board.Address.IsValid() {
		ip = o.Board.Address.String()
	}
	file, _ := boot.BootFile(o.Board, netboot.Client{})
	return strings.NewReplacer("{server}", server, "{ip}", ip, "{board}", o.Board.Name, "{file}", file)
}

// tail is the end of b as printable text, for saying where a boot stopped.
func tail(b []byte, n int) string {
	s := serialctl.Printable(b)
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}
