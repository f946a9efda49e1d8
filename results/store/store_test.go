package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"

	"github.com/bootbench/bootbench/results"
)

// openTemp opens a fresh SQLite store, for the tests of what only SQLite
// files have.
func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	return engineKinds[0].open(t)
}

var t0 = time.Date(2025, 3, 14, 15, 9, 26, 535897000, time.UTC)

func sampleRun(id string, started time.Time) *results.Run {
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
		Energy: &results.Energy{
			Meter:  "tasmota http://198.18.5.7 relay 1",
			Failed: 1,
			Samples: []results.PowerSample{
				{At: 500 * time.Millisecond, Watts: 2.1}, {At: 1500 * time.Millisecond, Watts: 2.3}, {At: 2500 * time.Millisecond, Watts: 4.75},
			},
			Spans: []results.PowerSpan{
				{Name: results.SpanIdle, From: 0, To: 1200 * time.Millisecond, MeanWatts: 2.2, Joules: 2.64},
				{Name: "sha256@1024", From: 1200 * time.Millisecond, To: 2500 * time.Millisecond, MeanWatts: 3.6, Joules: 4.68, PerJoule: 7995222.2, Unit: "B/J"},
			},
		},
	}
}

// want is how a saved run comes back: UTC times, metrics in metric order.
func want(r *results.Run, withTranscript bool) results.Run {
	w := *r
	w.Started, w.Finished = r.Started.UTC(), r.Finished.UTC()
	w.Metrics = append([]results.Metric(nil), r.Metrics...)
	results.SortMetrics(w.Metrics)
	if !withTranscript {
		w.Transcript, w.RawOutput = nil, nil
		if w.Energy != nil {
			e := *w.Energy
			e.Samples = nil // loaded with the transcript
			w.Energy = &e
		}
	}
	return w
}

func TestRoundTrip(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		s, _ := e.open(t)
		in := sampleRun("r1", t0.In(time.FixedZone("CET", 3600)))
		if err := s.SaveRun(ctx, in); err != nil {
			t.Fatal(err)
		}

		got, err := s.Run(ctx, "r1")
		if err != nil {
			t.Fatal(err)
		}
		if w := want(in, true); !reflect.DeepEqual(*got, w) {
			t.Errorf("Run:\n got %+v\nwant %+v", *got, w)
		}

		for _, with := range []bool{false, true} {
			runs, err := s.Runs(ctx, results.Filter{WithTranscript: with})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 {
				t.Fatalf("Runs(with=%v): %d runs, want 1", with, len(runs))
			}
			if w := want(in, with); !reflect.DeepEqual(runs[0], w) {
				t.Errorf("Runs(with=%v):\n got %+v\nwant %+v", with, runs[0], w)
			}
		}
		// A report that draws the power gets the samples alone.
		runs, err := s.Runs(ctx, results.Filter{WithSamples: true})
		if err != nil {
			t.Fatal(err)
		}
		w := want(in, false)
		w.Energy = in.Energy
		if len(runs) != 1 || !reflect.DeepEqual(runs[0], w) {
			t.Errorf("Runs(WithSamples):\n got %+v\nwant %+v", runs, w)
		}
	})
}

// A throttled run comes back with why, its figures kept; the runs saved
// before (and every other) have none.
func TestThrottleRoundTrip(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		s, _ := e.open(t)
		hot := sampleRun("hot", t0)
		hot.Status = results.StatusThrottled
		hot.Throttle = &results.Throttle{
			Clock: &results.ClockDrop{AskedMHz: 800, LowestMHz: 600, AtMS: 4000},
			Heat:  &results.Heat{Zone: "cpu-thermal", Trip: "passive", TripMC: 85000, HighestMC: 86500, AtMS: 3500},
		}
		for _, r := range []*results.Run{hot, sampleRun("cool", t0.Add(time.Minute))} {
			if err := s.SaveRun(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		runs, err := s.Runs(ctx, results.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 2 || !reflect.DeepEqual(runs[0].Throttle, hot.Throttle) || len(runs[0].Metrics) != 3 || runs[1].Throttle != nil {
			t.Fatalf("runs: %+v", runs)
		}
		want := "the clock fell to 600 MHz (800 MHz asked) 4.0 s into the benchmark; cpu-thermal reached 86.5 °C (passive trip point 85.0 °C) 3.5 s in"
		if got := runs[0].Throttle.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
		throttled, err := s.Runs(ctx, results.Filter{Status: results.StatusThrottled})
		if err != nil || len(throttled) != 1 || throttled[0].ID != "hot" {
			t.Errorf("throttled runs: %+v, %v", throttled, err)
		}
	})
}

// TestProvenanceRoundTrip: the firmware that booted a run and the clock
// it announced come back as saved, in every engine; a run whose console
// showed none comes back without, and so does a run saved before they
// were kept (schema version 7).
func TestProvenanceRoundTrip(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		path := e.fresh(t)
		old, err := openWith(path, migrations[:7])
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`INSERT INTO boards(name, first_seen) VALUES(?, ?)`, []any{"rb450g", formatTime(t0)}},
			{`INSERT INTO runs(id, board, clock_mhz, rep, status, bench, started, finished, metric_count, metrics_sha256)
				VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, []any{"before", "rb450g", 680, 1, results.StatusFailed, "speed", formatTime(t0), formatTime(t0), 0, metricsDigest(nil)}},
		} {
			if _, err := old.db.ExecContext(ctx, old.eng.bind(q.sql), q.args...); err != nil {
				t.Fatalf("%s: %v", q.sql, err)
			}
		}
		old.Close()

		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rb := sampleRun("rb450g", t0.Add(time.Minute))
		rb.Board, rb.ClockMHz = "rb450g", 800
		rb.Bootloader, rb.FirmwareClockMHz = "RouterBOOT 2.41", 800
		none := sampleRun("direct", t0.Add(2*time.Minute))
		none.Bootloader, none.FirmwareClockMHz = "", 0
		for _, r := range []*results.Run{rb, none} {
			if err := s.SaveRun(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		runs, err := s.Runs(ctx, results.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		type firmware struct {
			id         results.RunID
			bootloader string
			clock      boards.MHz
		}
		var got []firmware
		for _, r := range runs {
			got = append(got, firmware{r.ID, r.Bootloader, r.FirmwareClockMHz})
		}
		want := []firmware{{"before", "", 0}, {"rb450g", "RouterBOOT 2.41", 800}, {"direct", "", 0}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("read back %+v, want %+v", got, want)
		}
	})
}

func TestRunNotFound(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		s, _ := e.open(t)
		_, err := s.Run(context.Background(), "nope")
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	})
}

func TestRunsFilterAndOrder(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		s, _ := e.open(t)
		// Saved out of order, and with sub-second times that RFC3339Nano
		// would render with different widths, to check chronological order.
		specs := []struct {
			id     string
			board  string
			clock  boards.MHz
			status string
			at     time.Duration
		}{
			{"c", "rb450g", 800, results.StatusOK, 2 * time.Second},
			{"a", "rb450g", 680, results.StatusOK, 1500 * time.Millisecond},
			{"b", "rb450g", 680, results.StatusFailed, 1 * time.Second},
			{"d", "qemu-arm64", 0, results.StatusOK, 3 * time.Second},
		}
		for _, sp := range specs {
			r := sampleRun(sp.id, t0.Truncate(time.Second).Add(sp.at))
			r.Board, r.ClockMHz, r.Status = sp.board, sp.clock, sp.status
			if err := s.SaveRun(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		at := func(d time.Duration) time.Time { return t0.Truncate(time.Second).Add(d) }
		tests := []struct {
			name  string
			f     results.Filter
			want  []string
			count int // CountRuns: every run selected, Limit aside
		}{
			{"all", results.Filter{}, []string{"b", "a", "c", "d"}, 4},
			{"board", results.Filter{Board: "rb450g"}, []string{"b", "a", "c"}, 3},
			{"clock", results.Filter{Board: "rb450g", ClockMHz: 680}, []string{"b", "a"}, 2},
			{"status", results.Filter{Status: results.StatusOK}, []string{"a", "c", "d"}, 3},
			{"none", results.Filter{Board: "nope"}, nil, 0},
			{"boards", results.Filter{Boards: []string{"qemu-arm64", "nope"}}, []string{"d"}, 1},
			{"boards and board", results.Filter{Board: "rb450g", Boards: []string{"qemu-arm64"}}, nil, 0},
			{"since, inclusive", results.Filter{Since: at(1500 * time.Millisecond)}, []string{"a", "c", "d"}, 3},
			{"until, exclusive", results.Filter{Until: at(2 * time.Second)}, []string{"b", "a"}, 2},
			{"window", results.Filter{Since: at(1500 * time.Millisecond), Until: at(3 * time.Second)}, []string{"a", "c"}, 2},
			{"newest page", results.Filter{Limit: 2}, []string{"c", "d"}, 4},
			{"a board's newest", results.Filter{Board: "rb450g", Limit: 2}, []string{"a", "c"}, 3},
			{"a page in a window", results.Filter{Until: at(3 * time.Second), Limit: 1}, []string{"c"}, 3},
			{"a page beyond the runs", results.Filter{Limit: 10}, []string{"b", "a", "c", "d"}, 4},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				runs, err := s.Runs(ctx, tt.f)
				if err != nil {
					t.Fatal(err)
				}
				if n, err := s.CountRuns(ctx, tt.f, 0); err != nil || n != tt.count {
					t.Errorf("CountRuns = %d, %v; want %d", n, err, tt.count)
				}
				if n, err := s.CountRuns(ctx, tt.f, 2); err != nil || n != min(tt.count, 2) {
					t.Errorf("CountRuns to at most 2 = %d, %v; want %d", n, err, min(tt.count, 2))
				}
				walked := eachRunIDs(t, s, tt.f)
				all := tt.f
				all.Limit = 0
				if whole := runIDs(t, s, all); !reflect.DeepEqual(walked, whole) {
					t.Errorf("EachRun, a run a page, walked %v; Runs without the limit gives %v", walked, whole)
				}
				var ids []string
				for _, r := range runs {
					ids = append(ids, string(r.ID))
					if len(r.Metrics) != 3 || len(r.Stages) != 4 {
						t.Errorf("run %s: %d metrics, %d stages; want 3, 4", r.ID, len(r.Metrics), len(r.Stages))
					}
					if r.Transcript != nil {
						t.Errorf("run %s: transcript loaded without WithTranscript", r.ID)
					}
				}
				if !reflect.DeepEqual(ids, tt.want) {
					t.Errorf("ids = %v, want %v", ids, tt.want)
				}
			})
		}
	})
}

// eachRunIDs are the ids EachRun walks through under f, a page a run so
// every step from page to page is taken.
func eachRunIDs(t *testing.T, s *Store, f results.Filter) []string {
	t.Helper()
	defer func(n int) { pageRuns = n }(pageRuns)
	pageRuns = 1
	var ids []string
	err := s.EachRun(context.Background(), f, func(r *results.Run) error {
		if len(r.Metrics) != 3 || len(r.Stages) != 4 {
			t.Errorf("run %s: %d metrics, %d stages; want 3, 4", r.ID, len(r.Metrics), len(r.Stages))
		}
		ids = append(ids, string(r.ID))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func runIDs(t *testing.T, s *Store, f results.Filter) []string {
	t.Helper()
	runs, err := s.Runs(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, string(r.ID))
	}
	return ids
}

func count(t *testing.T, s *Store, table string) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSaveRunAtomic(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		s, _ := e.open(t)
		r := sampleRun("dup-metric", t0)
		r.Board = "fresh-board"
		r.Metrics = append(r.Metrics, results.Metric{Name: "md5@16", Unit: "B/s", Value: 1})
		if err := s.SaveRun(ctx, r); err == nil {
			t.Fatal("SaveRun with a duplicate metric name succeeded")
		}
		for _, table := range []string{"runs", "metrics", "stages", "boards"} {
			if n := count(t, s, table); n != 0 {
				t.Errorf("%s has %d rows after a failed save, want 0", table, n)
			}
		}
		// The failed attempt must not block a correct save under the same id.
		r.Metrics = r.Metrics[:len(r.Metrics)-1]
		if err := s.SaveRun(ctx, r); err != nil {
			t.Fatalf("save after failed attempt: %v", err)
		}
	})
}

// TestSaveRunsAllOrNone: a batch is stored whole, each run read back as
// saved, or, when the store refuses any run of it, not at all.
func TestSaveRunsAllOrNone(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		s, _ := e.open(t)
		if err := s.SaveRun(ctx, sampleRun("kept", t0)); err != nil {
			t.Fatal(err)
		}
		batch := func(ids ...string) []*results.Run {
			var runs []*results.Run
			for i, id := range ids {
				r := sampleRun(id, t0.Add(time.Duration(i+1)*time.Second))
				r.InputSHA256 = fmt.Sprintf("%064x", len(id)*1000+i)
				runs = append(runs, r)
			}
			return runs
		}
		tests := []struct {
			name string
			runs []*results.Run
			is   error // nil: stored
		}{
			{"an id already stored", batch("b1", "kept", "b3"), ErrExists},
			{"one id twice", batch("b1", "b1"), ErrExists},
			{"the same input twice", append(batch("b1"), batch("b22")[0], func() *results.Run {
				r := sampleRun("b3", t0)
				r.InputSHA256 = batch("b1")[0].InputSHA256
				return r
			}()), ErrDuplicateInput},
			{"an invalid run", append(batch("b1"), &results.Run{ID: "b2"}), ErrInvalidRun},
			{"stored", batch("b1", "b2", "b3"), nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := s.SaveRuns(ctx, tt.runs)
				if !errors.Is(err, tt.is) || (tt.is == nil) != (err == nil) {
					t.Fatalf("SaveRuns: %v, want %v", err, tt.is)
				}
				want := []string{"kept"}
				if tt.is == nil {
					for _, r := range tt.runs {
						want = append(want, string(r.ID))
					}
				}
				if got := runIDs(t, s, results.Filter{}); !reflect.DeepEqual(got, want) {
					t.Errorf("stored %v, want %v", got, want)
				}
				for _, r := range tt.runs[:len(want)-1] {
					got, err := s.Run(ctx, r.ID)
					if err != nil || !reflect.DeepEqual(*got, want1(r)) {
						t.Errorf("run %s reads back %+v, %v", r.ID, got, err)
					}
				}
			})
		}
	})
}

// TestWriteMeetsOrphans: rows left under a run id without the run (a
// restore with the foreign keys off) are damage a write under that id
// meets: it stores nothing and says so. A write under another id stores,
// however many such rows the store holds elsewhere.
func TestWriteMeetsOrphans(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		s, _ := e.open(t)
		if err := s.SaveRun(ctx, sampleRun("kept", t0)); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			id   results.RunID
			stmt string
		}{
			{"ghost-metric", `INSERT INTO metrics(run, name, unit, value) VALUES (?, 'md5@16', 'B/s', 1)`},
			{"ghost-stage", `INSERT INTO stages(run, seq, name, seconds) VALUES (?, 7, 'kernel', 1)`},
			{"ghost-power", `INSERT INTO power_samples(run, seq, seconds, watts) VALUES (?, 0, 0, 1)`},
		} {
			id, stmt := tt.id, tt.stmt
			damage(t, s, stmt, id)
			for _, save := range []func() error{
				func() error { return s.SaveRun(ctx, sampleRun(string(id), t0)) },
				func() error {
					return s.SaveRuns(ctx, []*results.Run{sampleRun("other", t0), sampleRun(string(id), t0)})
				},
			} {
				err := save()
				if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "(run "+string(id)+" has ") ||
					!strings.Contains(err.Error(), "stored without its run) where this write meets it: nothing was written") {
					t.Errorf("storing run %s over %s: %v; want ErrDamaged naming it", id, stmt, err)
				}
				if got := runIDs(t, s, results.Filter{}); !reflect.DeepEqual(got, []string{"kept"}) {
					t.Errorf("stored %v, want [kept] alone", got)
				}
			}
		}
		if err := s.SaveRuns(ctx, []*results.Run{sampleRun("other", t0.Add(time.Second))}); err != nil {
			t.Errorf("a write the orphans are not under: %v", err)
		}
	})
}

// want1 is r as a store reads it back, transcript and all.
func want1(r *results.Run) results.Run { return want(r, true) }

func TestSaveRunRejects(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		s, _ := e.open(t)
		if err := s.SaveRun(ctx, sampleRun("x", t0)); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name   string
			mutate func(*results.Run)
			is     error
		}{
			{"duplicate id", func(r *results.Run) {}, ErrExists},
			{"no id", func(r *results.Run) { r.ID = "" }, ErrInvalidRun},
			{"no board", func(r *results.Run) { r.ID, r.Board = "y", "" }, ErrInvalidRun},
			{"bad status", func(r *results.Run) { r.ID, r.Status = "y", "great" }, ErrInvalidRun},
			{"bad hello", func(r *results.Run) { r.ID, r.Hello = "y", json.RawMessage("{") }, ErrInvalidRun},
			{"nan", func(r *results.Run) { r.ID, r.Metrics = "y", []results.Metric{{Name: "m", Unit: "B/s", Value: nan()}} }, ErrInvalidRun},
			{"throttled without why", func(r *results.Run) { r.ID, r.Status = "y", results.StatusThrottled }, ErrInvalidRun},
			{"why without throttled", func(r *results.Run) { r.ID, r.Throttle = "y", &results.Throttle{Heat: &results.Heat{Zone: "cpu"}} }, ErrInvalidRun},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := sampleRun("x", t0.Add(time.Hour))
				r.Kernel = "other"
				tt.mutate(r)
				err := s.SaveRun(ctx, r)
				if err == nil {
					t.Fatal("SaveRun succeeded")
				}
				if !errors.Is(err, tt.is) {
					t.Errorf("err = %v, want %v", err, tt.is)
				}
				// The store refuses the run itself: a spool in front of
				// it would only have it refused again.
				if !Refused(err) {
					t.Errorf("Refused(%v) = false", err)
				}
			})
		}
		// The original is untouched.
		got, err := s.Run(ctx, "x")
		if err != nil {
			t.Fatal(err)
		}
		if got.Kernel != "6.1.0-31-amd64" || !got.Started.Equal(t0) {
			t.Errorf("stored run changed: kernel %q started %v", got.Kernel, got.Started)
		}
		if n := count(t, s, "runs"); n != 1 {
			t.Errorf("%d runs stored, want 1", n)
		}
	})
}

func nan() float64 { z := 0.0; return z / z }

func TestBoardFirstSeen(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		s, _ := e.open(t)
		// An import of older output arrives after a newer run.
		for i, at := range []time.Time{t0, t0.Add(-time.Hour), t0.Add(time.Hour)} {
			if err := s.SaveRun(ctx, sampleRun(fmt.Sprint(i), at)); err != nil {
				t.Fatal(err)
			}
		}
		var first string
		if err := s.db.QueryRow(`SELECT first_seen FROM boards WHERE name = 'qemu-x86_64'`).Scan(&first); err != nil {
			t.Fatal(err)
		}
		if got, _ := parseTime(first); !got.Equal(t0.Add(-time.Hour)) {
			t.Errorf("first_seen = %s, want %s", first, t0.Add(-time.Hour))
		}
	})
}

func TestDefaultPath(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		name    string
		db, xdg string
		want    string
	}{
		{"BOOTBENCH_DB wins", "/srv/bench.db", "/xdg", "/srv/bench.db"},
		{"XDG_DATA_HOME", "", "/xdg", "/xdg/bootbench/results.db"},
		{"relative XDG ignored", "", "rel", filepath.Join(home, ".local/share/bootbench/results.db")},
		{"HOME fallback", "", "", filepath.Join(home, ".local/share/bootbench/results.db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("BOOTBENCH_DB", tt.db)
			t.Setenv("XDG_DATA_HOME", tt.xdg)
			t.Setenv("HOME", home)
			if got := DefaultPath(); got != filepath.FromSlash(tt.want) {
				t.Errorf("DefaultPath() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMigrationsRunOnce(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		path := e.fresh(t)
		// A later version appends a step; it must run exactly once however
		// often the database is opened.
		step := `CREATE TABLE applied (n INTEGER); INSERT INTO applied VALUES (1);`
		migs := append(append([]migration(nil), migrations...), migration{sqlite: step, postgres: step})

		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := s.SchemaVersion(ctx); err != nil || v != len(migrations) {
			t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, len(migrations))
		}
		if err := s.SaveRun(ctx, sampleRun("kept", t0)); err != nil {
			t.Fatal(err)
		}
		s.Close()

		for i := 0; i < 3; i++ {
			s, err := openWith(path, migs)
			if err != nil {
				t.Fatalf("open %d: %v", i, err)
			}
			if v, err := s.SchemaVersion(ctx); err != nil || v != len(migs) {
				t.Fatalf("open %d: SchemaVersion = %d, %v; want %d", i, v, err, len(migs))
			}
			if n := count(t, s, "applied"); n != 1 {
				t.Errorf("open %d: migration applied %d times, want 1", i, n)
			}
			if _, err := s.Run(ctx, "kept"); err != nil {
				t.Errorf("open %d: existing run lost: %v", i, err)
			}
			s.Close()
		}

		// The older binary refuses a database it does not understand rather
		// than writing rows a newer schema might not expect.
		if s, err := Open(path); err == nil {
			s.Close()
			t.Fatal("Open of a newer-schema database succeeded")
		}
	})
}

func TestConcurrentStores(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		path := e.fresh(t)

		// Two Stores opening a fresh store at once race on the first
		// migration: SQLite's write lock, PostgreSQL's advisory lock.
		stores := make([]*Store, 2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				stores[i], errs[i] = Open(path)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("Open %d: %v", i, err)
			}
			defer stores[i].Close()
		}

		if e.name == "sqlite" {
			var mode string
			if err := stores[0].db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
				t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
			}
		}

		const perStore = 20
		saveErrs := make(chan error, 2*perStore)
		for i, s := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range perStore {
					r := sampleRun(fmt.Sprintf("s%d-%02d", i, j), t0.Add(time.Duration(j)*time.Second))
					saveErrs <- s.SaveRun(ctx, r)
					// Interleave reads so readers and writers overlap.
					if _, err := s.Runs(ctx, results.Filter{}); err != nil {
						saveErrs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(saveErrs)
		for err := range saveErrs {
			if err != nil {
				t.Error(err)
			}
		}
		for i, s := range stores {
			runs, err := s.Runs(ctx, results.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 2*perStore {
				t.Errorf("store %d sees %d runs, want %d", i, len(runs), 2*perStore)
			}
		}
	})
}

func TestOpenCreatesDir(t *testing.T) {
	_, path := openTemp(t)
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

func TestOpenOddPath(t *testing.T) {
	// '?', '#' and '%' are URI syntax; the file must still land at path.
	path := filepath.Join(t.TempDir(), "a b?c#d%20e", "results.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SaveRun(context.Background(), sampleRun("r", t0)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

// TestSaveRunRace: writers storing the same run id, or the same imported
// input under different ids, at the same moment through different Stores:
// one wins, every other gets ErrExists or ErrDuplicateInput, and nothing
// is stored twice or half.
func TestSaveRunRace(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		path := e.fresh(t)
		const writers = 6
		stores := make([]*Store, writers)
		for i := range stores {
			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			stores[i] = s
		}
		race := func(what string, run func(i int) *results.Run, lose error) {
			t.Helper()
			errs := make([]error, writers)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i, s := range stores {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					errs[i] = s.SaveRun(ctx, run(i))
				}()
			}
			close(start)
			wg.Wait()
			won := 0
			for _, err := range errs {
				switch {
				case err == nil:
					won++
				case !errors.Is(err, lose):
					t.Errorf("%s: %v, want %v", what, err, lose)
				}
			}
			if won != 1 {
				t.Errorf("%s: %d writers stored it, want 1", what, won)
			}
		}
		race("same id", func(i int) *results.Run {
			r := sampleRun("same", t0)
			r.Kernel = fmt.Sprint("writer ", i)
			return r
		}, ErrExists)
		race("same input", func(i int) *results.Run {
			r := sampleRun(fmt.Sprintf("input-%d", i), t0)
			r.InputSHA256 = results.InputSHA256([]byte("the same output"))
			return r
		}, ErrDuplicateInput)
		for table, want := range map[string]int{"runs": 2, "metrics": 6, "stages": 8, "boards": 1} {
			if n := count(t, stores[0], table); n != want {
				t.Errorf("%s holds %d rows, want %d", table, n, want)
			}
		}
	})
}

// TestSaveRunText: text a board's console put into a run (any byte, NUL
// included) is stored by every engine, the same way: valid UTF-8 with
// U+FFFD for what was not. The transcript keeps the exact bytes.
func TestSaveRunText(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		s, _ := e.open(t)
		in := sampleRun("noisy", t0)
		in.Reason = "kernel-panic: \xff\xfeVFS: Unable to mount root\x00fs"
		in.Kernel = "6.1.0-\xc3"
		in.Hello = json.RawMessage("{\"cpu\":\"MIPS \xe9 24Kc\"}")
		in.Transcript = []byte("\x00\xff\xfe raw bytes \r\n")
		if err := s.SaveRun(ctx, in); err != nil {
			t.Fatal(err)
		}
		got, err := s.Run(ctx, "noisy")
		if err != nil {
			t.Fatal(err)
		}
		if got.Reason != "kernel-panic: \uFFFDVFS: Unable to mount root\uFFFDfs" || got.Kernel != "6.1.0-\uFFFD" ||
			string(got.Hello) != "{\"cpu\":\"MIPS \uFFFD 24Kc\"}" || string(got.Transcript) != string(in.Transcript) {
			t.Errorf("stored reason %q kernel %q hello %s transcript %q", got.Reason, got.Kernel, got.Hello, got.Transcript)
		}
	})
}

// TestRunsOrderBytewise: runs that started together are listed by id
// byte by byte, whatever the database's locale would say (the test
// cluster's databases sort "a" before "B").
func TestRunsOrderBytewise(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		s, _ := e.open(t)
		for _, id := range []string{"a-2", "_x", "B-10", "a-10", "Z"} {
			if err := s.SaveRun(ctx, sampleRun(id, t0)); err != nil {
				t.Fatal(err)
			}
		}
		runs, err := s.Runs(ctx, results.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range runs {
			ids = append(ids, string(r.ID))
		}
		want := []string{"B-10", "Z", "_x", "a-10", "a-2"}
		if !reflect.DeepEqual(ids, want) {
			t.Errorf("order %v, want %v", ids, want)
		}
		// Runs started at one instant: a walk's pages go on by id.
		if walked := eachRunIDs(t, s, results.Filter{}); !reflect.DeepEqual(walked, want) {
			t.Errorf("EachRun order %v, want %v", walked, want)
		}
		if page := runIDs(t, s, results.Filter{Limit: 2}); !reflect.DeepEqual(page, want[3:]) {
			t.Errorf("newest 2: %v, want %v", page, want[3:])
		}
	})
}

// A store written before the throttle column and the power tables (schema
// version 4), with a run in it, opened by this version: it is brought up
// to date, and the old run reads back whole, neither throttled nor
// metered, and passes the store's check.
func TestUpgradeFromVersion4(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		path := e.fresh(t)
		old, err := openWith(path, migrations[:4])
		if err != nil {
			t.Fatal(err)
		}
		metrics := []results.Metric{{Name: "md5@16", Unit: "B/s", Value: 1.5e6}}
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`INSERT INTO boards(name, first_seen) VALUES(?, ?)`, []any{"rb450", formatTime(t0)}},
			{`INSERT INTO runs(id, board, clock_mhz, rep, status, bench, tool, started, finished, metric_count, metrics_sha256)
				VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, []any{"old", "rb450", 300, 1, results.StatusOK, "openssl", "openssl", formatTime(t0), formatTime(t0.Add(time.Minute)), len(metrics), metricsDigest(metrics)}},
			{`INSERT INTO metrics(run, name, unit, value) VALUES(?, ?, ?, ?)`, []any{"old", metrics[0].Name, metrics[0].Unit, metrics[0].Value}},
		} {
			if _, err := old.db.ExecContext(ctx, old.eng.bind(q.sql), q.args...); err != nil {
				t.Fatalf("%s: %v", q.sql, err)
			}
		}
		old.Close()

		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if v, err := s.SchemaVersion(ctx); err != nil || v != len(migrations) {
			t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, len(migrations))
		}
		r, err := s.Run(ctx, "old")
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != results.StatusOK || r.Throttle != nil || r.Energy != nil || len(r.Metrics) != 1 || r.Metrics[0] != metrics[0] {
			t.Errorf("the old run read back as %+v", r)
		}
		if err := s.IntegrityCheck(ctx); err != nil {
			t.Errorf("check: %v", err)
		}
	})
}
