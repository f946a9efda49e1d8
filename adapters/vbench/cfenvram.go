package vbench

import (
	"slices"
	"strconv"
	"strings"

	"github.com/bootbench/bootbench/boards"
)

// The virtual CFE's NVRAM, as CFE keeps it on a WRT54G: name=value pairs
// in RAM, read from flash as CFE starts; "nvram set NAME=VALUE", "nvram
// get NAME", "nvram unset NAME" and "nvram show" work on that copy, and
// "nvram commit" writes it to flash. CFE sets the CPU clock from clkfreq
// (MHZ[,SBMHZ]) as it starts (REFERENCE); the twin runs the kernel at it
// and, for a clock QEMU cannot make, at its own default, as a CFE whose
// table lacks the figure ignores it.

// cfeNVRAMFile is NVRAM's file in the board's flash directory.
const cfeNVRAMFile = "nvram.json"

// cfeStockMHz is what CFE announces on a WRT54G v3 whose clock is not the
// twin's (the BCM4712's stock clock); cfeTwinDefaultMHz the clock of a
// twin whose clkfreq names none it can make.
const (
	cfeStockMHz       = 216
	cfeTwinDefaultMHz = twinFactoryMHz
)

// clock is the CPU clock CFE starts at.
func (r *cfeROM) clock() int {
	if !r.ownClock {
		return cfeStockMHz
	}
	cpu, _, _ := strings.Cut(r.nvram["clkfreq"], ",")
	mhz, err := strconv.Atoi(strings.TrimSpace(cpu))
	if err != nil {
		return cfeTwinDefaultMHz
	}
	if _, err := boards.IcountShift(boards.MHz(mhz)); err != nil {
		return cfeTwinDefaultMHz
	}
	return mhz
}

// nvramCommand is "nvram ...".
func (r *cfeROM) nvramCommand(args []string) int {
	if len(args) == 0 {
		r.say("Usage: nvram [get|set|unset|show|commit] ...\r\n")
		return cfeErrInvParam
	}
	switch {
	case args[0] == "set" && len(args) == 2 && strings.Contains(args[1], "="):
		k, v, _ := strings.Cut(args[1], "=")
		r.nvram[k] = v
	case args[0] == "get" && len(args) == 2:
		if v, ok := r.nvram[args[1]]; ok {
			r.say("%s\r\n", v)
		}
	case args[0] == "unset" && len(args) == 2:
		delete(r.nvram, args[1])
	case args[0] == "show" && len(args) == 1:
		keys := make([]string, 0, len(r.nvram))
		for k := range r.nvram {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			r.say("%s=%s\r\n", k, r.nvram[k])
		}
	case args[0] == "commit" && len(args) == 1:
		if err := saveFlash(r.flash, cfeNVRAMFile, r.nvram); err != nil {
			r.say("Could not commit NVRAM: %v\r\n", err)
			return cfeErr
		}
	default:
		r.say("Invalid argument: %s\r\n", strings.Join(args, " "))
		return cfeErrInvParam
	}
	return cfeOK
}
