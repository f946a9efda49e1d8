package benchmark

import (
	"slices"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/results/parse"
)

// TestRegistry: the built-in benchmarks are there, speed first; those the
// host drives are not served; an unknown name's error lists the known ones.
func TestRegistry(t *testing.T) {
	if got, want := Names(), []string{Speed, DD, OpenSSL, Route}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if got, want := Served(), []string{Speed, DD, OpenSSL}; !slices.Equal(got, want) {
		t.Errorf("Served() = %v, want %v", got, want)
	}
	if _, err := Lookup("nosuch"); err == nil || !strings.Contains(err.Error(), "speed, dd, openssl, route") {
		t.Errorf("Lookup(nosuch) = %v", err)
	}
	Register(Benchmark{Name: "aaa", Help: "first by name"})
	defer Unregister("aaa")
	if got := Names(); got[0] != Speed || got[1] != "aaa" {
		t.Errorf("Names() = %v: speed first, then by name", got)
	}
	if !strings.HasPrefix(Help(), "speed (built in, pure Go), aaa (first by name), ") {
		t.Errorf("Help() = %q", Help())
	}
	for _, bad := range []string{"", "a b", "speed"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", bad)
				}
			}()
			Register(Benchmark{Name: bad})
		}()
	}
}

// TestOutputFormats: every benchmark the board prints the figures of
// names a format results/parse reads.
func TestOutputFormats(t *testing.T) {
	for _, name := range Names() {
		bm, _ := Lookup(name)
		if bm.HostNetworks {
			if bm.Output != "" {
				t.Errorf("%s: its figures are the host's; it names output %q", name, bm.Output)
			}
			continue
		}
		if !slices.Contains(parse.Formats[1:], bm.Output) {
			t.Errorf("%s: output %q is none of results/parse's formats %v", name, bm.Output, parse.Formats[1:])
		}
	}
}
