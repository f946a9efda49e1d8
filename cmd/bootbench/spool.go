package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/internal/redact"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/spool"
	"github.com/bootbench/bootbench/results/store"
)

// The commands that write runs (run, ci, serve) store them through a
// spool: a run the store cannot take is kept on this host, whole, and the
// next command that writes to that store (those, import, results push)
// delivers it.

// spooledStore is an open store and the spool in front of it.
type spooledStore struct {
	*store.Store
	name  string // as messages name it
	path  string // as given: its spool's key
	spool *spool.Spool
}

// openSpooled opens the store at path for writing and delivers what its
// spool holds; note hears what was delivered.
func openSpooled(ctx context.Context, path string, note func(string)) (*spooledStore, error) {
	path = storePath(path)
	s, name, err := openStore(path)
	if err != nil {
		return nil, err
	}
	ss := &spooledStore{Store: s, name: name, path: path, spool: spool.For(path)}
	ss.deliver(ctx, note)
	return ss, nil
}

// saver is what a run is stored with: the store, else the spool.
func (s *spooledStore) saver() *spool.Saver { return &spool.Saver{Store: s.Store, Spool: s.spool} }

// deliver stores the runs waiting in the spool and says what it did, a
// line each; a store that is away again leaves them for later, and says
// so. It never fails the command: the spool keeps what it could not
// deliver.
func (s *spooledStore) deliver(ctx context.Context, note func(string)) (delivered int) {
	if s.spool.Count() == 0 {
		return 0
	}
	rep, err := s.spool.Deliver(ctx, s.Store, func(id results.RunID) {
		note(fmt.Sprintf("delivered run %s from the spool to %s", id, s.name))
	})
	if rep != nil {
		for _, id := range rep.Present {
			note(fmt.Sprintf("run %s in the spool was in %s already: removed from the spool", id, s.name))
		}
		for _, p := range rep.Kept {
			note(fmt.Sprintf("left in the spool: %s: %s", p.Path, p.Why))
		}
		delivered = len(rep.Delivered)
	}
	if err != nil {
		note(fmt.Sprintf("the spool for %s still holds %s: %s", s.name, runsCount(s.spool.Count()), redact.Text(err.Error())))
	}
	return delivered
}

// spoolEvery is how often serve delivers what its spool holds.
var spoolEvery = time.Minute

// deliverEvery delivers the spool every interval until ctx ends or the
// returned stop is called, which waits for a delivery under way. What it
// says is said once: a store away for hours, or a file left in the
// spool, is not said again every minute.
func (s *spooledStore) deliverEvery(ctx context.Context, every time.Duration, note func(string)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	said := map[string]bool{}
	once := func(msg string) {
		if !said[msg] {
			said[msg] = true
			note(msg)
		}
	}
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.deliver(ctx, once)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// sayUnstored says, for serve, what became of a run the store did not
// take (nothing for one it took), and returns the line as an error for
// --once.
func (s *spooledStore) sayUnstored(rec *results.Run, err error, note func(string)) error {
	kept, lost, ok := unstored(err)
	switch {
	case !ok:
		return nil
	case kept != nil:
		line := keptLine(kept, s.path)
		note(line)
		return errors.New(line)
	}
	var b strings.Builder
	printLost(&b, rec)
	line := lostLine(lost)
	note(strings.TrimPrefix(b.String(), "\n") + line)
	return &exitError{code: 1, err: errSaid}
}

// pushHint is the command that delivers the spool of the store at path.
func pushHint(path string) string {
	if path == store.DefaultPath() {
		return "bootbench results push"
	}
	return "bootbench results push --db " + store.DisplayName(path)
}

// keptLine is what a command says of a run kept in the spool: where, and
// what delivers it.
func keptLine(k *spool.KeptError, path string) string {
	return redact.Text(fmt.Sprintf("%s; it is delivered by the next command that writes to that store, or by '%s'", k, pushHint(path)))
}

// unstored sorts what harness.Run returned for a run the store did not
// take: kept in the spool, or lost (neither the store nor the spool
// took it, or the store refused it). ok is false for a stored run.
func unstored(err error) (kept *spool.KeptError, lost error, ok bool) {
	var ns *harness.NotStoredError
	if !errors.As(err, &ns) {
		return nil, nil, false
	}
	if errors.As(ns.Err, &kept) {
		return kept, nil, true
	}
	return nil, ns.Err, true
}

// lostLine is what a command says of a run nothing could keep (err
// says why), after it printed the run's figures on stdout.
func lostLine(err error) string {
	return redact.Text(fmt.Sprintf("%s; its figures are printed above, copy them now", firstLineOf(err)))
}

// printLost prints a run nothing could keep, whole, on w: what `run`
// prints of a run (id, board, clock, rep, tool, the metrics table), and
// its outcome, so a user can still copy its figures.
func printLost(w io.Writer, rec *results.Run) {
	fmt.Fprintf(w, "\nNOT STORED: run %s, board %s, clock %s, rep %d, bench %s, %s", rec.ID, rec.Board, rec.ClockMHz, rec.Rep, rec.Bench, rec.Status)
	if rec.Reason != "" {
		fmt.Fprintf(w, ": %s", rec.Reason)
	}
	fmt.Fprintln(w)
	printRunTo(w, rec, rec.Rep)
}

// spoolWaiting says, for a reading command, how many runs wait in the
// spool of the store at path; "" when none do.
func spoolWaiting(path string) string {
	n := spool.For(path).Count()
	if n == 0 {
		return ""
	}
	verb, them := "wait", "them"
	if n == 1 {
		verb, them = "waits", "it"
	}
	return fmt.Sprintf("%s %s in the spool for this store (%s); the next command that writes to it delivers %s, or '%s'",
		runsCount(n), verb, spool.For(path).Dir, them, pushHint(path))
}

// spooledRun is the spool file of run id for the store at path; "" when
// the spool holds no such run.
func spooledRun(path, id string) string {
	waiting, _ := spool.For(path).Waiting()
	for _, w := range waiting {
		if string(w.Run) == id {
			return w.Path
		}
	}
	return ""
}

func runsCount(n int) string { return fmt.Sprintf("%d %s", n, runsWord(n)) }

func firstLineOf(err error) string {
	line, _, _ := strings.Cut(err.Error(), "\n")
	return line
}

// stderrNote is a note on stderr, as bootbench's own.
func stderrNote(msg string) { fmt.Fprintf(os.Stderr, "bootbench: %s\n", msg) }
