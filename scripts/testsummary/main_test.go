package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A go test -json stream (testdata/events.json, from a real run of two
// packages, one failing) relays as go test prints it, and the slowest
// leaf tests follow.
func TestRelayGolden(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "events.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	times := relay(bytes.NewReader(in), &out)
	printSlowest(&out, times, 3)
	printCounts(&out, times)
	golden := filepath.Join("testdata", "events.golden")
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		os.WriteFile(golden, out.Bytes(), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("got:\n%s\nwant:\n%s", out.Bytes(), want)
	}
}
