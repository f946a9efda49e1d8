package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/bootbench/bootbench/internal/testkit/pgtest"
)

// The store suite runs against every engine a store can live in: each
// test that stores runs does so in a subtest per engine, from a fresh
// store. PostgreSQL is a real server the tests start themselves
// (internal/testkit/pgtest); with BOOTBENCH_E2E=1 a machine without one fails the
// PostgreSQL subtests rather than skipping them.

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// engineKind is one engine, and how to name a fresh store in it.
type engineKind struct {
	name  string
	fresh func(t *testing.T) string // a path or URL where no store is yet
}

var engineKinds = []engineKind{
	// sub: Open must create the directory.
	{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "sub", "results.db") }},
	{"postgres", freshDatabase},
}

// freshDatabase is a new, empty database in the shared test cluster.
func freshDatabase(t *testing.T) string {
	t.Helper()
	url, err := pgtest.Shared(t).NewDatabase(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// eachEngine runs test once per engine, as subtests named after them.
func eachEngine(t *testing.T, test func(t *testing.T, e engineKind)) {
	t.Helper()
	for _, e := range engineKinds {
		t.Run(e.name, func(t *testing.T) { test(t, e) })
	}
}

// open opens a fresh store, closed when the test ends.
func (e engineKind) open(t *testing.T) (*Store, string) {
	t.Helper()
	loc := e.fresh(t)
	s, err := Open(loc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, loc
}
