//go:build mips || mipsle

package main

import (
	"errors"
	"io"
	"os"

	"github.com/bootbench/bootbench/internal/bootparam"
	"github.com/bootbench/bootbench/internal/frame"
)

// errNoRoute is what a 32-bit MIPS board says when asked to route: its
// image leaves the netlink code out to stay small (see route.go).
var errNoRoute = errors.New("the route benchmark is not in the 32-bit MIPS build of benchinit (its nf_tables netlink code would not fit the small routers' images)")

func runRoute(out *frame.Writer, p bootparam.Params, root string, in io.Reader) error {
	return errNoRoute
}

func openCommands() (*os.File, error) { return nil, errNoRoute }
