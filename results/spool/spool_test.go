package spool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/storetest"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	storetest.StopShared()
	os.Exit(code)
}

// fill sets every field v holds, to values that differ from field to
// field, descending into structs, pointers and slices: a field added to
// results.Run is set too, so a format that does not carry it fails the
// round trip.
func fill(t *testing.T, v reflect.Value, n *int) {
	*n++
	switch v.Interface().(type) {
	case time.Time:
		v.Set(reflect.ValueOf(time.Date(2026, 12, 4, 9, 30, 0, 123456789+*n, time.UTC)))
		return
	case json.RawMessage:
		v.Set(reflect.ValueOf(json.RawMessage(fmt.Sprintf(`{"field": %d,  "spaced":true}`, *n))))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if !v.Type().Field(i).IsExported() {
				t.Fatalf("%s has an unexported field %s: spell out how it is spooled", v.Type(), v.Type().Field(i).Name)
			}
			fill(t, v.Field(i), n)
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), n)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.Set(reflect.ValueOf(append([]byte{0, 0xff, '\r', '\n', 0x1b}, byte(*n))).Convert(v.Type()))
			return
		}
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := 0; i < 2; i++ {
			fill(t, s.Index(i), n)
		}
		v.Set(s)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d \x1b[2J ünï", *n))
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(*n) * 1001)
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.1 + 1e-12)
	case reflect.Bool:
		v.SetBool(true)
	default:
		t.Fatalf("fill: no value for a %s (%s): teach the test and the spool format", v.Type(), v.Kind())
	}
}

// fullRun is a run with every field of results.Run set.
func fullRun(t *testing.T) *results.Run {
	var r results.Run
	n := 0
	fill(t, reflect.ValueOf(&r).Elem(), &n)
	r.ID = "20261204-093000-0badc0de"
	return &r
}

// TestRoundTrip: a run kept in the spool reads back whole, every field of
// results.Run as it was, bytes byte-exact (the hello report too).
func TestRoundTrip(t *testing.T) {
	sp := &Spool{Dir: tempDir(t), Store: "postgres://bench@db.lab/bootbench"}
	r := fullRun(t)
	if r.Energy == nil || len(r.Energy.Samples) == 0 || r.Throttle == nil || r.Throttle.Heat == nil || len(r.Stages) == 0 {
		t.Fatalf("fill left parts out: %+v", r)
	}
	path, err := sp.Keep(r, "the reason")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(sp.Dir, string(r.ID)+".run.json"); path != want {
		t.Errorf("kept in %s, want %s", path, want)
	}
	got, why, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if why != "the reason" {
		t.Errorf("why = %q", why)
	}
	if !reflect.DeepEqual(got, r) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(r, "", " ")
		t.Errorf("round trip changed the run:\n got %s\nwant %s", g, w)
	}
	if !bytes.Equal(got.Hello, r.Hello) {
		t.Errorf("hello %q, want it byte-exact: %q", got.Hello, r.Hello)
	}
	if fi, err := os.Stat(sp.Dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("spool directory %v, %v: want it the user's alone (0700)", fi.Mode(), err)
	}
}

// TestVersion1Reads: a file this format's first version wrote reads back
// as the run it was made from, whatever later versions change.
func TestVersion1Reads(t *testing.T) {
	r := storetest.SampleRun("20250314-150926-0a0b0c0d", storetest.T0)
	r.Status, r.Throttle = results.StatusThrottled, &results.Throttle{
		Clock: &results.ClockDrop{AskedMHz: 1500, LowestMHz: 600, AtMS: 4000},
		Heat:  &results.Heat{Zone: "cpu-thermal", Trip: "passive", TripMC: 85000, HighestMC: 86000, AtMS: 12000},
	}
	r.Energy = &results.Energy{Meter: "tasmota http://198.18.5.7 relay 1", Failed: 1,
		Samples: []results.PowerSample{{At: time.Second, Watts: 2.5}, {At: 2 * time.Second, Watts: 3.25}},
		Spans:   []results.PowerSpan{{Name: results.SpanIdle, From: 0, To: time.Second, MeanWatts: 2.5, Joules: 2.5}}}
	r.Bootloader = "" // the first files had no firmware; a run without one is written as they were
	// Today's encoding is the file's, byte for byte: a change to the
	// format shows here, and needs a new version (and this file kept, as
	// a version-1 file to read).
	b, err := encode(r, "postgres://bench@db.lab/bootbench", "the reason", storetest.T0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	storetest.Golden(t, "v1.run.json", b)
	got, why, err := Read(filepath.Join("testdata", "v1.run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if why != "the reason" || !reflect.DeepEqual(got, r) {
		t.Errorf("version 1 file reads as %+v (why %q), want %+v", got, why, r)
	}
}

// TestUnreadable: a file this bootbench cannot read whole is refused, so
// delivery leaves it where it is rather than store a part of a run.
func TestUnreadable(t *testing.T) {
	good, _ := os.ReadFile(filepath.Join("testdata", "v1.run.json"))
	tests := []struct {
		name, text, want string
	}{
		{"newer version", strings.Replace(string(good), `"version":1`, `"version":2`, 1), "written by a newer bootbench"},
		{"unknown field", strings.Replace(string(good), `"board":`, `"voltage":1.2,"board":`, 1), `unknown field "voltage"`},
		{"other file", `{"runs":[]}`, "not a spooled run"},
		{"cut short", string(good[:len(good)/2]), "not a spooled run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "20250314-150926-0a0b0c0d.run.json")
			os.WriteFile(path, []byte(tt.text), 0o600)
			if _, _, err := Read(path); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Read: %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

func TestKey(t *testing.T) {
	wd, _ := os.Getwd()
	same := [][2]string{
		{"postgres://bench:S3cret@db.lab/bootbench", "postgres://bench@db.lab/bootbench"},
		{"postgresql://bench@db.lab/bootbench", "postgres://bench@db.lab/bootbench"},
		{"postgres://db.lab/bootbench?user=bench&password=S3cret&sslmode=off", "postgres://db.lab/bootbench?sslmode=off&user=bench"},
		{"results.db", filepath.Join(wd, "results.db")},
		{"./x/../results.db", filepath.Join(wd, "results.db")},
	}
	for _, s := range same {
		if Key(s[0]) != Key(s[1]) {
			t.Errorf("Key(%q) = %s, Key(%q) = %s: one store, two spools", s[0], Key(s[0]), s[1], Key(s[1]))
		}
	}
	differ := [][2]string{
		{"postgres://bench@db.lab/bootbench", "postgres://bench@db.lab/other"},
		{"postgres://bench@db.lab/bootbench", "postgres://bench@db2.lab/bootbench"},
		{"postgres://bench@db.lab/bootbench", "postgres://ci@db.lab/bootbench"},
		{"/srv/a/results.db", "/srv/b/results.db"},
		{"/srv/a-results.db", "/srv/a/results.db"}, // the same readable part
	}
	for _, d := range differ {
		if Key(d[0]) == Key(d[1]) {
			t.Errorf("Key(%q) = Key(%q) = %s: two stores, one spool", d[0], d[1], Key(d[0]))
		}
	}
	for _, name := range []string{"postgres://bench:S3cret@db.lab/bootbench", "postgres://db/r?PASSWORD=S3cret", "postgres://u:S3cret@[bad"} {
		if k := Key(name); strings.Contains(k, "S3cret") || strings.ContainsAny(k, "/:?&") {
			t.Errorf("Key(%q) = %q: a password or a path separator in a directory name", name, k)
		}
	}
	if k := Key("postgres://bench@db.lab/bootbench"); !strings.HasPrefix(k, "bench@db.lab-bootbench-") {
		t.Errorf("Key = %q, want it to read as the store", k)
	}
	if k := Key("postgres://postgres@/t1?host=/run/postgresql"); !strings.HasPrefix(k, "postgres@-t1-host-run-postgresql-") {
		t.Errorf("Key = %q, want a socket directory to read as itself", k)
	}
	long := "/" + strings.Repeat("deep/", 30) + "results.db"
	if k := Key(long); len(k) > maxReadable+13 || !strings.Contains(k, "results.db-") {
		t.Errorf("Key of a long path = %q: want it short, ending with the file's name", k)
	}
}

func TestFor(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	sp := For("postgres://bench:S3cret@db.lab/bootbench")
	if want := filepath.Join(data, "bootbench", "spool", Key("postgres://bench@db.lab/bootbench")); sp.Dir != want {
		t.Errorf("Dir = %s, want %s", sp.Dir, want)
	}
	if sp.Store != "postgres://bench:xxxxx@db.lab/bootbench" {
		t.Errorf("Store = %q: want the URL with its password hidden", sp.Store)
	}
	t.Setenv("XDG_DATA_HOME", "relative/data") // invalid per the XDG spec: ignored
	t.Setenv("HOME", data)
	if sp := For("x.db"); !strings.HasPrefix(sp.Dir, filepath.Join(data, ".local", "share", "bootbench", "spool")+"/") {
		t.Errorf("Dir = %s, want it under ~/.local/share", sp.Dir)
	}
}

// fakeStore fails every save with err, or stores in memory.
type fakeStore struct {
	err   error
	runs  map[results.RunID]*results.Run
	saves int
}

func (f *fakeStore) SaveRun(ctx context.Context, r *results.Run) error {
	f.saves++
	if f.err != nil {
		return f.err
	}
	if f.runs[r.ID] != nil {
		return fmt.Errorf("results: save run %s: %w", r.ID, store.ErrExists)
	}
	f.runs[r.ID] = r
	return nil
}

func (f *fakeStore) Run(ctx context.Context, id results.RunID) (*results.Run, error) {
	if r := f.runs[id]; r != nil {
		return r, nil
	}
	return nil, store.ErrNotFound
}

// TestSaver: a run the store cannot take is kept whole; one the store
// refuses is not (it would be refused again); one the spool cannot take
// either is the caller's alone, and the error says so.
func TestSaver(t *testing.T) {
	away := errors.New(`results: save run 20250314-150926-0a0b0c0d: failed to connect to "postgres://bench:S3cret@db.lab/bootbench": dial tcp 198.18.7.7:5432: connect: connection refused` + "\n(and more)")
	tests := []struct {
		name     string
		err      error
		spoolDir func(t *testing.T) string
		kept     bool // a *KeptError, the run in the spool
		lost     bool // a *LostError
	}{
		{"stored", nil, tempDir, false, false},
		{"store away", away, tempDir, true, false},
		{"store full", errors.New("results: save run 20250314-150926-0a0b0c0d: database or disk is full (13)"), tempDir, true, false},
		{"store read-only", fmt.Errorf("results: %w", store.ErrReadOnlyStore), tempDir, true, false},
		{"id already stored", fmt.Errorf("results: save run X: %w", store.ErrExists), tempDir, false, false},
		{"input already stored", fmt.Errorf("results: save run X: %w as run Y", store.ErrDuplicateInput), tempDir, false, false},
		{"invalid run", fmt.Errorf("results: %w", store.ErrInvalidRun), tempDir, false, false},
		{"spool unwritable too", away, func(t *testing.T) string {
			f := filepath.Join(t.TempDir(), "file")
			os.WriteFile(f, nil, 0o644)
			return filepath.Join(f, "spool") // under a file: nothing can be made there
		}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &fakeStore{err: tt.err, runs: map[results.RunID]*results.Run{}}
			sp := &Spool{Dir: tt.spoolDir(t), Store: "postgres://bench:xxxxx@db.lab/bootbench"}
			r := storetest.SampleRun("20250314-150926-0a0b0c0d", storetest.T0)
			err := (&Saver{Store: store, Spool: sp}).SaveRun(context.Background(), r)
			var kept *KeptError
			var lost *LostError
			if errors.As(err, &kept) != tt.kept || errors.As(err, &lost) != tt.lost {
				t.Fatalf("SaveRun: %v (%T); want kept %v, lost %v", err, err, tt.kept, tt.lost)
			}
			if !tt.kept && !tt.lost && !errors.Is(err, tt.err) {
				t.Errorf("SaveRun: %v, want the store's own %v", err, tt.err)
			}
			waiting, _ := sp.Waiting()
			if tt.kept != (len(waiting) == 1) {
				t.Errorf("spool holds %d runs", len(waiting))
			}
			if err != nil && (strings.Contains(err.Error(), "S3cret") || strings.Contains(err.Error(), "\n")) {
				t.Errorf("error %q: want one line, no password", err)
			}
			if tt.kept {
				want := "the store postgres://bench:xxxxx@db.lab/bootbench is away (failed to connect to"
				if tt.err != away {
					want = "the store postgres://bench:xxxxx@db.lab/bootbench is away ("
				}
				if !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "run 20250314-150926-0a0b0c0d kept in "+sp.Dir) {
					t.Errorf("error %q", err)
				}
				got, _, err := Read(waiting[0].Path)
				if err != nil || !reflect.DeepEqual(got, r) {
					t.Errorf("spooled %+v, %v; want the run whole", got, err)
				}
			}
			if tt.lost && !strings.Contains(err.Error(), "nor kept in the spool") {
				t.Errorf("error %q", err)
			}
		})
	}
}

func tempDir(t *testing.T) string { return filepath.Join(t.TempDir(), "spool") }

// TestSaverTimeout: a store that stops answering keeps the run no longer
// than Timeout: it is spooled then.
func TestSaverTimeout(t *testing.T) {
	sp := &Spool{Dir: tempDir(t), Store: "postgres://bench@db.lab/bootbench"}
	start := time.Now()
	err := (&Saver{Store: hangingStore{}, Spool: sp, Timeout: 200 * time.Millisecond}).SaveRun(context.Background(), storetest.SampleRun("20250314-150926-0a0b0c0d", storetest.T0))
	var kept *KeptError
	if !errors.As(err, &kept) || time.Since(start) > 5*time.Second {
		t.Fatalf("SaveRun after %v: %v, want the run kept after the timeout", time.Since(start), err)
	}
}

type hangingStore struct{}

func (hangingStore) SaveRun(ctx context.Context, r *results.Run) error {
	<-ctx.Done()
	return fmt.Errorf("results: save run %s: %w", r.ID, ctx.Err())
}

// TestDeliver: spooled runs reach the store once each, in both engines,
// and leave the spool only when the store has them; a run the store
// already holds (it was stored after all) is removed without a second
// copy; what cannot be delivered stays, with why.
func TestDeliver(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		store := e.Open(t)
		sp := &Spool{Dir: tempDir(t), Store: "the store"}
		var runs []*results.Run
		for i, id := range []string{"20250314-150926-00000001", "20250314-150927-00000002", "20250314-150928-00000003"} {
			r := storetest.SampleRun(id, storetest.T0.Add(time.Duration(i)*time.Minute))
			r.Energy = &results.Energy{Meter: "m", Samples: []results.PowerSample{{At: time.Second, Watts: 2}}}
			runs = append(runs, r)
			if _, err := sp.Keep(r, "away"); err != nil {
				t.Fatal(err)
			}
		}
		stored := *runs[1]
		if err := store.SaveRun(ctx, &stored); err != nil { // stored after all, before it was spooled
			t.Fatal(err)
		}
		var heard []results.RunID
		rep, err := sp.Deliver(ctx, store, func(id results.RunID) { heard = append(heard, id) })
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rep.Delivered, []results.RunID{runs[0].ID, runs[2].ID}) || !reflect.DeepEqual(rep.Present, []results.RunID{runs[1].ID}) || len(rep.Kept) != 0 {
			t.Errorf("report %+v", rep)
		}
		if !reflect.DeepEqual(heard, rep.Delivered) {
			t.Errorf("heard of %v", heard)
		}
		all, err := store.Runs(ctx, results.Filter{})
		if err != nil || len(all) != 3 {
			t.Fatalf("store holds %d runs (%v), want 3", len(all), err)
		}
		for _, r := range runs {
			got, err := store.Run(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Transcript, r.Transcript) || !reflect.DeepEqual(got.Metrics, r.Metrics) || len(got.Stages) != len(r.Stages) || got.Energy == nil || len(got.Energy.Samples) != 1 {
				t.Errorf("run %s delivered as %+v", r.ID, got)
			}
		}
		if n := sp.Count(); n != 0 {
			t.Errorf("%d runs left in the spool", n)
		}
		// Delivering again is a no-op.
		rep, err = sp.Deliver(ctx, store, nil)
		if err != nil || len(rep.Delivered)+len(rep.Present)+len(rep.Kept) != 0 {
			t.Errorf("second delivery: %+v, %v", rep, err)
		}

		// Another run under a spooled run's id is not taken for it.
		other := *runs[0]
		other.Metrics = []results.Metric{{Name: "md5@16", Unit: "B/s", Value: 1}}
		path, _ := sp.Keep(&other, "away")
		rep, err = sp.Deliver(ctx, store, nil)
		if err != nil || len(rep.Kept) != 1 || !strings.Contains(rep.Kept[0].Why, "holds a different run under id "+string(other.ID)) {
			t.Errorf("conflict: %+v, %v", rep, err)
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("a run in conflict left the spool: %v", err)
		}
	})
}

// TestDeliverWhileAway: a store still away stops the delivery at the
// first run; every run stays, for the next command.
func TestDeliverWhileAway(t *testing.T) {
	sp := &Spool{Dir: tempDir(t), Store: "the store"}
	for _, id := range []string{"20250314-150926-00000001", "20250314-150927-00000002"} {
		sp.Keep(storetest.SampleRun(id, storetest.T0), "away")
	}
	store := &fakeStore{err: errors.New("results: save run 20250314-150926-00000001: connection refused")}
	rep, err := sp.Deliver(context.Background(), store, nil)
	if err == nil || err.Error() != "run 20250314-150926-00000001: connection refused" || len(rep.Delivered) != 0 {
		t.Errorf("Deliver: %+v, %v", rep, err)
	}
	if store.saves != 1 || sp.Count() != 2 {
		t.Errorf("%d saves tried, %d runs left; want 1 and 2", store.saves, sp.Count())
	}
}

// TestWaitingSkipsTemporaryFiles: a file being written is no run yet; one
// whose writer died is removed.
func TestWaitingSkipsTemporaryFiles(t *testing.T) {
	sp := &Spool{Dir: t.TempDir(), Store: "s"}
	live := filepath.Join(sp.Dir, fmt.Sprintf(".tmp-%d-123", os.Getpid()))
	dead := filepath.Join(sp.Dir, ".tmp-999999999-456")
	os.WriteFile(live, []byte("{"), 0o600)
	os.WriteFile(dead, []byte("{"), 0o600)
	if w, err := sp.Waiting(); err != nil || len(w) != 0 {
		t.Errorf("Waiting: %v, %v", w, err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Error("a file being written was removed")
	}
	if _, err := os.Stat(dead); err == nil {
		t.Error("a dead writer's temporary file was left")
	}
	if w, err := (&Spool{Dir: filepath.Join(sp.Dir, "none")}).Waiting(); err != nil || w != nil {
		t.Errorf("a spool never made: %v, %v", w, err)
	}
}
