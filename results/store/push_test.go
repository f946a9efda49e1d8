package store

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/bootbench/bootbench/results"
)

// benchStore is a SQLite store as an offline bench leaves it: bench runs
// with transcripts, stages and hello, a failed run, and imports.
func benchStore(t *testing.T, prefix string, n int) *Store {
	t.Helper()
	s, _ := openTemp(t)
	ctx := context.Background()
	for i := range n {
		r := sampleRun(fmt.Sprintf("%s-%03d", prefix, i), t0.Add(time.Duration(i)*time.Minute))
		r.Transcript = fmt.Appendf(nil, "\x00boot of %s %d\r\n\xff", prefix, i)
		switch i % 3 {
		case 1:
			r.Status, r.Reason, r.Metrics = results.StatusFailed, "boot-timeout: no hello within 60s", nil
		case 2:
			r.Source, r.InputSHA256 = "import:"+prefix+".txt", results.InputSHA256(fmt.Appendf(nil, "%s %d", prefix, i))
			r.Hello, r.Stages = nil, nil
		}
		if err := s.SaveRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// allRuns is every run with everything stored about it.
func allRuns(t *testing.T, s *Store) map[results.RunID]results.Run {
	t.Helper()
	runs, err := s.Runs(context.Background(), results.Filter{WithTranscript: true})
	if err != nil {
		t.Fatal(err)
	}
	m := map[results.RunID]results.Run{}
	for _, r := range runs {
		m[r.ID] = r
	}
	return m
}

// TestPush: every run arrives whole; a second push copies nothing; a run
// the target holds under the same id but different is reported, not
// taken for the same; the same import already there under another run is
// not stored twice.
func TestPush(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		from := benchStore(t, "bench1", 9)
		to, _ := e.open(t)
		// The target already holds a different run under one of the ids,
		// and one of the imported outputs under its own run.
		clash := sampleRun("bench1-000", t0.Add(time.Hour))
		clash.Board = "elsewhere"
		imported := allRuns(t, from)["bench1-002"]
		twin := sampleRun("bench2-777", t0)
		twin.InputSHA256 = imported.InputSHA256
		for _, r := range []*results.Run{clash, twin} {
			if err := to.SaveRun(ctx, r); err != nil {
				t.Fatal(err)
			}
		}

		var seen []results.RunID
		rep, err := Push(ctx, from, to, results.Filter{}, func(r *results.Run) { seen = append(seen, r.ID) })
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Pushed) != 7 || rep.Present != 0 || !reflect.DeepEqual(seen, rep.Pushed) ||
			!reflect.DeepEqual(rep.Conflicts, []PushSkip{{"bench1-000", "bench1-000"}}) ||
			!reflect.DeepEqual(rep.SameInput, []PushSkip{{"bench1-002", "bench2-777"}}) {
			t.Fatalf("first push: %+v (reported %v)", rep, seen)
		}
		src, dst := allRuns(t, from), allRuns(t, to)
		for _, id := range rep.Pushed {
			if !reflect.DeepEqual(src[id], dst[id]) {
				t.Errorf("run %s arrived as\n%+v\nwant\n%+v", id, dst[id], src[id])
			}
		}
		if dst["bench1-000"].Board != "elsewhere" {
			t.Errorf("the target's own run bench1-000 was overwritten")
		}

		rep, err = Push(ctx, from, to, results.Filter{}, nil)
		if err != nil || len(rep.Pushed) != 0 || rep.Present != 7 || len(rep.Conflicts) != 1 || len(rep.SameInput) != 1 {
			t.Errorf("second push: %+v, %v; want nothing copied, 7 already there", rep, err)
		}
		if n := len(allRuns(t, to)); n != 9 {
			t.Errorf("target holds %d runs, want 9", n)
		}
	})
}

// TestPushConcurrent: two benches pushing at once, each twice over, into
// one store: every run once, no error.
func TestPushConcurrent(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		path := e.fresh(t)
		froms := []*Store{benchStore(t, "a", 30), benchStore(t, "b", 30)}
		var wg sync.WaitGroup
		reports := make([]*PushReport, 4)
		errs := make([]error, 4)
		for i := range reports {
			wg.Add(1)
			go func() {
				defer wg.Done()
				to, err := Open(path)
				if err != nil {
					errs[i] = err
					return
				}
				defer to.Close()
				reports[i], errs[i] = Push(ctx, froms[i%2], to, results.Filter{}, nil)
			}()
		}
		wg.Wait()
		pushed := 0
		for i, err := range errs {
			if err != nil {
				t.Fatalf("push %d: %v", i, err)
			}
			r := reports[i]
			if len(r.Conflicts) != 0 || len(r.SameInput) != 0 || len(r.Pushed)+r.Present != 30 {
				t.Errorf("push %d: %+v", i, r)
			}
			pushed += len(r.Pushed)
		}
		to, err := OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		defer to.Close()
		if n := len(allRuns(t, to)); n != 60 || pushed != 60 {
			t.Errorf("target holds %d runs, %d pushed; want 60 each", n, pushed)
		}
	})
}
