package rig

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/boards"
)

// TestOpenBenchNoInterface: an inventory whose bench NIC is not on this
// host is a setup failure, exit 2, before anything is served.
func TestOpenBenchNoInterface(t *testing.T) {
	inv := &boards.Inventory{Bench: boards.Bench{Interface: "bbnonic0", Address: netip.MustParsePrefix("198.18.5.1/24")}}
	_, _, err := OpenBench(context.Background(), t.TempDir(), inv, false, nil, func(string) {})
	var se *SetupError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "bench interface bbnonic0: no such interface here") {
		t.Errorf("OpenBench = %v; want a SetupError (exit 2) naming the missing interface", err)
	}
}
