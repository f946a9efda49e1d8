// Package spool keeps the finished runs a results store could not take (it
// was unreachable, read-only, full) on this host, each whole in a file of
// its own, until a later command delivers them to that store:
//
//	sp := spool.For(storeName)                  // $XDG_DATA_HOME/bootbench/spool/<key>/
//	var saver results.Saver = &spool.Saver{Store: store, Spool: sp}
//	err := saver.SaveRun(ctx, run)              // stored, or a *KeptError, or a *LostError
//	rep, err := sp.Deliver(ctx, store)          // later: each run in its own transaction
//
// A spooled run is written atomically (a temporary file, fsync, rename,
// fsync of the directory), so a file in the spool is always a whole run.
// Delivery removes a file only once the store has its run; a run the store
// already holds under its id (it was stored after all, or another command
// delivered it meanwhile) is removed without a second copy.
package spool

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/bootbench/bootbench/internal/owner"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/store"
)

// Spool is the spool of one store: a directory of spooled runs.
type Spool struct {
	// Dir holds the store's spooled runs, a file each.
	Dir string
	// Store names the store the runs wait for, as messages show it (a
	// URL's password hidden).
	Store string
}

// For is the spool of the store at name (a file path or a postgres://
// URL, as --db takes it), under the user's data directory.
func For(name string) *Spool {
	return &Spool{Dir: filepath.Join(Root(), Key(name)), Store: store.DisplayName(name)}
}

// Root is the directory that holds every store's spool:
// $XDG_DATA_HOME/bootbench/spool, else ~/.local/share/bootbench/spool. It
// is beside the default store, not in the store's own directory, so a store
// elsewhere whose disk filled up can still spool here.
func Root() string {
	// The XDG spec says a relative XDG_DATA_HOME is invalid and must be
	// ignored, as results.DefaultPath ignores it.
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "bootbench", "spool")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".local", "share", "bootbench", "spool")
	}
	// No home at all (minimal containers): the working directory, where
	// results.DefaultPath puts the store too.
	return "bootbench-spool"
}

// Key names a store's spool directory: a readable part of its identity
// and a digest of the whole, so two stores never share a spool and the
// same store, however it is written, has one. The identity leaves out any
// password: the key ends up in file names and messages.
func Key(name string) string {
	id := identity(name)
	sum := sha256.Sum256([]byte(id))
	text := id
	if u, err := url.PathUnescape(id); err == nil {
		text = u // ?host=/run/postgresql reads as itself, not %2F
	}
	readable := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '@', r == '_':
			return r
		}
		return '-'
	}, strings.TrimPrefix(strings.TrimPrefix(text, "postgres://"), "file:"))
	for strings.Contains(readable, "--") {
		readable = strings.ReplaceAll(readable, "--", "-")
	}
	readable = strings.Trim(readable, "-.")
	if len(readable) > maxReadable {
		readable = strings.TrimLeft(readable[len(readable)-maxReadable:], "-.") // the end names the file or database
	}
	return readable + "-" + hex.EncodeToString(sum[:6])
}

// maxReadable bounds the readable part of a key.
const maxReadable = 60

// identity is what names a store, without a password: a file's absolute
// path, or a PostgreSQL URL in one spelling.
func identity(name string) string {
	if !store.IsURL(name) {
		if abs, err := filepath.Abs(name); err == nil {
			name = abs
		}
		return "file:" + filepath.Clean(name)
	}
	u, err := url.Parse(name)
	if err != nil {
		// Unreadable, and possibly holding a password: only its digest
		// may name it, never its text.
		sum := sha256.Sum256([]byte(name))
		return "postgres://unparsed-" + hex.EncodeToString(sum[:8])
	}
	u.Scheme = "postgres" // postgresql:// is the same store
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	for k := range q {
		if strings.EqualFold(k, "password") || strings.EqualFold(k, "passwd") || strings.EqualFold(k, "pwd") {
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode() // sorted by key: one spelling
	return u.String()
}

// Waiting is a run in the spool.
type Waiting struct {
	Path string
	Run  results.RunID
}

// fileSuffix ends a spooled run's file name; temporary files being
// written start with tempPrefix and are not runs yet.
const (
	fileSuffix = ".run.json"
	tempPrefix = ".tmp-"
)

// Waiting lists the runs in the spool, oldest id first. A spool that does
// not exist holds none. Temporary files left by a process that died while
// writing one are removed on the way: they never held a whole run.
func (s *Spool) Waiting() ([]Waiting, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("spool %s: %w", s.Dir, err)
	}
	var out []Waiting
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, tempPrefix) {
			s.removeDeadTemp(name)
			continue
		}
		if id, ok := strings.CutSuffix(name, fileSuffix); ok && e.Type().IsRegular() {
			out = append(out, Waiting{Path: filepath.Join(s.Dir, name), Run: results.RunID(id)})
		}
	}
	slices.SortFunc(out, func(a, b Waiting) int { return strings.Compare(string(a.Run), string(b.Run)) })
	return out, nil
}

// Count is how many runs wait in the spool; 0 when it cannot be read.
func (s *Spool) Count() int {
	w, _ := s.Waiting()
	return len(w)
}

// removeDeadTemp removes a temporary file whose writer is gone
// (".tmp-<pid>-<id>").
func (s *Spool) removeDeadTemp(name string) {
	pidText, _, _ := strings.Cut(strings.TrimPrefix(name, tempPrefix), "-")
	if pid, err := strconv.Atoi(pidText); err == nil && !owner.Alive(pid) {
		os.Remove(filepath.Join(s.Dir, name))
	}
}
