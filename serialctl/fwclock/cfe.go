package fwclock

import (
	"context"
	"fmt"
	"regexp"

	"github.com/bootbench/bootbench/boards"
)

// CFE sets Broadcom CFE's clock in its NVRAM (REFERENCE: CFE reads clkfreq
// as it starts): at "CFE> ", "nvram set clkfreq=MHZ", "nvram commit",
// "reboot". CFE answers every command with "*** command status = N"; 0 is
// success. The board starts again at the new clock, where the profile's
// console steps take it on to the netboot.
type CFE struct{ dialog }

const (
	cfeBanner = "CFE version"
	cfePrompt = "CFE> "
	ctrlC     = "\x03"
)

var cfeStatus = regexp.MustCompile(`\*\*\* command status = (-?\d+)`)

// SetClock stops CFE's autoboot, sets and commits clkfreq and reboots.
// The offset returned is after the reboot was typed, before the new
// banner.
func (c CFE) SetClock(ctx context.Context, from int, mhz boards.MHz) (int, error) {
	off, _, err := c.await(ctx, from, cfeBanner, c.bootTimeout)
	if err != nil {
		return from, err
	}
	if err := c.write(ctrlC); err != nil {
		return off, err
	}
	if off, _, err = c.await(ctx, off, cfePrompt, c.stepTimeout); err != nil {
		return off, err
	}
	for _, cmd := range []string{fmt.Sprintf("nvram set clkfreq=%d", int(mhz)), "nvram commit"} {
		if off, err = c.command(ctx, off, cmd); err != nil {
			return off, err
		}
	}
	c.say("CFE: reboot, to start at %s", mhz)
	if err := c.write("reboot\r"); err != nil {
		return off, err
	}
	off, _, err = c.await(ctx, off, "reboot", c.stepTimeout)
	return off, err
}

// command types cmd at the prompt and waits for the next one; CFE's status
// line must say 0.
func (c CFE) command(ctx context.Context, off int, cmd string) (int, error) {
	c.say("CFE: %s", cmd)
	if err := c.write(cmd + "\r"); err != nil {
		return off, err
	}
	next, out, err := c.await(ctx, off, cfePrompt, c.stepTimeout)
	if err != nil {
		return off, err
	}
	m := cfeStatus.FindStringSubmatch(out)
	switch {
	case m == nil:
		return next, &Refusal{Firmware: "CFE's answer to " + cmd, Missing: `"*** command status = N" line`, Quote: oneLine(out)}
	case m[1] != "0":
		return next, fmt.Errorf("CFE refused %q (command status %s): %s", cmd, m[1], oneLine(out))
	}
	return next, nil
}
