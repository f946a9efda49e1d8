package frame_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/bootbench/bootbench/contract/frame"
)

// TestWriterCarriesOutputExactly writes output the way a benchmark does, in
// pieces of every size, and checks the host's collector gets it back byte
// for byte from the frames, verified by done.
func TestWriterCarriesOutputExactly(t *testing.T) {
	long := strings.Repeat("Doing md5 for 3s on 16 size blocks: 123 md5's in 3.00s\n", 40) + "no newline at the end"
	tests := []struct {
		name   string
		output string
		exit   int
	}{
		{"suite output in pieces", long, 0},
		{"nothing printed", "", 0},
		{"one long line", strings.Repeat("x", 1000), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var console bytes.Buffer
			w := frame.NewWriter(&console, "r1")
			w.Send(frame.Hello, frame.HelloBody{Arch: "amd64"})
			for i, n := 0, 1; i < len(tt.output); n = n*3%701 + 1 {
				end := min(i+n, len(tt.output))
				w.Write([]byte(tt.output[i:end]))
				i = end
			}
			w.Done(tt.exit, 1)
			col := frame.NewCollector("r1")
			var last frame.Event
			for _, line := range strings.Split(strings.TrimSuffix(console.String(), "\n"), "\n") {
				if len(line) > 600 {
					t.Errorf("frame line of %d bytes: too long for a console", len(line))
				}
				ev, err := col.Feed([]byte(line))
				if err != nil {
					t.Fatalf("frame rejected: %v", err)
				}
				last = ev
			}
			if res := col.Result(); last != frame.EventDone || string(res.Output) != tt.output || res.Exit != tt.exit {
				t.Fatalf("last event %v, exit %d, output of %d bytes; want done, exit %d, %d bytes", last, res.Exit, len(res.Output), tt.exit, len(tt.output))
			}
		})
	}
}

// A body the protocol does not have for a type goes out as a fail frame
// saying so, which the host records as the run's failure.
func TestWriterRefusesWrongBody(t *testing.T) {
	tests := []struct {
		name string
		typ  frame.Type
		body any
		want string
	}{
		{"wrong body", frame.Done, frame.HelloBody{}, "cannot carry"},
		{"unknown type", "bogus", struct{}{}, "unknown frame type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var console bytes.Buffer
			frame.NewWriter(&console, "r1").Send(tt.typ, tt.body)
			col := frame.NewCollector("r1")
			ev, err := col.Feed(bytes.TrimSuffix(console.Bytes(), []byte("\n")))
			if err != nil || ev != frame.EventFailed || !strings.Contains(col.Reason, tt.want) {
				t.Fatalf("event %v err %v reason %q, want a fail saying %q", ev, err, col.Reason, tt.want)
			}
		})
	}
}

// The throttling watch sends its frames from its own goroutine while the
// benchmark's output is written: every frame still arrives whole and in
// sequence, and the output is carried exactly.
func TestWriterConcurrentWatch(t *testing.T) {
	var console bytes.Buffer
	w := frame.NewWriter(&console, "r1")
	w.Send(frame.Hello, frame.HelloBody{Arch: "amd64"})
	out := strings.Repeat("md5 16 bytes 123.45k\n", 200)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 50 {
			w.Send(frame.Watch, frame.WatchBody{Samples: []frame.WatchSample{{AtMS: int64(i), CurKHz: []int{800000}}}})
		}
	}()
	for i := 0; i < len(out); i += 7 {
		w.Write([]byte(out[i:min(i+7, len(out))]))
	}
	wg.Wait()
	w.Done(0, 1)
	col := frame.NewCollector("r1")
	for _, line := range strings.Split(strings.TrimSuffix(console.String(), "\n"), "\n") {
		if _, err := col.Feed([]byte(line)); err != nil {
			t.Fatalf("frame rejected: %v", err)
		}
	}
	if res := col.Result(); string(res.Output) != out || len(res.Samples) != 50 {
		t.Fatalf("output of %d bytes, %d samples; want %d bytes, 50 samples", len(res.Output), len(res.Samples), len(out))
	}
}
