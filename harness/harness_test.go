package harness

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/internal/testkit/frametest"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/store"
)

// speedOutput is what the built-in suite prints, in the layout the host parses.
const speedOutput = `version: bootbench-speed 0.1.0 (go1.26.8)
The 'numbers' are in 1000s of bytes per second processed.
type             16 bytes     64 bytes    256 bytes   1024 bytes   8192 bytes  16384 bytes
md5              15625.83k    38520.82k    70283.08k    88531.99k    95781.57k    96347.20k
sha256            2827.90k     5905.05k     9729.92k    11609.71k    12302.11k    12354.77k
`

// boardLines are the console lines of a board that ran the suite, with a
// kernel message between two frames as a real console has.
func boardLines(run string) []string {
	half := len(speedOutput) / 2
	l := frametest.Board(run, speedOutput, speedOutput[:half], speedOutput[half:])
	return append(l[:2], append([]string{"[   12.345678] random: crng init done"}, l[2:]...)...)
}

// TestCorruptFrameNeverStored feeds a run's console through the collector
// into the store: one flipped bit in a frame makes the run corrupt, stored
// without a single metric.
func TestCorruptFrameNeverStored(t *testing.T) {
	const id = "20261130-000000-0000abcd"
	clean := boardLines(id)
	corrupt := append([]string(nil), clean...)
	b := []byte(corrupt[1])
	b[len(frame.Prefix)+len(id)+24] ^= 0x04 // inside the base64 data of chunk 0
	corrupt[1] = string(b)

	tests := []struct {
		name        string
		lines       []string
		wantStatus  string
		wantMetrics int
	}{
		{"clean", clean, results.StatusOK, 12},
		{"bad crc", corrupt, results.StatusCorrupt, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, err := store.Open(filepath.Join(t.TempDir(), "r.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			r := &run{o: config{Rig: Rig{Store: store}}, rec: &results.Run{ID: id, Board: "qemu-x86_64", Bench: "speed"}}
			col := frame.NewCollector(id)
			var ev frame.Event
			var ferr error
			for _, l := range tt.lines {
				if ev, ferr = col.Feed([]byte(l)); ferr != nil || ev == frame.EventDone {
					break
				}
			}
			runErr := r.result(col, ev, ferr)
			rec, _ := r.finish(context.Background(), runErr)
			if rec == nil {
				t.Fatal("nothing stored")
			}
			got, err := store.Run(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.wantStatus || len(got.Metrics) != tt.wantMetrics {
				t.Fatalf("stored status %q with %d metrics (reason %q), want %q with %d", got.Status, len(got.Metrics), got.Reason, tt.wantStatus, tt.wantMetrics)
			}
			if tt.wantStatus == results.StatusOK && (got.Tool != "bootbench-speed" || got.ToolVersion != "0.1.0") {
				t.Errorf("tool %q version %q", got.Tool, got.ToolVersion)
			}
		})
	}
}
