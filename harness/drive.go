package harness

import (
	"context"
	"fmt"
	"strings"

	"github.com/bootbench/bootbench/boot"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/serialctl"
)

// drive works the bootloader over the console, as the profile's steps say:
// wait for its text, type its commands. It starts at offset from of the
// transcript (the power-on). An expect that times out fails the boot: the
// bootloader never got where the steps need it.
func (r *run) drive(ctx context.Context, con *serialctl.Console, from int) error {
	o := r.o
	vars := r.stepVars()
	off := from
	for i, st := range o.Board.Profile.ConsoleSteps {
		n := i + 1
		switch {
		case st.Expect != "":
			sctx, cancel := context.WithTimeout(ctx, st.Timeout)
			next, err := con.Expect(sctx, off, st.Expect)
			cancel()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				return failf(FailBootTimeout, true, "console step %d: %q did not come within %s (after %q)", n, st.Expect, st.Timeout, tail(con.TranscriptFrom(off), 80))
			}
			off = next
		case st.Send != "":
			cmd := vars.Replace(st.Send)
			r.say("console", "step %d: %s", n, cmd)
			if _, err := con.Write([]byte(cmd + "\r")); err != nil {
				return fail(FailSetup, fmt.Errorf("console step %d: type %q: %w", n, cmd, err))
			}
		case st.Key != "":
			if _, err := con.Write([]byte(st.Key)); err != nil {
				return fail(FailSetup, fmt.Errorf("console step %d: type a key: %w", n, err))
			}
		}
	}
	return nil
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
