package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bootbench/bootbench/internal/testkit/needs"
	"github.com/bootbench/bootbench/internal/testkit/pgtest"
	"github.com/bootbench/bootbench/internal/testkit/userenv"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/spool"
	"github.com/bootbench/bootbench/results/store"
)

// startBootbench starts bootbench with env on top of the tests' and
// returns it running, its stdout and stderr read as they come.
func startBootbench(t *testing.T, env []string, args ...string) (*exec.Cmd, *lockedBuffer, *lockedBuffer) {
	t.Helper()
	cmd := userenv.Command(append([]string{"BOOTBENCH_CACHE=" + cacheOf(t)}, env...), bootbenchBin, args...)
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, &out, &errb
}

// exitCode waits for cmd and returns its exit status.
func exitCode(t *testing.T, cmd *exec.Cmd, limit time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(limit):
		cmd.Process.Kill()
		t.Fatalf("bootbench did not end within %v", limit)
		return -1
	}
}

// errorLines are the lines bootbench says as itself on stderr.
func errorLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "bootbench: ") {
			out = append(out, l)
		}
	}
	return out
}

// spoolDir is the spool of the store db under the data directory data.
func spoolDir(data, db string) string {
	return filepath.Join(data, "bootbench", "spool", spool.Key(db))
}

// TestE2EStoreAwayMidRun is a lab's PostgreSQL going down while a board
// runs its benchmark (the test's own server, stopped once the board is
// up), then coming back: the run is kept whole in the spool and said so
// in one line; once the server is back, the next command that writes to
// the store delivers it, exactly once, with every metric, the transcript,
// the stages; pushing again stores no second copy, nor does a spool file
// of a run the store has already.
func TestE2EStoreAwayMidRun(t *testing.T) {
	requireBench(t)
	ctx := context.Background()
	c, err := pgtest.Start(ctx)
	if err != nil {
		needs.Unmet(t, "PostgreSQL: "+err.Error())
	}
	defer c.Stop()
	db, err := c.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	dir := spoolDir(data, db)

	cmd, stdout, stderr := startBootbench(t, nil, "run", "--db", db, "--algs", "md5,sha256", "--seconds", "0.2", "--retries", "0")
	waitFor(t, 3*time.Minute, "the board to report", func() bool { return strings.Contains(stderr.String(), "board up: ") }, stdout, stderr)
	if err := c.StopServer(); err != nil {
		t.Fatal(err)
	}
	code := exitCode(t, cmd, 3*time.Minute)
	t.Logf("the run:\n%s%s", stdout.String(), stderr.String())
	m := runIDRE.FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatal("no run id in the progress")
	}
	id := m[1]
	want := "bootbench: the store " + db + " is away ("
	tail := "): run " + id + " kept in " + dir + "; it is delivered by the next command that writes to that store, or by 'bootbench results push --db " + db + "'"
	if lines := errorLines(stderr.String()); code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], want) || !strings.HasSuffix(lines[0], tail) {
		t.Fatalf("exit %d, said %q; want exit 1 and one line %q…%q", code, lines, want, tail)
	}
	if n := strings.Count(stdout.String(), " B/s"); n != 12 || !strings.Contains(stdout.String(), id+"  qemu-x86_64  1000 MHz  rep 1") {
		t.Errorf("the run's table (%d metrics) was not printed:\n%s", n, stdout.String())
	}
	if strings.Contains(stdout.String(), "stored in") {
		t.Errorf("said stored:\n%s", stdout.String())
	}
	assertNothingLeft(t, stderr.String())

	file := filepath.Join(dir, id+".run.json")
	spooled, why, err := spool.Read(file)
	if err != nil {
		t.Fatalf("the spool holds no run %s: %v", id, err)
	}
	if spooled.Status != results.StatusOK || len(spooled.Metrics) != 12 || len(spooled.Stages) < 3 || len(spooled.Hello) == 0 ||
		!bytes.Contains(spooled.Transcript, []byte("Welcome to u-root")) || len(spooled.RawOutput) == 0 || why == "" {
		t.Fatalf("spooled run %s (why %q): status %s, %d metrics, %d stages, hello %d B, transcript %d B, output %d B; want it whole",
			id, why, spooled.Status, len(spooled.Metrics), len(spooled.Stages), len(spooled.Hello), len(spooled.Transcript), len(spooled.RawOutput))
	}
	kept, _ := os.ReadFile(file)

	// While the store is away, results list still says what waits.
	waits := "bootbench: 1 run waits in the spool for this store (" + dir + "); the next command that writes to it delivers it, or 'bootbench results push --db " + db + "'"
	if r := bootbench(t, "", "results", "list", "--db", db); !strings.Contains(r.stderr, waits) {
		t.Errorf("results list with the store away: exit %d, stderr %q; want %q", r.code, r.stderr, waits)
	}
	if err := c.StartServer(ctx); err != nil {
		t.Fatal(err)
	}
	if r := bootbench(t, "", "results", "list", "--db", db); r.code != 0 || !strings.Contains(r.stderr, waits) || strings.Contains(r.stdout, id) {
		t.Errorf("results list with the store back: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := bootbench(t, "", "results", "show", id, "--db", db); r.code != 2 || !strings.Contains(r.stderr, "it waits in the spool ("+file+")") {
		t.Errorf("results show of the spooled run: exit %d %s", r.code, r.stderr)
	}

	// The next command that writes to the store delivers it.
	r := bootbench(t, "", "import", "--db", db, "--board", "rb450", "--clock", "300", rb450Fixture)
	if r.code != 0 || !strings.Contains(r.stderr, "bootbench: delivered run "+id+" from the spool to "+db+"\n") {
		t.Fatalf("import after the store came back: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(file); err == nil {
		t.Error("the delivered run is still in the spool")
	}
	assertStoredOnce(t, db, id, spooled)

	// Pushing again finds nothing to deliver.
	r = bootbench(t, "", "results", "push", "--db", db)
	if r.code != 0 || r.stdout != "no runs wait in the spool for "+db+" ("+dir+")\n" {
		t.Errorf("second push: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A spooled run the store has already (it was stored after all) is
	// removed from the spool without a second copy.
	if err := os.WriteFile(file, kept, 0o600); err != nil {
		t.Fatal(err)
	}
	r = bootbench(t, "", "results", "push", "--db", db)
	if r.code != 0 || !strings.Contains(r.stdout, "run "+id+" in the spool was in "+db+" already: removed from the spool\n") ||
		!strings.Contains(r.stdout, "delivered 0 runs from the spool to "+db+"; 0 runs left in the spool\n") {
		t.Errorf("push of a run stored already: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	assertStoredOnce(t, db, id, spooled)
	if r := bootbench(t, "", "results", "list", "--db", db); strings.Contains(r.stderr, "spool") {
		t.Errorf("results list with the spool empty: %s", r.stderr)
	}
}

// assertStoredOnce checks the store db holds run id once, as it was
// spooled: every metric, the transcript, raw output, hello and stages.
func assertStoredOnce(t *testing.T, db, id string, spooled *results.Run) {
	t.Helper()
	s, err := store.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	runs, err := s.Runs(ctx, results.Filter{Board: spooled.Board})
	if err != nil || len(runs) != 1 || string(runs[0].ID) != id {
		t.Fatalf("the store holds %d runs of %s (%v), want run %s once", len(runs), spooled.Board, err, id)
	}
	got, err := s.Run(ctx, results.RunID(id))
	if err != nil {
		t.Fatal(err)
	}
	results.SortMetrics(got.Metrics)
	results.SortMetrics(spooled.Metrics)
	if !reflect.DeepEqual(got.Metrics, spooled.Metrics) || !reflect.DeepEqual(got.Stages, spooled.Stages) ||
		!bytes.Equal(got.Transcript, spooled.Transcript) || !bytes.Equal(got.RawOutput, spooled.RawOutput) ||
		!bytes.Equal(got.Hello, spooled.Hello) || got.Status != spooled.Status || !got.Started.Equal(spooled.Started) {
		t.Errorf("stored run %s differs from the spooled one:\n got %+v\nwant %+v", id, got, spooled)
	}
}

// smallDisk mounts a tmpfs of size for the test (a disk that fills up)
// and returns its directory; it is unmounted when the test ends.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	needs.Root(t, "a tmpfs mounted for the test")
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size="+size+",mode=0755"); err != nil {
		needs.Unmet(t, "mount a tmpfs: "+err.Error())
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount the test's tmpfs %s: %v", dir, err)
		}
	})
	return dir
}

// fillDisk writes into dir until its filesystem is full, and returns the
// file, whose removal gives the space back.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, n := range []int{64 << 10, 4096, 512, 1} {
		chunk := make([]byte, n)
		for {
			if _, err := f.Write(chunk); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
	}
	return path
}

// TestE2EStoreDiskFull is the store's disk filling up while the board
// runs (a small tmpfs, filled once the board is up): the run is kept in
// the spool on another disk and delivered once there is room again; and
// with the spool on the full disk too, nothing can be written at all, so
// the run's figures are printed whole on stdout before exit status 1.
func TestE2EStoreDiskFull(t *testing.T) {
	requireBench(t)
	t.Run("spool on another disk", func(t *testing.T) {
		disk := smallDisk(t, "4m")
		db := filepath.Join(disk, "results.db")
		if r := bootbench(t, "", "import", "--db", db, "--board", "rb450", "--clock", "300", rb450Fixture); r.code != 0 {
			t.Fatal(r.stderr)
		}
		data := t.TempDir()
		t.Setenv("XDG_DATA_HOME", data)
		cmd, stdout, stderr := startBootbench(t, nil, append([]string{"run", "--db", db, "--retries", "0"}, quickSuite...)...)
		waitFor(t, 3*time.Minute, "the board to report", func() bool { return strings.Contains(stderr.String(), "board up: ") }, stdout, stderr)
		filler := fillDisk(t, disk)
		code := exitCode(t, cmd, 3*time.Minute)
		t.Logf("the run:\n%s%s", stdout.String(), stderr.String())
		id := runIDRE.FindStringSubmatch(stderr.String())[1]
		dir := spoolDir(data, db)
		want := "bootbench: the store " + db + " is away (database or disk is full"
		if lines := errorLines(stderr.String()); code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], want) || !strings.Contains(lines[0], "run "+id+" kept in "+dir+";") {
			t.Fatalf("exit %d, said %q; want exit 1 and one line %q… kept in %s", code, lines, want, dir)
		}
		assertNothingLeft(t, stderr.String())
		os.Remove(filler)
		r := bootbench(t, "", "results", "push", "--db", db)
		if r.code != 0 || !strings.Contains(r.stdout, "delivered run "+id+" from the spool to "+db+"\n") {
			t.Fatalf("push once there is room: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		runs := storedRuns(t, db)
		if len(runs) != 2 || runs[1].ID != id && runs[0].ID != id {
			t.Errorf("stored: %+v", runs)
		}
	})
	t.Run("nothing writable", func(t *testing.T) {
		disk := smallDisk(t, "4m")
		db := filepath.Join(disk, "results.db")
		if r := bootbench(t, "", "import", "--db", db, "--board", "rb450", "--clock", "300", rb450Fixture); r.code != 0 {
			t.Fatal(r.stderr)
		}
		cmd, stdout, stderr := startBootbench(t, []string{"XDG_DATA_HOME=" + disk}, append([]string{"run", "--db", db, "--retries", "0"}, quickSuite...)...)
		waitFor(t, 3*time.Minute, "the board to report", func() bool { return strings.Contains(stderr.String(), "board up: ") }, stdout, stderr)
		fillDisk(t, disk)
		code := exitCode(t, cmd, 3*time.Minute)
		t.Logf("the run:\n%s%s", stdout.String(), stderr.String())
		id := runIDRE.FindStringSubmatch(stderr.String())[1]
		lines := errorLines(stderr.String())
		want := "bootbench: run " + id + " could not be stored (the store " + db + ": database or disk is full"
		if code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], want) ||
			!strings.Contains(lines[0], "nor kept in the spool (") || !strings.HasSuffix(lines[0], "no space left on device); its figures are printed above, copy them now") {
			t.Fatalf("exit %d, said %q; want exit 1 and one line %q…", code, lines, want)
		}
		out := stdout.String()
		head := "\nNOT STORED: run " + id + ", board qemu-x86_64, clock 1000 MHz, rep 1, bench speed, ok\n\n" + id + "  qemu-x86_64  1000 MHz  rep 1  bootbench-speed "
		if !strings.HasPrefix(out, head) {
			t.Errorf("stdout starts %q, want %q", out, head)
		}
		// Every figure, as the board's own output has it (kB/s to B/s).
		for _, alg := range []string{"md5", "sha256"} {
			row := regexp.MustCompile(`(?m)^\[ *[0-9.]+s\] bench    \| ` + alg + ` +(.*)$`).FindStringSubmatch(stderr.String())
			if row == nil {
				t.Fatalf("no %s row in the board's output", alg)
			}
			for i, f := range strings.Fields(row[1]) {
				k, err := strconv.ParseFloat(strings.TrimSuffix(f, "k"), 64)
				if err != nil {
					t.Fatal(err)
				}
				size := []int{16, 64, 256, 1024, 8192, 16384}[i]
				if want := fmt.Sprintf("%s@%d", alg, size); !regexp.MustCompile(`(?m)^` + want + ` +` + strconv.FormatFloat(k*1000, 'f', 0, 64) + `  B/s`).MatchString(out) {
					t.Errorf("stdout lacks %s = %.0f B/s:\n%s", want, k*1000, out)
				}
			}
		}
		assertNothingLeft(t, stderr.String())
	})
}
