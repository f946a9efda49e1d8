// Package bootparam is the contract between the host and benchinit: the
// bootbench.* parameters the host puts on the kernel command line and the
// board reads back. Both sides use this one package so the names cannot
// drift apart.
package bootparam

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Params are what the board is told to do.
type Params struct {
	Run     string        // bootbench.run
	Bench   string        // bootbench.bench, default "speed"
	Seconds time.Duration // bootbench.seconds, per test; 0 = the suite's default
	Algs    []string      // bootbench.algs, comma separated
}

// Parse reads the bootbench.* parameters out of a kernel command line.
// Unknown or malformed values are ignored so that a typo leaves a board
// running the defaults and reporting them, rather than hanging at boot.
func Parse(cmdline string) Params {
	p := Params{Bench: "speed"}
	for _, f := range strings.Fields(cmdline) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		switch k {
		case "bootbench.run":
			p.Run = v
		case "bootbench.bench":
			p.Bench = v
		case "bootbench.seconds":
			if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
				p.Seconds = time.Duration(s * float64(time.Second))
			}
		case "bootbench.algs":
			p.Algs = strings.Split(v, ",")
		}
	}
	return p
}

// String renders p as kernel command line parameters.
func (p Params) String() string {
	s := []string{"bootbench.run=" + p.Run}
	if p.Bench != "" {
		s = append(s, "bootbench.bench="+p.Bench)
	}
	if p.Seconds > 0 {
		s = append(s, fmt.Sprintf("bootbench.seconds=%g", p.Seconds.Seconds()))
	}
	if len(p.Algs) > 0 {
		s = append(s, "bootbench.algs="+strings.Join(p.Algs, ","))
	}
	return strings.Join(s, " ")
}
