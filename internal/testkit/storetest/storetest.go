// Package storetest is what the tests of results' rooms (export,
// compare) share: a fresh store in each engine results can live in, the
// runs they fill it with, and golden files. results/store's own tests
// keep their copy of the same helpers, as they cannot import this package
// (it imports results/store).
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/pgtest"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/store"
)

// T0 is the fixtures' start time: with a fraction, so a store that drops
// one shows.
var T0 = time.Date(2025, 3, 14, 15, 9, 26, 535897000, time.UTC)

// Engine is one engine a store can live in, and how to name a fresh
// store in it.
type Engine struct {
	Name  string
	fresh func(t *testing.T) string // a path or URL where no store is yet
}

// Engines are SQLite and PostgreSQL, a real server the tests start
// themselves (internal/testkit/pgtest); call StopShared when the tests end.
var Engines = []Engine{
	{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "results.db") }},
	{"postgres", freshDatabase},
}

// StopShared stops the PostgreSQL server the tests shared; for TestMain.
func StopShared() { pgtest.StopShared() }

func freshDatabase(t *testing.T) string {
	t.Helper()
	url, err := pgtest.Shared(t).NewDatabase(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// EachEngine runs test once per engine, as subtests named after them.
func EachEngine(t *testing.T, test func(t *testing.T, e Engine)) {
	t.Helper()
	for _, e := range Engines {
		t.Run(e.Name, func(t *testing.T) { test(t, e) })
	}
}

// Open opens a fresh store, closed when the test ends.
func (e Engine) Open(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.Open(e.fresh(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Fill stores runs in a fresh store of engine e and returns it.
func (e Engine) Fill(t *testing.T, runs []results.Run) *store.Store {
	t.Helper()
	s := e.Open(t)
	for i := range runs {
		if err := s.SaveRun(context.Background(), &runs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// SampleRun is a run with every field set, as the store tests' own.
func SampleRun(id string, started time.Time) *results.Run {
	return &results.Run{
		ID:       results.RunID(id),
		Board:    "qemu-x86_64",
		ClockMHz: 1000,
		Rep:      2,
		Status:   results.StatusOK,

		ClockReportedMHz: 998,
		ClockCheck:       results.ClockVerified,
		Bench:            "openssl",
		Tool:             "openssl",
		ToolVersion:      "3.0.13",
		Started:          started,
		Finished:         started.Add(42*time.Second + 5*time.Millisecond),
		Stages: []results.Stage{
			{Name: "dhcp", Duration: 1200 * time.Millisecond},
			{Name: "tftp", Duration: 3*time.Second + 1},
			{Name: "kernel", Duration: 7 * time.Second},
			{Name: "bench", Duration: 30 * time.Second},
		},
		ImageDigest: "sha256:0123abcd",
		Kernel:      "6.1.0-31-amd64",
		Bootloader:  "iPXE 1.0.0+git-20190125.36a4c85-5.1",
		Hello:       json.RawMessage(`{"arch":"amd64","bogomips":4800.12}`),
		Transcript:  []byte("\x00boot\r\n@BB1 0 hello {} 00000000\r\n\xff"),
		RawOutput:   []byte("version: 3.0.13\n"),
		Metrics: []results.Metric{
			{Name: "md5@16", Unit: "B/s", Value: 123456},
			{Name: "sha256@1024", Unit: "B/s", Value: 28782800},
			{Name: "rsa2048-sign", Unit: "op/s", Value: 123.4},
		},
	}
}

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// Golden compares got with testdata/name, or with -update rewrites it.
func Golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}
