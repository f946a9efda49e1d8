// Package pgtest runs a throwaway PostgreSQL cluster for tests: Debian's
// own server binaries (/usr/lib/postgresql/*/bin), a data directory and a
// unix socket in a fresh temporary directory, no TCP listener, run as an
// unprivileged user (the package's postgres user when the tests run as
// root). Nothing outside that directory is touched, and the server stops
// with the test binary.
//
//	c, err := pgtest.Start(ctx)
//	defer c.Stop()
//	url, err := c.NewDatabase(ctx) // postgres://postgres@/t3?host=/tmp/bootbench-pg-…
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/bootbench/bootbench/internal/testkit/needs"
)

// Superuser is the cluster's bootstrap superuser; tests connect as it.
const Superuser = "postgres"

// Cluster is a running throwaway cluster.
type Cluster struct {
	// Dir holds the data directory, the socket and the server's log.
	Dir  string
	bin  string
	cred *syscall.Credential // nil: run as ourselves
	// exited is closed when the server process has been reaped; err is
	// how it ended.
	exited chan struct{}
	err    error
	proc   *os.Process
	dbs    atomic.Int64
}

// BinDir returns the directory of the newest PostgreSQL server installed
// from Debian's packages, or an error saying what to install.
func BinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	var found []string
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			found = append(found, d)
		}
	}
	if len(found) == 0 {
		return "", errors.New("no PostgreSQL server in /usr/lib/postgresql/*/bin (apt-get install postgresql; make deps installs it)")
	}
	sort.Slice(found, func(i, j int) bool { return version(found[i]) > version(found[j]) })
	return found[0], nil
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Start creates a cluster in a new temporary directory and starts its
// server. The server refuses to run as root, so as root it runs as the
// postgres user Debian's package creates (else nobody).
func Start(ctx context.Context) (*Cluster, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "bootbench-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	c := &Cluster{Dir: dir, bin: bin, exited: make(chan struct{})}
	if err := c.setUser(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := c.initdb(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := c.start(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

// setUser picks the unprivileged user the server runs as and gives it
// the directory.
func (c *Cluster) setUser() error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		if u, err = user.Lookup("nobody"); err != nil {
			return fmt.Errorf("pgtest: no unprivileged user to run PostgreSQL as (postgres, nobody): %w", err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	if err := os.Chown(c.Dir, uid, gid); err != nil {
		return fmt.Errorf("pgtest: give %s to %s: %w", c.Dir, u.Username, err)
	}
	return nil
}

func (c *Cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = c.Dir
	// A clean environment: no PG* variables of the developer's, and a
	// locale every Debian system has.
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8", "HOME=" + c.Dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	return cmd
}

func (c *Cluster) initdb(ctx context.Context) error {
	cmd := c.command(ctx, "initdb", "-D", c.data(), "-U", Superuser, "--auth=trust",
		"--encoding=UTF8", "--locale=C.UTF-8", "--no-sync", "--no-instructions")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	return nil
}

func (c *Cluster) data() string { return filepath.Join(c.Dir, "data") }

// start runs the server as a child of a goroutine that keeps its OS
// thread for the server's lifetime: the kernel sends the server SIGQUIT
// (immediate shutdown) when that thread goes, so a test binary that dies
// takes its server with it.
func (c *Cluster) start(ctx context.Context) error {
	logf, err := os.Create(filepath.Join(c.Dir, "server.log"))
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	cmd := c.command(context.Background(), "postgres", "-D", c.data(), "-k", c.Dir,
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the server
		defer logf.Close()
		if err := cmd.Start(); err != nil {
			started <- err
			close(c.exited)
			return
		}
		c.proc = cmd.Process
		started <- nil
		c.err = cmd.Wait()
		close(c.exited)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	if err := c.waitReady(ctx); err != nil {
		c.Stop()
		log, _ := os.ReadFile(filepath.Join(c.Dir, "server.log"))
		return fmt.Errorf("pgtest: %w\n%s", err, log)
	}
	return nil
}

func (c *Cluster) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		db, err := c.open("postgres")
		if err == nil {
			err = db.PingContext(ctx)
			db.Close()
			if err == nil {
				return nil
			}
		}
		select {
		case <-c.exited:
			return fmt.Errorf("postgres exited: %v", c.err)
		case <-ctx.Done():
			return fmt.Errorf("postgres not ready: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// URL is the URL of database db as the superuser, over the socket.
func (c *Cluster) URL(db string) string {
	return "postgres://" + Superuser + "@/" + db + "?host=" + c.Dir
}

// UserURL is the URL of database db as user.
func (c *Cluster) UserURL(user, db string) string {
	return "postgres://" + user + "@/" + db + "?host=" + c.Dir
}

func (c *Cluster) open(db string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(c.URL(db))
	if err != nil {
		return nil, err
	}
	return stdlib.OpenDB(*cfg), nil
}

// NewDatabase creates an empty database and returns its URL. Its default
// collation is ICU's English, under which text does not sort bytewise
// ("a" < "B"), so a store that relies on the database's collation shows.
func (c *Cluster) NewDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("t%d", c.dbs.Add(1))
	if err := c.Exec(ctx, "postgres", `CREATE DATABASE `+name+` TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en'`); err != nil {
		return "", err
	}
	return c.URL(name), nil
}

// Exec runs statements in database db as the superuser.
func (c *Cluster) Exec(ctx context.Context, db string, stmts ...string) error {
	conn, err := c.open(db)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("pgtest: %s: %w", firstLine(s), err)
		}
	}
	return nil
}

// Query returns the first column of a query's rows in database db, as
// text.
func (c *Cluster) Query(ctx context.Context, db, query string) ([]string, error) {
	conn, err := c.open(db)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %s: %w", firstLine(query), err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s sql.NullString
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s.String)
	}
	return out, rows.Err()
}

// DatabaseOf returns the database name in a URL NewDatabase returned.
func DatabaseOf(url string) string {
	rest := url[strings.Index(url, "@/")+2:]
	name, _, _ := strings.Cut(rest, "?")
	return name
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if l, _, ok := strings.Cut(s, "\n"); ok {
		return l + " …"
	}
	return s
}

// Stop shuts the server down (fast: sessions are ended) and removes the
// directory.
func (c *Cluster) Stop() error {
	if c.proc != nil {
		c.proc.Signal(syscall.SIGINT)
		select {
		case <-c.exited:
		case <-time.After(30 * time.Second):
			c.proc.Kill()
			<-c.exited
		}
	}
	return os.RemoveAll(c.Dir)
}

// StopServer stops the server as Stop does but keeps the cluster, as a
// database host that went down would: clients get connection errors
// until StartServer brings it back with everything it held.
func (c *Cluster) StopServer() error {
	if c.proc == nil {
		return errors.New("pgtest: the server is not running")
	}
	c.proc.Signal(syscall.SIGINT)
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		c.proc.Kill()
		<-c.exited
	}
	c.proc = nil
	return nil
}

// StartServer starts the server of a cluster StopServer stopped.
func (c *Cluster) StartServer(ctx context.Context) error {
	if c.proc != nil {
		return errors.New("pgtest: the server is running")
	}
	c.exited, c.err = make(chan struct{}), nil
	return c.start(ctx)
}

// shared is the cluster every test of one test binary uses.
var shared struct {
	once sync.Once
	c    *Cluster
	err  error
}

// Shared returns the test binary's cluster, starting it on first use. A
// cluster that cannot start fails the test when BOOTBENCH_E2E=1 (make
// test, CI) and skips it otherwise. Call StopShared from TestMain.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		shared.c, shared.err = Start(ctx)
	})
	if shared.err != nil {
		needs.Unmet(t, "PostgreSQL: "+shared.err.Error())
	}
	return shared.c
}

// StopShared stops the shared cluster if a test started it.
func StopShared() {
	if shared.c != nil {
		shared.c.Stop()
	}
}
