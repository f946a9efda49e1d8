package pgtest

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/bootbench/bootbench/internal/testkit/needs"
)

func TestMain(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}

// TestCluster: the cluster runs as an unprivileged user, listens only on
// its socket, and makes databases whose collation is not bytewise.
func TestCluster(t *testing.T) {
	ctx := context.Background()
	c := Shared(t)
	url, err := c.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db := DatabaseOf(url)
	got, err := c.Query(ctx, db, `SELECT x FROM (VALUES ('B'), ('a')) v(x) ORDER BY x`)
	if err != nil || strings.Join(got, ",") != "a,B" {
		t.Errorf("order = %v, %v; want a,B (ICU English, not bytewise)", got, err)
	}
	got, err = c.Query(ctx, db, `SELECT current_setting('listen_addresses') || '|' || (SELECT rolsuper::text FROM pg_roles WHERE rolname = current_user)`)
	if err != nil || len(got) != 1 || got[0] != "|true" {
		t.Errorf("listen_addresses|superuser = %v, %v; want no TCP listener", got, err)
	}
	fi, err := os.Stat(c.Dir + "/data/PG_VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if uid := fileUID(fi); os.Geteuid() == 0 && uid == 0 {
		t.Errorf("the cluster's files belong to root; want an unprivileged user")
	}
}

func fileUID(fi os.FileInfo) uint32 { return fi.Sys().(*syscall.Stat_t).Uid }

// TestStopStartServer: a server stopped and started again refuses
// connections meanwhile and keeps what it held.
func TestStopStartServer(t *testing.T) {
	ctx := context.Background()
	c, err := Start(ctx)
	if err != nil {
		needs.Unmet(t, "PostgreSQL: "+err.Error())
	}
	defer c.Stop()
	url, err := c.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db := DatabaseOf(url)
	if err := c.Exec(ctx, db, `CREATE TABLE kept (x int)`, `INSERT INTO kept VALUES (42)`); err != nil {
		t.Fatal(err)
	}
	if err := c.StopServer(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query(ctx, db, `SELECT 1`); err == nil {
		t.Error("a stopped server answered")
	}
	if err := c.StartServer(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Query(ctx, db, `SELECT x FROM kept`); err != nil || len(got) != 1 || got[0] != "42" {
		t.Errorf("after the restart: %v, %v; want the row kept", got, err)
	}
}
