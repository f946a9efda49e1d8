// Package cachelock lets one bootbench build a shared cache entry while
// any other that wants the same entry waits for it. Two bootbench
// processes on one host (serve for one board, run for another; a lab's
// runs side by side) share one cache: without the lock both would build
// the same kernel at once, each taking the host's cores from the other,
// and two apt-get runs on one private package list fail on apt's own lock.
//
// The lock is an flock on a file beside the entry. The file stays: removing
// a lock file someone else may be waiting on would let a third process
// take a fresh one beside it.
package cachelock

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// poll is how often a waiting process tries the lock again. flock cannot
// wait on a context, and a build takes minutes: a quarter second is lost
// at most.
const poll = 250 * time.Millisecond

// Lock takes the exclusive lock path, creating the file (and its
// directory) if needed. When another process holds it, waiting is called
// once and Lock tries again until it gets the lock or ctx ends. The
// returned unlock releases it.
func Lock(ctx context.Context, path string, waiting func()) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for told := false; ; {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing drops the flock
		}
		if err != unix.EWOULDBLOCK {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !told && waiting != nil {
			waiting()
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// Once makes the entry that done reports on, by build, unless it is
// there: under the lock path, so a process that waited finds what the
// other built instead of building it again.
func Once(ctx context.Context, path string, done func() bool, waiting func(), build func() error) error {
	if done() {
		return nil
	}
	unlock, err := Lock(ctx, path, waiting)
	if err != nil {
		return err
	}
	defer unlock()
	if done() {
		return nil
	}
	return build()
}

// Exists is the done of an entry that is whole once path exists (the
// entries are moved into place in one rename).
func Exists(path string) func() bool {
	return func() bool { _, err := os.Stat(path); return err == nil }
}
