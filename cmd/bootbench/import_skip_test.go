package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var importedMatch = regexp.MustCompile(`(?m)^imported (\S+) as run (\S+) \(104 metrics\)$`)

// TestImportSkipExisting: after an import that stopped half way, the same
// command with --skip-existing imports the rest and skips, one line each,
// what is already there; the summary counts both and the exit is 0, also
// when everything was there already — and then the store is not written.
func TestImportSkipExisting(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	files := captures(t, dir, "out", 4)
	base := []string{"import", "--board", "rb450", "--clock", "300", "--db", db}
	// The import that was killed had stored the first two.
	first := invocation{args: append(append([]string(nil), base...), files[:2]...)}.run(t)
	if first.code != 0 {
		t.Fatalf("first import: %s", first.stderr)
	}
	ids := importedMatch.FindAllStringSubmatch(first.stdout, -1)

	all := append(append([]string(nil), base...), files...)
	plain := invocation{args: all}.run(t)
	oneLine(t, plain, 2, files[0]+": already imported (same bytes as run "+ids[0][2]+"); nothing imported")

	r := invocation{args: append(all, "--skip-existing")}.run(t)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("--skip-existing: exit %d: %s", r.code, r.stderr)
	}
	want := []string{
		"skipped " + files[0] + ": already imported (same bytes as run " + ids[0][2] + ")",
		"skipped " + files[1] + ": already imported (same bytes as run " + ids[1][2] + ")",
	}
	for _, w := range want {
		if !strings.Contains(r.stdout, w+"\n") {
			t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
		}
	}
	if got := importedMatch.FindAllStringSubmatch(r.stdout, -1); len(got) != 2 || got[0][1] != files[2] || got[1][1] != files[3] {
		t.Errorf("imported %v, want %s and %s", got, files[2], files[3])
	}
	if !strings.HasSuffix(r.stdout, "\n2 imported, 2 skipped as already imported\n") {
		t.Errorf("summary missing or wrong:\n%s", r.stdout)
	}
	if n := strings.Count(invocation{args: []string{"results", "list", "--db", db}}.run(t).stdout, " rb450 "); n != 4 {
		t.Errorf("%d runs stored, want 4", n)
	}

	before := fileStates(t, dir)
	again := invocation{args: append(all, files[3], "--skip-existing")}.run(t)
	if again.code != 0 || !strings.HasSuffix(again.stdout, "\n0 imported, 5 skipped as already imported\n") ||
		!strings.Contains(again.stdout, "skipped "+files[3]+": already imported (same bytes as run ") {
		t.Errorf("all there already: exit %d\n%s%s", again.code, again.stdout, again.stderr)
	}
	sameFiles(t, "an import that skipped everything", before, fileStates(t, dir))

	both := invocation{args: append(all, "--skip-existing", "--force")}.run(t)
	oneLine(t, both, 2, "import: --force stores output again, --skip-existing skips it: give one")
}

// TestImportRefusedLeavesStoreUnmarked: a store written before stores were
// marked gets its mark at its next write — but an import refused (or
// skipped whole) as already imported writes nothing, the mark included.
func TestImportRefusedLeavesStoreUnmarked(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	args := []string{"import", "--board", "rb450", "--clock", "300", "--db", db, rb450Fixture}
	if r := (invocation{args: args}).run(t); r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	sqliteFile(t, db, `PRAGMA application_id = 0`)
	before := fileStates(t, dir)
	r := invocation{args: args}.run(t)
	oneLine(t, r, 2, "already imported (same bytes as run ")
	sameFiles(t, "a refused import", before, fileStates(t, dir))
	r = invocation{args: append(args, "--skip-existing")}.run(t)
	if r.code != 0 || !strings.HasSuffix(r.stdout, "0 imported, 1 skipped as already imported\n") {
		t.Errorf("--skip-existing: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	sameFiles(t, "an import that skipped everything", before, fileStates(t, dir))
}
