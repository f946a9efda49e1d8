package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/serialctl"
)

// TestFramesCarryOutputExactly writes output the way the suite does, in
// pieces of every size, and checks the host's collector gets it back byte
// for byte from the frames.
func TestFramesCarryOutputExactly(t *testing.T) {
	out := strings.Repeat("Doing md5 for 3s on 16 size blocks: 123 md5's in 3.00s\n", 40) + "no newline at the end"
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fw := &frameWriter{w: w, run: "r1"}
	go func() {
		raw := &rawWriter{f: fw, sum: nopSum{}}
		for i, n := 0, 1; i < len(out); n = n*3%701 + 1 {
			end := min(i+n, len(out))
			raw.Write([]byte(out[i:end]))
			i = end
		}
		raw.flush()
		w.Close()
	}()
	var console bytes.Buffer
	console.ReadFrom(r)
	col := serialctl.NewCollector("r1")
	// Frames start at seq 0 with raw chunks here: no hello was sent.
	var got []byte
	for _, line := range strings.Split(console.String(), "\n") {
		if line == "" {
			continue
		}
		if _, err := col.Feed([]byte(line)); err != nil {
			t.Fatalf("frame rejected: %v", err)
		}
		got = col.Output()
	}
	if string(got) != out {
		t.Fatalf("output differs after framing: got %d bytes, want %d", len(got), len(out))
	}
	for _, line := range strings.Split(console.String(), "\n") {
		if len(line) > 600 {
			t.Errorf("frame line of %d bytes: too long for a console", len(line))
		}
	}
}

type nopSum struct{}

func (nopSum) Write(p []byte) (int, error) { return len(p), nil }
