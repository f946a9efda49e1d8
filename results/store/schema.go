package store

import (
	"context"
	"fmt"
)

// migration is one step of the schema history, in each engine's words.
// The two define the same tables, columns, keys and indexes; PostgreSQL's
// differ only where the engines do: BYTEA for BLOB, DOUBLE PRECISION for
// SQLite's 8-byte REAL, and text that compares and sorts bytewise
// (COLLATE "C", as SQLite's BINARY does) whatever the database's locale,
// so both stores list, compare and export runs in the same order.
type migration struct {
	sqlite, postgres string
}

// migrations is the schema history, oldest first. Entry i takes the database
// from version i to i+1 (SQLite: PRAGMA user_version; PostgreSQL: the
// schema_version table). Never edit an entry that has shipped: databases in
// the field already ran it. Extend the schema by appending a new entry.
var migrations = []migration{
	// 1: the initial schema.
	{sqlite: `
CREATE TABLE boards (
	name       TEXT PRIMARY KEY,
	first_seen TEXT NOT NULL
);

CREATE TABLE runs (
	id           TEXT PRIMARY KEY,
	board        TEXT NOT NULL REFERENCES boards(name),
	clock_mhz    INTEGER NOT NULL DEFAULT 0, -- 0: unknown or the board's default
	rep          INTEGER NOT NULL DEFAULT 0,
	status       TEXT NOT NULL,
	reason       TEXT NOT NULL DEFAULT '',
	bench        TEXT NOT NULL DEFAULT '',
	tool         TEXT NOT NULL DEFAULT '',
	tool_version TEXT NOT NULL DEFAULT '',
	started      TEXT NOT NULL DEFAULT '',   -- RFC 3339 UTC, fixed nine-digit fraction
	finished     TEXT NOT NULL DEFAULT '',
	image_digest TEXT NOT NULL DEFAULT '',
	kernel       TEXT NOT NULL DEFAULT '',
	hello        TEXT,                       -- JSON; NULL when the board never reported
	transcript   BLOB,
	raw_output   BLOB
);
-- Comparisons select by board and clock; listings order by start time.
CREATE INDEX runs_board_clock ON runs(board, clock_mhz, started);
CREATE INDEX runs_started ON runs(started);

CREATE TABLE stages (
	run     TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	seq     INTEGER NOT NULL,
	name    TEXT NOT NULL,
	seconds REAL NOT NULL,
	PRIMARY KEY (run, seq)
);

CREATE TABLE metrics (
	run   TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	name  TEXT NOT NULL,
	unit  TEXT NOT NULL,
	value REAL NOT NULL,
	PRIMARY KEY (run, name)
);
`, postgres: `
CREATE TABLE boards (
	name       TEXT COLLATE "C" PRIMARY KEY,
	first_seen TEXT COLLATE "C" NOT NULL
);

CREATE TABLE runs (
	id           TEXT COLLATE "C" PRIMARY KEY,
	board        TEXT COLLATE "C" NOT NULL REFERENCES boards(name),
	clock_mhz    INTEGER NOT NULL DEFAULT 0,
	rep          INTEGER NOT NULL DEFAULT 0,
	status       TEXT COLLATE "C" NOT NULL,
	reason       TEXT COLLATE "C" NOT NULL DEFAULT '',
	bench        TEXT COLLATE "C" NOT NULL DEFAULT '',
	tool         TEXT COLLATE "C" NOT NULL DEFAULT '',
	tool_version TEXT COLLATE "C" NOT NULL DEFAULT '',
	started      TEXT COLLATE "C" NOT NULL DEFAULT '',
	finished     TEXT COLLATE "C" NOT NULL DEFAULT '',
	image_digest TEXT COLLATE "C" NOT NULL DEFAULT '',
	kernel       TEXT COLLATE "C" NOT NULL DEFAULT '',
	hello        TEXT COLLATE "C",
	transcript   BYTEA,
	raw_output   BYTEA
);
CREATE INDEX runs_board_clock ON runs(board, clock_mhz, started);
CREATE INDEX runs_started ON runs(started);

CREATE TABLE stages (
	run     TEXT COLLATE "C" NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	seq     INTEGER NOT NULL,
	name    TEXT COLLATE "C" NOT NULL,
	seconds DOUBLE PRECISION NOT NULL,
	PRIMARY KEY (run, seq)
);

CREATE TABLE metrics (
	run   TEXT COLLATE "C" NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	name  TEXT COLLATE "C" NOT NULL,
	unit  TEXT COLLATE "C" NOT NULL,
	value DOUBLE PRECISION NOT NULL,
	PRIMARY KEY (run, name)
);
`},
	// 2: where a run came from. Imports of saved benchmark output must be
	// told apart from runs on the bench, and importing the same file twice
	// must be refused even when two imports race, hence the unique index
	// on the input's hash. A deliberate re-import (--force) stores NULL,
	// so the first import stays the one the hash points to.
	{sqlite: `
ALTER TABLE runs ADD COLUMN source TEXT NOT NULL DEFAULT 'run'; -- "run" or "import:<file name>"
ALTER TABLE runs ADD COLUMN input_sha256 TEXT;                  -- hex sha256 of the imported bytes
CREATE UNIQUE INDEX runs_input_sha256 ON runs(input_sha256) WHERE input_sha256 IS NOT NULL;
`, postgres: `
ALTER TABLE runs ADD COLUMN source TEXT COLLATE "C" NOT NULL DEFAULT 'run';
ALTER TABLE runs ADD COLUMN input_sha256 TEXT COLLATE "C";
CREATE UNIQUE INDEX runs_input_sha256 ON runs(input_sha256) WHERE input_sha256 IS NOT NULL;
`},
	// 3: the clock a board reported next to the one asked for, and
	// whether anything confirmed it. A run on a real board can ask for
	// 800 MHz and get 680; only the board can tell.
	{sqlite: `
ALTER TABLE runs ADD COLUMN clock_reported_mhz INTEGER NOT NULL DEFAULT 0; -- 0: the board reported none
ALTER TABLE runs ADD COLUMN clock_check TEXT NOT NULL DEFAULT '';        -- verified, unverified, mismatch, or '' (no clock asked for, imported)
`, postgres: `
ALTER TABLE runs ADD COLUMN clock_reported_mhz INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN clock_check TEXT COLLATE "C" NOT NULL DEFAULT '';
`},
	// 4: how many metrics a run was saved with, and their digest, so a
	// read that gets fewer or other metrics (a damaged page SQLite does
	// not notice) fails instead of passing a partial run on as whole.
	// NULL for runs saved before.
	{sqlite: `
ALTER TABLE runs ADD COLUMN metric_count INTEGER;  -- NULL: saved before counts were kept
ALTER TABLE runs ADD COLUMN metrics_sha256 TEXT;   -- hex sha256 of the metrics (results.metricsDigest)
`, postgres: `
ALTER TABLE runs ADD COLUMN metric_count INTEGER;
ALTER TABLE runs ADD COLUMN metrics_sha256 TEXT COLLATE "C";
`},
	// 5: why a run is throttled: the board's throttling watch saw its clock
	// fall below the one asked for, or a thermal zone reach a trip point.
	// NULL for every other run and for runs saved before the watch.
	{sqlite: `
ALTER TABLE runs ADD COLUMN throttle TEXT; -- JSON (results.Throttle); NULL: not throttled
`, postgres: `
ALTER TABLE runs ADD COLUMN throttle TEXT COLLATE "C";
`},
	// 6: the board's power, where its switch has a meter: the samples taken
	// about once a second from power-on to power-off, and the figures
	// derived from them, the idle span before the benchmark and one span
	// per test (results/energy), so compare and export need not derive
	// them again. Runs without a meter have no rows here.
	{sqlite: `
CREATE TABLE power_meters (
	run    TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
	meter  TEXT NOT NULL,              -- the driver's name of it, no credentials
	failed INTEGER NOT NULL DEFAULT 0  -- samples the meter did not give
);

CREATE TABLE power_samples (
	run     TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	seq     INTEGER NOT NULL,
	seconds REAL NOT NULL, -- since the run started
	watts   REAL NOT NULL,
	PRIMARY KEY (run, seq)
);

CREATE TABLE power_spans (
	run          TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	seq          INTEGER NOT NULL,
	name         TEXT NOT NULL,       -- "idle", or the test's metric
	from_seconds REAL NOT NULL,       -- since the run started
	to_seconds   REAL NOT NULL,
	mean_watts   REAL NOT NULL,
	joules       REAL NOT NULL,
	per_joule    REAL NOT NULL,       -- the metric over mean_watts; 0 for idle
	unit         TEXT NOT NULL,       -- of per_joule: "B/J", "ops/J"; '' for idle
	PRIMARY KEY (run, seq)
);
`, postgres: `
CREATE TABLE power_meters (
	run    TEXT COLLATE "C" PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
	meter  TEXT COLLATE "C" NOT NULL,
	failed INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE power_samples (
	run     TEXT COLLATE "C" NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	seq     INTEGER NOT NULL,
	seconds DOUBLE PRECISION NOT NULL,
	watts   DOUBLE PRECISION NOT NULL,
	PRIMARY KEY (run, seq)
);

CREATE TABLE power_spans (
	run          TEXT COLLATE "C" NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	seq          INTEGER NOT NULL,
	name         TEXT COLLATE "C" NOT NULL,
	from_seconds DOUBLE PRECISION NOT NULL,
	to_seconds   DOUBLE PRECISION NOT NULL,
	mean_watts   DOUBLE PRECISION NOT NULL,
	joules       DOUBLE PRECISION NOT NULL,
	per_joule    DOUBLE PRECISION NOT NULL,
	unit         TEXT COLLATE "C" NOT NULL,
	PRIMARY KEY (run, seq)
);
`},
	// 7: a route run's settings (results.RouteSettings): its TCP window,
	// parallel streams, UDP rate and test length. Runs of different
	// settings measure different things and must never be pooled, so
	// they are kept with the run. NULL for other runs and for route runs
	// stored before. And where an imported run's start time comes from:
	// the output's own date, or the import (the output had none).
	{sqlite: `
ALTER TABLE runs ADD COLUMN route_settings TEXT; -- JSON (results.RouteSettings); NULL: not a route run, or stored before
ALTER TABLE runs ADD COLUMN started_from TEXT NOT NULL DEFAULT ''; -- imports: output or imported; '' bench runs and older imports
`, postgres: `
ALTER TABLE runs ADD COLUMN route_settings TEXT COLLATE "C";
ALTER TABLE runs ADD COLUMN started_from TEXT COLLATE "C" NOT NULL DEFAULT '';
`},
	// 8: the firmware that booted a run, as its console showed it: the
	// bootloader's banner (name and version) and the CPU clock it
	// announced. Two runs at one clock setting whose firmware differs
	// (another RouterBOOT, a clock the menu set otherwise) are told
	// apart by it. ''/0 for imports without a console, runs whose console
	// showed none, and runs stored before.
	{sqlite: `
ALTER TABLE runs ADD COLUMN bootloader TEXT NOT NULL DEFAULT '';            -- "RouterBOOT 2.20", "CFE 1.0.37"; '' none shown
ALTER TABLE runs ADD COLUMN firmware_clock_mhz INTEGER NOT NULL DEFAULT 0; -- announced in its banner; 0: none
`, postgres: `
ALTER TABLE runs ADD COLUMN bootloader TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN firmware_clock_mhz INTEGER NOT NULL DEFAULT 0;
`},
	// 9: a store kept for years is read a page or a window at a time:
	// the newest runs, or one board's, in the store's order (started,
	// then id). These indexes give a page without reading or sorting
	// the rest; (started, id) takes over from (started) alone.
	{sqlite: `
CREATE INDEX runs_board_started ON runs(board, started, id);
CREATE INDEX runs_started_id ON runs(started, id);
DROP INDEX runs_started;
`, postgres: `
CREATE INDEX runs_board_started ON runs(board, started, id);
CREATE INDEX runs_started_id ON runs(started, id);
DROP INDEX runs_started;
`},
	// 10: a run's metrics kept together, in the order of their key: a
	// comparison reads thousands of runs' metrics, and SQLite's ordinary
	// table kept them in a table of their own beside an index on (run,
	// name), each read a lookup in both. WITHOUT ROWID makes the key's
	// b-tree hold the rows themselves (and an import writes one b-tree,
	// not two). PostgreSQL has no such tables; its key takes the unit and
	// value in, so reading a run's metrics needs the key's index alone.
	{sqlite: `
CREATE TABLE metrics_by_run (
	run   TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	name  TEXT NOT NULL,
	unit  TEXT NOT NULL,
	value REAL NOT NULL,
	PRIMARY KEY (run, name)
) WITHOUT ROWID;
INSERT INTO metrics_by_run(run, name, unit, value) SELECT run, name, unit, value FROM metrics ORDER BY run, name;
DROP TABLE metrics;
ALTER TABLE metrics_by_run RENAME TO metrics;
-- An import numbers its runs after the highest of the board's setting:
-- found in the index, not by reading every run of the setting.
CREATE INDEX runs_board_clock_rep ON runs(board, clock_mhz, rep);
`, postgres: `
ALTER TABLE metrics DROP CONSTRAINT metrics_pkey, ADD PRIMARY KEY (run, name) INCLUDE (unit, value);
CREATE INDEX runs_board_clock_rep ON runs(board, clock_mhz, rep);
`},
}

// SchemaVersion reports the database's schema version (the number of
// migrations applied).
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	v, err := s.eng.schemaVersion(ctx, s.db)
	if err != nil {
		return 0, fmt.Errorf("results: schema version: %w", err)
	}
	return v, nil
}

// migrate applies the migrations the database has not seen yet, each in its
// own transaction together with the version bump, so a crash leaves the
// database at a well-defined version. The version is read inside the
// (immediate, hence exclusive-for-writers) transaction: two processes
// opening a fresh file at once cannot both apply the same step.
func (s *Store) migrate(ctx context.Context, migs []migration) error {
	for {
		done, err := s.migrateStep(ctx, migs)
		if err != nil || done {
			return err
		}
	}
}

func (s *Store) migrateStep(ctx context.Context, migs []migration) (done bool, err error) {
	// Cheap check outside a write transaction: the common case is an
	// up-to-date, marked store, and opening one must not queue behind a
	// writer.
	v, app, err := s.versionAndMark(ctx, s.db)
	if err != nil {
		return false, err
	}
	if err := s.knownOrNew(v, len(migs)); err != nil {
		return false, err
	}
	if v == len(migs) && app == storeAppID {
		return true, nil
	}

	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback() // no-op after Commit
	// Read again inside the (immediate, hence exclusive-for-writers)
	// transaction: another process may have migrated while we waited.
	if v, app, err = s.versionAndMark(ctx, tx); err != nil {
		return false, err
	}
	if err := s.knownOrNew(v, len(migs)); err != nil {
		return false, err
	}
	if v == len(migs) && app == storeAppID {
		return true, nil
	}
	if app != 0 && app != storeAppID {
		return false, foreign(s.path, fmt.Sprintf("application_id %#x, user_version %d", app, v))
	}
	if v == 0 {
		// inspect saw a blank file; make sure nobody else's tables arrived
		// since, now that we hold the write lock.
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
			return false, fmt.Errorf("schema version: %w", err)
		}
		if n > 0 {
			return false, foreign(s.path, fmt.Sprintf("application_id 0, user_version 0, %d schema objects", n))
		}
	}
	if v < len(migs) {
		if _, err := tx.ExecContext(ctx, migs[v].sqlite); err != nil {
			return false, fmt.Errorf("migrate schema to version %d: %w", v+1, err)
		}
		// PRAGMA takes no bound parameters; v is an int we computed.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, v+1)); err != nil {
			return false, fmt.Errorf("migrate schema to version %d: %w", v+1, err)
		}
	}
	// The mark goes in with the first change, so a file is never marked
	// without bootbench's tables; a store written before marks existed is
	// marked at its next write open.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA application_id = %d`, storeAppID)); err != nil {
		return false, fmt.Errorf("mark the store: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migrate schema to version %d: %w", v+1, err)
	}
	return false, nil
}

func (s *Store) versionAndMark(ctx context.Context, q queryer) (version int, app uint32, err error) {
	if err := q.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return 0, 0, fmt.Errorf("schema version: %w", err)
	}
	var a int64
	if err := q.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&a); err != nil {
		return 0, 0, fmt.Errorf("application id: %w", err)
	}
	return version, uint32(a), nil
}

// knownOrNew is knownVersion for a writer, which may also start a blank
// file (version 0).
func (s *Store) knownOrNew(v, known int) error {
	if v == 0 {
		return nil
	}
	return s.knownVersion(v, known)
}
