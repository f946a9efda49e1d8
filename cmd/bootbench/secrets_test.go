package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// planted is the password the secrets tests hide in URLs.
const planted = "PlantedS3cret"

// secretsInventory is a bench whose power switches are named by URLs
// holding a password: one with a scheme the inventory refuses (bad), the
// others well formed.
func secretsInventory(t *testing.T, bad bool) string {
	t.Helper()
	url := "http://admin:" + planted + "@127.0.0.1:9"
	if bad {
		url = "ftp://admin:" + planted + "@127.0.0.1:9/relay"
	}
	inv := `bench:
  interface: bbsecret0
  address: 198.18.5.1/24
boards:
  pc1:
    profile: pc-x86_64
    mac: "52:54:00:bb:05:20"
    address: 198.18.5.20
    console: /dev/null
    power: {driver: tasmota, url: "` + url + `", relay: 1}
  pc2:
    profile: pc-x86_64
    mac: "52:54:00:bb:05:21"
    address: 198.18.5.21
    console: /dev/null
    power: {driver: command, on: "curl -s http://u:` + planted + `@127.0.0.1:9/on", off: "curl -s http://u:` + planted + `@127.0.0.1:9/off"}
`
	path := filepath.Join(t.TempDir(), "bench.yaml")
	if err := os.WriteFile(path, []byte(inv), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNoCommandShowsAPassword plants a password in the inventory's URLs,
// in --db and $BOOTBENCH_DB, in --to, and in a failure reason a store
// written before reasons were masked holds, runs every command that could
// quote one, and finds it in none of their output, in no file they write,
// and in no store they wrote.
func TestNoCommandShowsAPassword(t *testing.T) {
	dir := t.TempDir()
	pg := "postgres://bench:" + planted + "@127.0.0.1:9/results"
	local := filepath.Join(dir, "results.db")
	if r := (invocation{args: []string{"import", "--board", "rb450", "--clock", "300", "--db", local, rb450Fixture}}).run(t); r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	listed := strings.Split((invocation{args: []string{"results", "list", "--db", local}}).run(t).stdout, "\n")
	if len(listed) < 2 || !strings.HasPrefix(listed[0], "RUN ") {
		t.Fatalf("results list: %q", listed)
	}
	run := strings.Fields(listed[1])[0]
	sqliteFile(t, local, `UPDATE runs SET status = 'failed', reason = 'setup: power on: Get "http://admin:`+planted+`@198.18.5.7/cm": connection refused'`)
	badInv, goodInv := secretsInventory(t, true), secretsInventory(t, false)
	out := filepath.Join(dir, "export.html")
	type cmd struct {
		args []string
		env  []string
	}
	cmds := []cmd{
		{args: []string{"run", "--inventory", badInv, "--board", "pc1", "--db", local}},
		{args: []string{"serve", "--inventory", badInv, "--once", "pc1", "--db", local}},
		{args: []string{"console", "pc1", "--inventory", badInv}},
		{args: []string{"ci", "--inventory", badInv, "--board", "pc1", "--baseline", "board=rb450,clock=300", "--max-regression", "3%", "--db", local}},
		{args: []string{"run", "--board", "pc1", "--boot-timeout", "1s", "--retries", "0", "--db", local}, env: []string{"BOOTBENCH_INVENTORY=" + badInv}},
		{args: []string{"serve", "--inventory", goodInv, "--once", "pc2", "--db", local}},
		{args: []string{"run", "--inventory", goodInv, "--board", "pc1", "--boot-timeout", "1s", "--retries", "0", "--db", local}},
		{args: []string{"run", "--inventory", goodInv, "--board", "pc2", "--boot-timeout", "1s", "--retries", "0", "--db", local}},
		{args: []string{"results", "list", "--db", local}},
		{args: []string{"results", "show", run, "--db", local}},
		{args: []string{"results", "show", run, "--transcript", "--db", local}},
		{args: []string{"results", "export", "--format", "json", "--db", local}},
		{args: []string{"results", "export", "--format", "csv", "--db", local}},
		{args: []string{"results", "export", "--format", "openwrt", "--db", local}},
		{args: []string{"results", "export", "--format", "gobench", "--db", local}},
		{args: []string{"results", "export", "--format", "html", "-o", out, "--db", local}},
		{args: []string{"results", "push", "--to", pg, "--db", local}},
		{args: []string{"results", "list", "--db", pg}},
		{args: []string{"results", "show", run, "--db", pg}},
		{args: []string{"results", "export", "--format", "json", "--db", pg}},
		{args: []string{"results", "compare", "--by", "clock", "--board", "rb450", "--db", pg}},
		{args: []string{"results", "check", "--db", pg}},
		{args: []string{"import", "--board", "rb450", "--clock", "300", "--db", pg, rb450Fixture}},
		{args: []string{"results", "list"}, env: []string{"BOOTBENCH_DB=" + pg}},
		{args: []string{"import", "--board", "rb450", "--clock", "300", rb450Fixture}, env: []string{"BOOTBENCH_DB=" + pg}},
		{args: []string{"run", "--board", "qemu-x86_64", "--boot-timeout", "1s", "--retries", "0", "--db", pg}},
	}
	for _, c := range cmds {
		r := invocation{args: c.args, env: c.env}.run(t)
		if strings.Contains(r.stdout+r.stderr, planted) {
			t.Errorf("%v (exit %d) shows the password:\nstdout: %s\nstderr: %s", c.args, r.code, r.stdout, r.stderr)
		}
	}
	// Nothing written holds it: the export, the store the runs above
	// stored their failures in, whatever else appeared.
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(planted)) && p != local {
			t.Errorf("%s holds the password", p)
		}
		return nil
	})
	// The old reason stays as the older bootbench stored it; what the runs
	// above stored never holds the password.
	sqliteFile(t, local, `UPDATE runs SET reason = '' WHERE id = '`+run+`'`, `VACUUM`)
	if b, _ := os.ReadFile(local); bytes.Contains(b, []byte(planted)) {
		t.Errorf("%s: a run stored by the commands above holds the password", local)
	}
	if b, _ := os.ReadFile(out); !bytes.Contains(b, []byte("admin:xxxxx@198.18.5.7")) {
		t.Errorf("%s does not show the reason with its password masked", out)
	}
}

// TestPasswordOnCommandLineWarned: a password in --db or --to is visible
// to every user in ps, and bootbench says so, once; in $BOOTBENCH_DB it is
// not, and nothing is said. --help says where a password goes.
func TestPasswordOnCommandLineWarned(t *testing.T) {
	pg := "postgres://bench:" + planted + "@127.0.0.1:9/results"
	const warning = "bootbench: warning: the password in postgres://bench:xxxxx@127.0.0.1:9/results is visible to every user of this host (ps); put it in ~/.pgpass or $PGPASSWORD, or the whole URL in $BOOTBENCH_DB\n"
	for _, args := range [][]string{
		{"results", "list", "--db", pg},
		{"results", "check", "--db", pg},
		{"results", "push", "--db", filepath.Join(t.TempDir(), "none.db"), "--to", pg},
	} {
		r := invocation{args: args}.run(t)
		if !strings.HasPrefix(r.stderr, warning) || strings.Count(r.stderr, "warning:") != 1 {
			t.Errorf("%v: stderr %q: want the warning first, once", args, r.stderr)
		}
	}
	for _, c := range []invocation{
		{args: []string{"results", "list"}, env: []string{"BOOTBENCH_DB=" + pg}},
		{args: []string{"results", "list", "--db", "postgres://bench@127.0.0.1:9/results"}, env: []string{"PGPASSWORD=" + planted}},
	} {
		if r := c.run(t); strings.Contains(r.stderr, "warning:") {
			t.Errorf("%v %v: warned: %q", c.env, c.args, r.stderr)
		}
	}
	for _, args := range [][]string{{"results", "list", "--help"}, {"import", "--help"}, {"results", "push", "--help"}, {"help"}} {
		r := invocation{args: args}.run(t)
		if !strings.Contains(r.stdout, "~/.pgpass or $PGPASSWORD") {
			t.Errorf("%v does not say where a password goes:\n%s", args, r.stdout)
		}
	}
}
