package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/bootbench/bootbench/internal/testkit/userenv"
)

// The replay tests run `bootbench console --replay` as a user does, from
// the folder the logs are in: serialctl's fixtures (assembled from
// published consoles, see serialctl/testdata/README.md) and their copies
// as mail, syslog and forum left them (serialctl/replay/testdata).

const (
	fixtures = "../../serialctl/testdata"
	copies   = "../../serialctl/replay/testdata"
)

// TestReplayFixtures replays the acceptance fixtures, each held to its
// board's profile, and compares what a user sees, for people and for
// scripts, with testdata/replay/NAME.BOARD.txt and .json (go test
// -update rewrites them). A log that shows a failure or contradicts its
// profile exits 1 with one line on stderr; one that fits, 0 and nothing.
func TestReplayFixtures(t *testing.T) {
	tests := []struct {
		dir, file, board string
		code             int
	}{
		{fixtures, "routerboot-rb450g-netboot.txt", "rb450g", 0},
		{fixtures, "routerboot-rb450g-netboot-failed.txt", "rb450g", 1},
		{fixtures, "cfe-wrt54g-boot-elf.txt", "wrt54g-v3", 0},
		{fixtures, "uboot-ar7240-tftpboot.txt", "tl-mr3420", 0},
		{fixtures, "rpi4-netboot-old.txt", "rpi4b", 0},
		{fixtures, "rpi4-netboot-new.txt", "rpi4b", 0},
		{copies, "routerboot-rb450g-netboot.mail.txt", "rb450g", 0},
		{copies, "routerboot-rb450g-netboot-failed.syslog.txt", "rb450g", 1},
		{copies, "cfe-wrt54g-boot-elf.cut.txt", "wrt54g-v3", 0},
		{copies, "uboot-ar7240-tftpboot.tio.txt", "tl-mr3420", 0},
		{copies, "rpi4-netboot-new.quoted.txt", "rpi4b", 0},
		{copies, "rb450g-announces-800.txt", "rb450g", 1},
		{fixtures, "routerboot-rb450g-netboot.txt", "tl-mr3420", 1},
	}
	for _, tt := range tests {
		name := strings.TrimSuffix(tt.file, ".txt") + "." + tt.board
		t.Run(name, func(t *testing.T) {
			for _, format := range []string{"text", "json"} {
				r, _ := bootbenchAt(t, bootbenchBin, tt.dir, nil, "console", "--replay", tt.file, "--board", tt.board, "--format", format)
				if r.code != tt.code {
					t.Errorf("%s: exit %d, want %d; stderr %q", format, r.code, tt.code, r.stderr)
				}
				if tt.code == 0 && r.stderr != "" || tt.code == 1 && strings.Count(r.stderr, "\n") != 1 {
					t.Errorf("%s: stderr %q", format, r.stderr)
				}
				ext := map[string]string{"text": ".txt", "json": ".json"}[format]
				checkGolden(t, filepath.Join("testdata", "replay", name+ext), r.stdout)
			}
		})
	}
}

func checkGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\ngot:\n%s\nwant:\n%s", golden, got, want)
	}
}

// TestReplayStdin: "-" reads the log from standard input, as a user pipes
// a paste into it.
func TestReplayStdin(t *testing.T) {
	log, err := os.ReadFile(filepath.Join(copies, "rpi4-netboot-old.forum.txt"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := userenv.Command(nil, bootbenchBin, "console", "--replay", "-", "--board", "rpi4b")
	cmd.Stdin = strings.NewReader(string(log))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{"console log -: 48 lines (undone: typographic characters", "line  2  firmware  RPi bootloader 2021-02-16",
		"line 44  kernel    Linux 5.10.17-v8+", "fits board model rpi4b"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

// TestReplayBadInput: what is not a log, or not a profile, is refused in
// one line that says what was wrong, exit 2.
func TestReplayBadInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.log")
	os.WriteFile(empty, nil, 0o644)
	good := filepath.Join(fixtures, "routerboot-rb450g-netboot.txt")
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"no such file", []string{"--replay", filepath.Join(dir, "nope.log")}, "console: --replay: open " + filepath.Join(dir, "nope.log") + ": no such file or directory"},
		{"a directory", []string{"--replay", dir}, "is a directory, not a console log"},
		{"a binary", []string{"--replay", bootbenchBin}, "is not a text log: "},
		{"empty", []string{"--replay", empty}, empty + " is empty"},
		{"unknown profile", []string{"--replay", good, "--board", "rb450gg"}, `--board "rb450gg" is no board profile (did you mean rb450g?)`},
		{"nothing near", []string{"--replay", good, "--board", "zzzzzzzzzz"}, `--board "zzzzzzzzzz" is no board profile (see 'bootbench boards list')`},
		{"a board and a file", []string{"pc1", "--replay", good}, "--replay reads a file, not a board"},
		{"with --write", []string{"--replay", good, "--write"}, "--replay reads a file, not a board"},
		{"bad format", []string{"--replay", good, "--format", "yaml"}, `--format "yaml": say text or json`},
		{"--board alone", []string{"pc1", "--board", "rb450g"}, "--board and --format go with --replay FILE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := bootbenchAt(t, bootbenchBin, ".", []string{"BOOTBENCH_INVENTORY="}, append([]string{"console"}, tt.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.want) || strings.Count(r.stderr, "\n") != 1 || r.stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want 2 and one line with %q", r.code, r.stderr, r.stdout, tt.want)
			}
		})
	}
}

// TestReplayUnreadable: a log the user may not read is bad input too,
// named with the reason.
func TestReplayUnreadable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run bootbench as another user")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	os.Chmod(filepath.Dir(dir), 0o755)
	bin := filepath.Join(dir, "bootbench")
	b, err := os.ReadFile(bootbenchBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "root-only.log")
	if err := os.WriteFile(log, []byte("RouterBOOT booter 2.41\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := userenv.Command(nil, bin, "console", "--replay", log)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var errb strings.Builder
	cmd.Stderr = &errb
	err = cmd.Run()
	want := "bootbench: console: --replay: open " + log + ": permission denied\n"
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 || errb.String() != want {
		t.Errorf("%v, stderr %q; want exit 2, %q", err, errb.String(), want)
	}
}
