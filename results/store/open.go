package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/bootbench/bootbench/internal/redact"
	"golang.org/x/sys/unix"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// storeAppID marks a SQLite file as a bootbench results store: PRAGMA
// application_id, bytes 68–71 of the file header ("bbRS"). A file marked
// otherwise belongs to another application and is refused before anything
// is written to it. Stores written before the mark existed carry 0 and are
// recognised by their tables; the first write marks them.
const storeAppID = 0x62625253

// The kinds of StoreError, for errors.Is.
var (
	// ErrNoStore: nothing is stored at the path yet. Only writers create a
	// store; readers never do.
	ErrNoStore = errors.New("no results store")
	// ErrNotStore: the path holds something that is not a bootbench results
	// store (a directory, another file, another application's database) or
	// a store this bootbench cannot read.
	ErrNotStore = errors.New("not a usable results store")
	// ErrReadOnlyStore: a writer was given a store it may not write.
	ErrReadOnlyStore = errors.New("results store is read-only")
	// ErrDamaged: the store fails SQLite's integrity check.
	ErrDamaged = errors.New("results store is damaged")
)

// StoreError says why the file named as the results store cannot be used
// as asked, and what to do about it.
type StoreError struct {
	Path string
	Kind error  // ErrNoStore, ErrNotStore, ErrReadOnlyStore or ErrDamaged
	What string // what is wrong, e.g. "is a directory"
	Do   string // what to do about it
}

func (e *StoreError) Error() string {
	return fmt.Sprintf("results store %s %s: %s", e.Path, e.What, e.Do)
}

func (e *StoreError) Unwrap() error { return e.Kind }

// Open opens the store at path for reading and writing, creating it (and
// its directory) if there is none, and brings its schema up to date. A file
// that is not a bootbench store is refused before anything is written to it.
// A postgres:// URL names a store in a PostgreSQL database (see
// openPostgres).
func Open(path string) (*Store, error) {
	return openWith(path, migrations)
}

// OpenChecked is Open for writers that must not add to a damaged store.
// On either engine every write is checked where it meets the store, as
// any store's writes are: SQLite checks each page a write reads (see
// dsn), no run is written under an id that has rows stored without its
// run (checkNew), and each run written must read back with the metrics
// it was written with before the transaction commits (checkWritten).
// Damage a write meets leaves the store as it was, and the write fails
// with ErrDamaged, at a cost that stays with what is written, where a
// check of the whole store before each import (SQLite's integrity check,
// PostgreSQL's consistency query) took longer the larger the store grew.
// Damage elsewhere is found by the reads that meet it and by Check.
func OpenChecked(path string) (*Store, error) {
	return Open(path)
}

// OpenReadOnly opens the store at path for reading only. It never creates
// a store or its directory and never writes: it works on a store on a
// read-only mount or owned by someone else. A store written by an older
// bootbench is read through an upgraded copy in a temporary directory,
// which Close removes. On PostgreSQL it reads in read-only transactions,
// with no more than SELECT privileges.
func OpenReadOnly(path string) (*Store, error) {
	if IsURL(path) {
		return openPostgres(context.Background(), path, migrations, pgRead)
	}
	return openRead(path, migrations)
}

// CheckWritable refuses, without writing anything, a store at path that
// Open would refuse before writing: a file that is not a store, or one
// this process may not write. A writer that reads the store before it
// decides to write (import, finding output already stored) says these
// first. A store in PostgreSQL is judged as a writer would judge it, over
// a connection closed before anything is created or migrated.
func CheckWritable(path string) error {
	if IsURL(path) {
		s, err := openPostgres(context.Background(), path, migrations, pgWriteProbe)
		if err != nil {
			return err
		}
		return s.Close()
	}
	state, err := inspect(path)
	if err != nil {
		return err
	}
	if state == stateMissing {
		return nil // Open creates it, and its directory
	}
	return checkWritable(path, state)
}

// openWith opens path read-write with the schema history migs (tests give
// a shorter or longer one).
func openWith(path string, migs []migration) (*Store, error) {
	if IsURL(path) {
		return openPostgres(context.Background(), path, migs, pgWrite)
	}
	return openWrite(path, migs)
}

// storeState is what inspect found at a path.
type storeState int

const (
	stateMissing storeState = iota // nothing there
	stateBlank                     // a file of no bytes: nothing to lose
	stateOurs                      // marked as a bootbench store
	stateLegacy                    // bootbench's tables, written before stores were marked
)

func openWrite(path string, migs []migration) (*Store, error) {
	if path == "" {
		return nil, errors.New("results: empty store path")
	}
	state, err := inspect(path)
	if err != nil {
		return nil, err
	}
	if state == stateMissing {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, &StoreError{Path: path, Kind: ErrReadOnlyStore,
				What: fmt.Sprintf("cannot be created (%v)", unwrapPath(err)), Do: "name a file in a directory you can write"}
		}
	}
	if err := checkWritable(path, state); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("results: open %s: %w", path, err)
	}
	s := &Store{db: db, eng: sqliteEngine{}, path: path}
	ctx := context.Background()
	// The schema goes in before the switch to WAL: a new store's first
	// page, with its mark, is then in the main file, where inspect reads it.
	if err := s.migrate(ctx, migs); err != nil {
		db.Close()
		return nil, s.describe(err)
	}
	if err := setWAL(ctx, db); err != nil {
		db.Close()
		return nil, s.describe(err)
	}
	return s, nil
}

// checkWritable refuses, before SQLite opens it, a store the process may
// not write: SQLite would open it read-only and fail at the first write.
// The directory must be writable too, for the journal and WAL files.
func checkWritable(path string, state storeState) error {
	targets := []string{filepath.Dir(path)}
	if state != stateMissing {
		targets = append(targets, path)
	}
	for _, p := range targets {
		if err := unix.Access(p, unix.W_OK); err != nil {
			return &StoreError{Path: path, Kind: ErrReadOnlyStore,
				What: fmt.Sprintf("is read-only (%s: %v)", p, err), Do: "this command writes to it; give it write access, or name another file"}
		}
	}
	return nil
}

func openRead(path string, migs []migration) (*Store, error) {
	if path == "" {
		return nil, errors.New("results: empty store path")
	}
	state, err := inspect(path)
	if err != nil {
		return nil, err
	}
	if err := requireStore(path, state); err != nil {
		return nil, err
	}
	db, err := openReadConn(path)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, eng: sqliteEngine{}, path: path}
	v, err := s.SchemaVersion(context.Background())
	if err != nil {
		db.Close()
		return nil, s.describe(err)
	}
	if err := s.knownVersion(v, len(migs)); err != nil {
		db.Close()
		return nil, err
	}
	if v == len(migs) {
		return s, nil
	}
	defer db.Close()
	return upgradedCopy(s, migs)
}

// requireStore refuses to read a path holding no store.
func requireStore(path string, state storeState) error {
	switch state {
	case stateMissing:
		return &StoreError{Path: path, Kind: ErrNoStore, What: "does not exist",
			Do: "nothing is stored there yet (bootbench run and bootbench import create it), or name the right file"}
	case stateBlank:
		return &StoreError{Path: path, Kind: ErrNoStore, What: "holds no results yet",
			Do: "bootbench run and bootbench import store them, or name the right file"}
	}
	return nil
}

// upgradedCopy copies an older store into a temporary directory and
// migrates the copy, so an old store is read with today's code without
// being written.
func upgradedCopy(old *Store, migs []migration) (*Store, error) {
	dir, err := os.MkdirTemp("", "bootbench-store-")
	if err != nil {
		return nil, fmt.Errorf("results: read older store %s: %w", old.path, err)
	}
	cp := filepath.Join(dir, "results.db")
	if err := vacuumInto(old.path, cp); err != nil {
		os.RemoveAll(dir)
		return nil, old.describe(err)
	}
	up, err := openWrite(cp, migs)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("results: upgrade a copy of %s: %w", old.path, err)
	}
	up.Close()
	// Read the copy as the original would be read: query only.
	db, err := probe(readDSN(cp, connQueryOnly, true))
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("results: read the upgraded copy of %s: %w", old.path, err)
	}
	return &Store{db: db, eng: sqliteEngine{}, path: old.path, cleanup: func() { os.RemoveAll(dir) }}, nil
}

// vacuumInto writes a consistent copy of the store at path to dst. VACUUM
// INTO reads its source only; query_only would refuse it, so this
// connection is opened without.
func vacuumInto(path, dst string) error {
	db, err := sql.Open("sqlite", readDSN(path, readMode(path), false))
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(`VACUUM INTO ?`, dst)
	return err
}

// Connection modes for reading, best first: a read-write connection with
// query_only sees a WAL store's latest commits and, unlike mode=ro, leaves
// no -wal and -shm files behind; mode=ro needs no write access to the
// file; immutable needs none to the directory either, but cannot see a
// write-ahead log, so it is used only when there is none.
type connMode int

const (
	connQueryOnly connMode = iota
	connReadOnly
	connImmutable
)

func readMode(path string) connMode {
	if unix.Access(path, unix.W_OK) == nil && unix.Access(filepath.Dir(path), unix.W_OK) == nil {
		return connQueryOnly
	}
	return connReadOnly
}

func readDSN(path string, mode connMode, queryOnly bool) string {
	d := fileURI(path) + "?_pragma=busy_timeout(10000)"
	switch mode {
	case connQueryOnly:
		if queryOnly {
			d += "&_pragma=query_only(1)"
		}
	case connReadOnly:
		d += "&mode=ro"
	case connImmutable:
		d += "&mode=ro&immutable=1"
	}
	return d
}

// openReadConn opens path for reading in the best mode that works here.
func openReadConn(path string) (*sql.DB, error) {
	mode := readMode(path)
	db, err := probe(readDSN(path, mode, true))
	if err != nil && mode == connReadOnly {
		// mode=ro on a WAL store needs to create the -shm file; on a
		// read-only mount or in someone else's directory it cannot.
		if _, werr := os.Stat(path + "-wal"); errors.Is(werr, os.ErrNotExist) {
			db, err = probe(readDSN(path, connImmutable, true))
		} else {
			err = fmt.Errorf("%w; its write-ahead log %s-wal needs write access to the directory: copy the store with it somewhere writable", err, path)
		}
	}
	if err != nil {
		return nil, &StoreError{Path: path, Kind: ErrNotStore, What: fmt.Sprintf("cannot be read (%v)", err), Do: "check the file and its permissions"}
	}
	return db, nil
}

// probe opens dsn and reads from it, so a mode that cannot work fails here
// rather than at the first query.
func probe(dsn string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// fileURI makes path a file: URI; escaping keeps a '?' or '#' in it from
// being read as parameters.
func fileURI(path string) string {
	return "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
}

// knownVersion refuses schema versions this bootbench cannot read.
func (s *Store) knownVersion(v, known int) error {
	switch {
	case v > known:
		return &StoreError{Path: s.path, Kind: ErrNotStore,
			What: fmt.Sprintf("has schema version %d, newer than this bootbench knows (%d)", v, known), Do: "upgrade bootbench"}
	case v < 1:
		return &StoreError{Path: s.path, Kind: ErrNotStore,
			What: fmt.Sprintf("has schema version %d, which no bootbench writes", v), Do: "it was left untouched; name another file"}
	}
	return nil
}

// describe turns SQLite's complaints about the file into a StoreError.
func (s *Store) describe(err error) error {
	var se *StoreError
	if errors.As(err, &se) {
		return err
	}
	if IsDamaged(err) {
		return &StoreError{Path: s.path, Kind: ErrDamaged, What: fmt.Sprintf("is damaged (%v)", err), Do: "see bootbench results check"}
	}
	var e *sqlite.Error
	if errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_CANTOPEN {
		// A path SQLite cannot open or create a file at, though its
		// directory looked writable: /proc/x, /sys/x.db, a directory
		// root may enter but no file may be made in.
		return &StoreError{Path: s.path, Kind: ErrReadOnlyStore, What: "cannot be opened or created (unable to open database file)",
			Do: "name a file in a directory of an ordinary file system you can write"}
	}
	return fmt.Errorf("results store %s: %w", s.path, err)
}

// urlScheme is a name that starts as a URL does (scheme://): never a file
// name anyone means, but a store of another kind or a misspelt
// postgres://, which SQLite would take as a relative path and create.
var urlScheme = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)://`)

// CheckName refuses, without touching anything, a store name that can
// never be a store: a URL of a scheme bootbench does not speak. A command
// that works long before it stores (run builds an image) says so first.
func CheckName(path string) error { return refuseScheme(path) }

// refuseScheme refuses a store named by a URL of a scheme bootbench does
// not speak, naming the schemes it takes.
func refuseScheme(path string) error {
	m := urlScheme.FindStringSubmatch(path)
	if m == nil || IsURL(path) {
		return nil
	}
	return &StoreError{Path: redact.Text(path), Kind: ErrNotStore, What: fmt.Sprintf("is a %s:// URL, a store bootbench does not know", m[1]),
		Do: "give a file path, or a PostgreSQL store as postgres://USER@HOST/DATABASE (the schemes taken: postgres://, postgresql://)"}
}

// IsDamaged reports whether err is SQLite finding the file damaged or not
// a database at all, or a run reading otherwise than it was saved.
func IsDamaged(err error) bool {
	if errors.Is(err, ErrDamaged) {
		return true
	}
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return true
	}
	return false
}

// inspect judges the file at path without writing to it: from its header,
// read as bytes, and for unmarked databases from their tables, read
// through an immutable connection (no locks, no journal or WAL files). A
// path that cannot be a store gives a StoreError.
func inspect(path string) (storeState, error) {
	if err := refuseScheme(path); err != nil {
		return 0, err
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return stateMissing, nil
	case err != nil:
		return 0, &StoreError{Path: path, Kind: ErrNotStore, What: fmt.Sprintf("cannot be read (%v)", unwrapPath(err)), Do: "check the path and its permissions"}
	case fi.IsDir():
		return 0, &StoreError{Path: path, Kind: ErrNotStore, What: "is a directory", Do: "name a file, e.g. " + filepath.Join(path, "results.db")}
	case !fi.Mode().IsRegular():
		return 0, &StoreError{Path: path, Kind: ErrNotStore, What: "is not a regular file", Do: "name a bootbench store or a new file"}
	case fi.Size() == 0:
		return stateBlank, nil
	}
	h, err := readHeader(path)
	if err != nil {
		return 0, &StoreError{Path: path, Kind: ErrNotStore, What: fmt.Sprintf("cannot be read (%v)", unwrapPath(err)), Do: "check the path and its permissions"}
	}
	switch {
	case !h.sqlite:
		return 0, &StoreError{Path: path, Kind: ErrNotStore, What: "is not a SQLite database", Do: "it was left untouched; name a bootbench store or a new file"}
	case h.appID == storeAppID:
		return stateOurs, nil
	case h.appID != 0:
		return 0, foreign(path, fmt.Sprintf("application_id %#x, user_version %d", h.appID, h.version))
	}
	return inspectUnmarked(path)
}

// inspectUnmarked tells a bootbench store written before stores were
// marked from another application's database, or an empty one.
func inspectUnmarked(path string) (storeState, error) {
	db, err := sql.Open("sqlite", readDSN(path, connImmutable, true))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var v int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		return 0, unreadable(path, err)
	}
	objects, err := column(db, `SELECT name FROM sqlite_master ORDER BY name`)
	if err != nil {
		return 0, unreadable(path, err)
	}
	tables, err := column(db, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		return 0, unreadable(path, err)
	}
	runCols, err := column(db, `SELECT name FROM pragma_table_info('runs')`)
	if err != nil {
		return 0, unreadable(path, err)
	}
	if v >= 1 && containsAll(tables, "boards", "runs", "stages", "metrics") &&
		containsAll(runCols, "id", "board", "clock_mhz", "rep", "status", "transcript", "raw_output") {
		return stateLegacy, nil
	}
	// A SQLite file without tables is refused too: something made it
	// (a database tool, another program about to fill it), and only a
	// file of no bytes at all is nobody's.
	what := fmt.Sprintf("application_id 0, user_version %d", v)
	switch {
	case len(tables) > 4:
		what += ", tables " + strings.Join(append(tables[:4], "…"), ", ")
	case len(tables) > 0:
		what += ", tables " + strings.Join(tables, ", ")
	case len(objects) == 0:
		what += ", no tables"
	}
	return 0, foreign(path, what)
}

func foreign(path, what string) error {
	return &StoreError{Path: path, Kind: ErrNotStore,
		What: "is another application's SQLite database (" + what + ")",
		Do:   "it was left untouched; name a bootbench store or a new file"}
}

func unreadable(path string, err error) error {
	return &StoreError{Path: path, Kind: ErrNotStore, What: fmt.Sprintf("is not a readable SQLite database (%v)", err),
		Do: "it was left untouched; name a bootbench store or a new file"}
}

func column(db *sql.DB, query string) ([]string, error) {
	rows, err := db.Query(query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// unwrapPath drops the path from an *fs.PathError's message where the
// caller names the path itself.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// fileHeader is what the first 100 bytes of a SQLite file say
// (https://www.sqlite.org/fileformat.html#the_database_header).
type fileHeader struct {
	sqlite  bool   // starts with the SQLite magic string
	appID   uint32 // PRAGMA application_id
	version int32  // PRAGMA user_version
}

func readHeader(path string) (fileHeader, error) {
	f, err := os.Open(path)
	if err != nil {
		return fileHeader{}, err
	}
	defer f.Close()
	var b [100]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return fileHeader{}, nil // too short for a database
		}
		return fileHeader{}, err
	}
	return fileHeader{
		sqlite:  string(b[:16]) == "SQLite format 3\x00",
		version: int32(binary.BigEndian.Uint32(b[60:64])),
		appID:   binary.BigEndian.Uint32(b[68:72]),
	}, nil
}
