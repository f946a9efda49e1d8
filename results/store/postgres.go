package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// A store in PostgreSQL, for a lab whose bench hosts share one, is named by
// a URL (postgres://USER@HOST/DATABASE, as libpq and pgx read it, with the
// password in the URL, ~/.pgpass or PGPASSWORD). It lives in its own
// schema, pgSchema, of that database: bootbench creates nothing outside it
// and reads nothing outside it but the catalog, so the database may hold
// other applications' tables. The schema carries the mark SQLite files get
// as their application_id: a schema_version table holding storeAppID and
// the schema version. A schema of that name without the mark is another
// application's and is refused untouched, as a foreign SQLite file is.
const pgSchema = "bootbench"

// pgLockKey names the advisory lock a writer holds while it creates or
// migrates the store, so that two hosts doing so at once take turns.
const pgLockKey = int64(storeAppID)

// IsURL reports whether name names a store in PostgreSQL rather than a
// SQLite file.
func IsURL(name string) bool {
	return strings.HasPrefix(name, "postgres://") || strings.HasPrefix(name, "postgresql://")
}

// DisplayName is name as messages show it: a URL's password hidden.
func DisplayName(name string) string {
	if !IsURL(name) {
		return name
	}
	u, err := url.Parse(name)
	if err != nil {
		return "postgres://…" // unreadable, and possibly holding a password
	}
	if _, has := u.User.Password(); !has && !u.Query().Has("password") {
		return name
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// pgConns is how many connections a store in PostgreSQL opens at most.
const pgConns = 4

type pgMode int

const (
	pgRead pgMode = iota
	pgWrite
	// pgWriteProbe judges the store as a writer would and stops there:
	// nothing is created or migrated (CheckWritable).
	pgWriteProbe
)

// openPostgres opens the store at the URL raw. Readers connect with
// default_transaction_read_only, so nothing they do can write; they never
// create the schema and need no more than SELECT on its tables. Writers
// refuse a read-only server or a user who may not write before writing,
// and create or migrate the schema in one transaction under pgLockKey.
func openPostgres(ctx context.Context, raw string, migs []migration, mode pgMode) (*Store, error) {
	name := DisplayName(raw)
	cfg, err := pgx.ParseConfig(raw)
	if err != nil {
		return nil, &StoreError{Path: name, Kind: ErrNotStore, What: fmt.Sprintf("is not a PostgreSQL URL bootbench can use (%v)", err),
			Do: "write it as postgres://USER@HOST/DATABASE"}
	}
	// Unqualified names find bootbench's tables, and only those.
	cfg.RuntimeParams["search_path"] = pgSchema
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "bootbench"
	}
	if mode == pgRead {
		cfg.RuntimeParams["default_transaction_read_only"] = "on"
	}
	db := stdlib.OpenDB(*cfg)
	// One server serves every bench host: a few connections each. They
	// stay open while the store is: a walk's pages are read on several
	// at once, and a connection closed and opened again between pages
	// (database/sql keeps 2 idle by default) costs the server a new
	// backend, which starts with its caches cold.
	db.SetMaxOpenConns(pgConns)
	db.SetMaxIdleConns(pgConns)
	s := &Store{db: db, eng: pgEngine{}, path: name}
	if err := s.pgOpen(ctx, migs, mode); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) pgOpen(ctx context.Context, migs []migration, mode pgMode) error {
	st, err := pgInspect(ctx, s.db)
	if err != nil {
		return s.pgDescribe(err)
	}
	if err := s.pgJudge(st, len(migs)); err != nil {
		return err
	}
	if mode == pgRead {
		return s.pgReadable(st, len(migs))
	}
	if err := s.pgWritable(ctx, st); err != nil {
		return err
	}
	if mode == pgWriteProbe {
		return nil
	}
	if st.marked && st.version == len(migs) {
		return nil
	}
	return s.pgMigrate(ctx, migs)
}

// pgState is what pgInspect found in the database.
type pgState struct {
	schema  bool     // pgSchema exists
	tables  []string // the tables in it
	marked  bool     // it holds schema_version
	rows    int      // rows in schema_version (one in a store)
	app     int64
	version int
}

// pgInspect reads what is in the database from the catalog, which every
// user may read, and the store's mark, without writing.
func pgInspect(ctx context.Context, q queryer) (pgState, error) {
	var st pgState
	if err := q.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1)`, pgSchema).Scan(&st.schema); err != nil {
		return st, err
	}
	if !st.schema {
		return st, nil
	}
	var err error
	st.tables, err = textColumn(ctx, q, `
		SELECT c.relname::text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f') ORDER BY 1`, pgSchema)
	if err != nil || !slices.Contains(st.tables, "schema_version") {
		return st, err
	}
	st.marked = true
	rows, err := q.QueryContext(ctx, `SELECT application, version FROM `+pgSchema+`.schema_version`)
	if err != nil {
		return st, err
	}
	defer rows.Close()
	for rows.Next() {
		st.rows++
		if err := rows.Scan(&st.app, &st.version); err != nil {
			return st, err
		}
	}
	return st, rows.Err()
}

// pgJudge refuses a schema that is not a store of ours, or one this
// bootbench cannot use.
func (s *Store) pgJudge(st pgState, known int) error {
	foreign := func(what string) error {
		return &StoreError{Path: s.path, Kind: ErrNotStore, What: "holds another application's schema " + pgSchema + " (" + what + ")",
			Do: "it was left untouched; name another database"}
	}
	switch {
	case !st.marked && len(st.tables) > 0:
		return foreign("tables " + strings.Join(st.tables, ", "))
	case st.marked && (st.rows != 1 || st.app != int64(storeAppID)):
		return foreign(fmt.Sprintf("schema_version with %d rows, application %#x", st.rows, st.app))
	}
	return s.knownOrNew(st.version, known)
}

// pgReadable refuses to read a database that holds no store of today's
// schema. An older store is upgraded by the next writer; a reader cannot
// do it without writing.
func (s *Store) pgReadable(st pgState, known int) error {
	switch {
	case !st.schema:
		return &StoreError{Path: s.path, Kind: ErrNoStore, What: "holds no results store (no schema " + pgSchema + ")",
			Do: "nothing is stored there yet (bootbench run, import and results push create it), or name the right database"}
	case !st.marked || st.version == 0:
		return &StoreError{Path: s.path, Kind: ErrNoStore, What: "holds no results yet",
			Do: "bootbench run, import and results push store them, or name the right database"}
	case st.version < known:
		return &StoreError{Path: s.path, Kind: ErrNotStore,
			What: fmt.Sprintf("has schema version %d, older than this bootbench's (%d)", st.version, known),
			Do:   "a bootbench command that writes to it (run, import, results push) upgrades it; reading never writes"}
	}
	return nil
}

// pgWritable refuses, before anything is written, a server that takes no
// writes and a user who may not write the store.
func (s *Store) pgWritable(ctx context.Context, st pgState) error {
	var standby bool
	var readOnly, user string
	if err := s.db.QueryRowContext(ctx, `SELECT pg_catalog.pg_is_in_recovery(), pg_catalog.current_setting('transaction_read_only'), current_user::text`).Scan(&standby, &readOnly, &user); err != nil {
		return s.pgDescribe(err)
	}
	switch {
	case standby:
		return &StoreError{Path: s.path, Kind: ErrReadOnlyStore, What: "is read-only (a standby server)", Do: "this command writes to it; name the primary server"}
	case readOnly == "on":
		return &StoreError{Path: s.path, Kind: ErrReadOnlyStore, What: "is read-only (transaction_read_only is on for user " + user + ")", Do: "this command writes to it; use a user or server that takes writes"}
	case !st.marked || st.version == 0:
		return nil // a new store: creating it says whether the user may
	}
	missing, err := textColumn(ctx, s.db, `
		SELECT 'USAGE on schema '||n.nspname FROM pg_catalog.pg_namespace n
			WHERE n.nspname = $1 AND NOT pg_catalog.has_schema_privilege(n.oid, 'USAGE')
		UNION ALL
		SELECT p.priv||' on '||c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
			CROSS JOIN (VALUES ('SELECT'), ('INSERT'), ('UPDATE')) p(priv)
		WHERE n.nspname = $1 AND c.relname IN ('boards', 'runs', 'stages', 'metrics', 'power_meters', 'power_samples', 'power_spans')
			AND (p.priv <> 'UPDATE' OR c.relname = 'boards')
			AND NOT pg_catalog.has_table_privilege(c.oid, p.priv)
		ORDER BY 1`, pgSchema)
	if err != nil {
		return s.pgDescribe(err)
	}
	if len(missing) > 0 {
		return &StoreError{Path: s.path, Kind: ErrReadOnlyStore,
			What: fmt.Sprintf("is read-only for user %s (no %s)", user, strings.Join(missing, ", ")),
			Do:   "this command writes to it; its owner can GRANT them, or use a user who may write"}
	}
	return nil
}

// pgMigrate creates or upgrades the store: every step it lacks, and the
// version, in one transaction, under an advisory lock, so a second host
// doing the same waits and then finds the work done, and a failure leaves
// the store as it was.
func (s *Store) pgMigrate(ctx context.Context, migs []migration) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.pgDescribe(err)
	}
	defer tx.Rollback() // no-op after Commit
	if _, err := tx.ExecContext(ctx, `SELECT pg_catalog.pg_advisory_xact_lock($1)`, pgLockKey); err != nil {
		return s.pgDescribe(err)
	}
	// Again, now that no other writer can be migrating.
	st, err := pgInspect(ctx, tx)
	if err != nil {
		return s.pgDescribe(err)
	}
	if err := s.pgJudge(st, len(migs)); err != nil {
		return err
	}
	if st.marked && st.version == len(migs) {
		return nil
	}
	var steps []string
	if !st.schema {
		steps = append(steps, `CREATE SCHEMA `+pgSchema)
	}
	if !st.marked {
		steps = append(steps, `CREATE TABLE `+pgSchema+`.schema_version (
			application BIGINT NOT NULL,  -- storeAppID: this schema is a bootbench results store
			version     INTEGER NOT NULL  -- migrations applied
		)`, fmt.Sprintf(`INSERT INTO %s.schema_version VALUES (%d, 0)`, pgSchema, storeAppID))
	}
	for v := st.version; v < len(migs); v++ {
		steps = append(steps, migs[v].postgres)
	}
	steps = append(steps, fmt.Sprintf(`UPDATE %s.schema_version SET version = %d`, pgSchema, len(migs)))
	for _, step := range steps {
		// No arguments: pgx sends it as a simple query, which may hold
		// several statements.
		if _, err := tx.ExecContext(ctx, step); err != nil {
			return s.pgMigrateErr(st.version, len(migs), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.pgMigrateErr(st.version, len(migs), err)
	}
	return nil
}

func (s *Store) pgMigrateErr(from, to int, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" {
		what := "cannot be created"
		if from > 0 {
			what = fmt.Sprintf("cannot be upgraded from schema version %d to %d", from, to)
		}
		return &StoreError{Path: s.path, Kind: ErrReadOnlyStore, What: what + " by this user (" + pe.Message + ")",
			Do: "run this once as the database's owner, or have the owner create schema " + pgSchema + " for this user"}
	}
	if from == 0 {
		return s.pgDescribe(fmt.Errorf("create the store: %w", err))
	}
	return s.pgDescribe(fmt.Errorf("migrate schema from version %d to %d: %w", from, to, err))
}

// pgDescribe turns what the server or the connection said into a
// StoreError where the URL is the problem.
func (s *Store) pgDescribe(err error) error {
	var se *StoreError
	if errors.As(err, &se) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "3D000":
			return &StoreError{Path: s.path, Kind: ErrNoStore, What: "cannot be opened (" + pe.Message + ")",
				Do: "create the database (createdb NAME) or name another"}
		case strings.HasPrefix(pe.Code, "28"):
			return &StoreError{Path: s.path, Kind: ErrNotStore, What: "refused the connection (" + pe.Message + ")",
				Do: "check the user and password: in the URL, ~/.pgpass or PGPASSWORD"}
		case pe.Code == "42501":
			return &StoreError{Path: s.path, Kind: ErrNotStore, What: "cannot be read by this user (" + pe.Message + ")",
				Do: "its owner can GRANT USAGE ON SCHEMA " + pgSchema + " and SELECT ON ALL TABLES IN SCHEMA " + pgSchema}
		}
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return &StoreError{Path: s.path, Kind: ErrNotStore, What: fmt.Sprintf("cannot be reached (%s)", onceEach(errors.Unwrap(ce))),
			Do: "check the URL and that the server is running"}
	}
	return fmt.Errorf("results store %s: %w", s.path, err)
}

// pgProblems is the store's consistency check on PostgreSQL: the server
// keeps its own pages sound (and pg_amcheck checks them), so what is left
// to check is what bootbench promises of its rows. Foreign keys already
// forbid most of it; a store restored with triggers disabled, or written
// by hand, can still break it. It reads every row, so it is results
// check's alone: a write checks only the rows it meets (checkNew,
// checkWritten).
func pgProblems(ctx context.Context, q queryer) ([]string, error) {
	return textColumn(ctx, q, `
		SELECT 'metric '||m.name||' of run '||m.run||' refers to a missing run' FROM metrics m
			WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = m.run)
		UNION ALL
		SELECT 'stage '||s.seq||' of run '||s.run||' refers to a missing run' FROM stages s
			WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run)
		UNION ALL
		SELECT 'power sample '||p.seq||' of run '||p.run||' refers to a missing run' FROM power_samples p
			WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = p.run)
		UNION ALL
		SELECT 'power span '||p.name||' of run '||p.run||' refers to a missing run' FROM power_spans p
			WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = p.run)
		UNION ALL
		SELECT 'run '||r.id||' refers to a missing board '||r.board FROM runs r
			WHERE NOT EXISTS (SELECT 1 FROM boards b WHERE b.name = r.board)
		UNION ALL
		SELECT 'run '||m.run||' has metric '||m.name||' = '||m.value::text FROM metrics m
			WHERE m.value IN ('NaN'::float8, 'Infinity'::float8, '-Infinity'::float8)
		UNION ALL
		SELECT 'run '||r.id||' has unknown status '||r.status FROM runs r
			WHERE r.status NOT IN ('ok', 'failed', 'corrupt', 'interrupted', 'clock-mismatch')
		LIMIT 100`)
}

// checkPostgres is Check for a store in PostgreSQL, read-only.
func checkPostgres(ctx context.Context, raw string) (*CheckReport, error) {
	s, err := openPostgres(ctx, raw, migrations, pgRead)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	rep := &CheckReport{Path: s.path, Runs: -1}
	if rep.Version, err = s.SchemaVersion(ctx); err != nil {
		return nil, s.pgDescribe(err)
	}
	if rep.Problems, err = pgProblems(ctx, s.db); err != nil {
		return nil, s.pgDescribe(err)
	}
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM runs`).Scan(&rep.Runs); err != nil {
		rep.Problems = append(rep.Problems, "count runs: "+err.Error())
	}
	saved, damaged, err := s.savedProblems(ctx)
	if err != nil {
		return nil, s.pgDescribe(err)
	}
	rep.Problems, rep.Damaged = append(rep.Problems, saved...), damaged
	return rep, nil
}

// textColumn returns the first column of a query's rows.
func textColumn(ctx context.Context, q queryer, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// pgEngine is a store in a PostgreSQL database.
type pgEngine struct{}

func (pgEngine) bind(q string) string { return bindDollar(q) }

// readTx reads one snapshot: under PostgreSQL's default READ COMMITTED
// each statement of a load would see the runs committed so far.
func (pgEngine) readTx() *sql.TxOptions {
	return &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead}
}

func (pgEngine) conflict(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" { // unique_violation
		return nil
	}
	switch pe.ConstraintName {
	case "runs_pkey":
		return ErrExists
	case "runs_input_sha256":
		return ErrDuplicateInput
	}
	return nil
}

func (pgEngine) schemaVersion(ctx context.Context, q queryer) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
	return v, err
}

func (pgEngine) problems(ctx context.Context, db *sql.DB) ([]string, error) {
	return pgProblems(ctx, db)
}

// onceEach is err's message on one line, each line of it said once: pgx
// tries a host again without TLS (sslmode=prefer, the default) and joins
// the attempts' errors, which for a server that is not there are the same
// dial error twice.
func onceEach(err error) string {
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}
