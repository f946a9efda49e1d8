package spool

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bootbench/bootbench/internal/redact"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/store"
)

// Saver stores runs in Store, and keeps in Spool each run Store could not
// take for any reason but refusing the run itself (store.Refused): the
// store unreachable, read-only, its disk full, damaged.
type Saver struct {
	Store results.Saver
	Spool *Spool
	// Timeout bounds one attempt to store a run (DefaultTimeout when 0):
	// a store across a network that stopped answering would otherwise
	// hold the run for as long as TCP keeps trying.
	Timeout time.Duration
}

// DefaultTimeout is how long a Saver waits for its store to take a run.
const DefaultTimeout = 2 * time.Minute

// SaveRun stores r. When the store does not take it, r is kept in the
// spool and the error is a *KeptError; when the spool cannot be written
// either, a *LostError: nothing but the caller holds the run then. A run
// the store refuses comes back with the store's error, unspooled: storing
// it again would be refused again.
func (s *Saver) SaveRun(ctx context.Context, r *results.Run) error {
	timeout := s.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	err := s.Store.SaveRun(sctx, r)
	cancel()
	if err == nil || store.Refused(err) {
		return err
	}
	why := Cause(err, r.ID)
	path, kerr := s.Spool.Keep(r, why)
	if kerr != nil {
		return &LostError{Run: r.ID, Store: s.Spool.Store, Why: why, Err: err, SpoolErr: kerr}
	}
	return &KeptError{Run: r.ID, Store: s.Spool.Store, Dir: s.Spool.Dir, Path: path, Why: why, Err: err}
}

// KeptError is a run the store did not take, kept in the spool.
type KeptError struct {
	Run   results.RunID
	Store string // the store, as messages name it
	Dir   string // the spool
	Path  string // the run's file in it
	Why   string // the store's error, in one line
	Err   error
}

func (e *KeptError) Error() string {
	return fmt.Sprintf("the store %s is away (%s): run %s kept in %s", e.Store, e.Why, e.Run, e.Dir)
}

func (e *KeptError) Unwrap() error { return e.Err }

// LostError is a run neither the store nor the spool could take.
type LostError struct {
	Run      results.RunID
	Store    string
	Why      string // the store's error, in one line
	Err      error
	SpoolErr error
}

func (e *LostError) Error() string {
	return fmt.Sprintf("run %s could not be stored (the store %s: %s) nor kept in the spool (%s)", e.Run, e.Store, e.Why, oneLine(e.SpoolErr.Error()))
}

func (e *LostError) Unwrap() []error { return []error{e.Err, e.SpoolErr} }

// Cause is a store's error for run id in one line, without what the
// message already says ("results: save run ID: ") and without a
// password.
func Cause(err error, id results.RunID) string {
	s := oneLine(err.Error())
	for _, prefix := range []string{"results: save run " + string(id) + ": ", "results: "} {
		s = strings.TrimPrefix(s, prefix)
	}
	return redact.Text(s)
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
