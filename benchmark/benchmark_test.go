package benchmark

import (
	"slices"
	"strings"
	"testing"
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
