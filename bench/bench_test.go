// Package bench holds bootbench's measurements against baselines, as
// scripts a person runs (see the README's "Measured"). This test runs every
// script with its smallest repetition count, so one that no longer works
// fails CI instead of rotting until someone needs its figures.
package bench

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/needs"
	"github.com/bootbench/bootbench/internal/testkit/userenv"
)

// script is a bench/ script to run, with its arguments, what it needs,
// and lines its report must hold.
type script struct {
	script string
	args   []string
	needs  []string // commands; "root" for root; a path (a glob) for a file
	want   []*regexp.Regexp
}

// scripts are the bench/ scripts with the arguments that make each as
// short as it can be, what each needs, and lines its report must hold; a
// script with variants (store-scale.sh's engines) is run once for each.
var scripts = []script{
	{
		script: "netboot-vs-dnsmasq.sh",
		args:   []string{"-n", "1", "-q"},
		needs:  []string{"root", "qemu-system-x86_64", "ip", "go"},
		want: []*regexp.Regexp{
			regexp.MustCompile(`(?m)^rep 1/1  A bootbench \(HTTP\) +[0-9.]+ s$`),
			regexp.MustCompile(`(?m)^rep 1/1  B dnsmasq \(TFTP\) +[0-9.]+ s$`),
			regexp.MustCompile(`(?m)^rep 1/1  C bootbench --transport tftp +[0-9.]+ s$`),
			regexp.MustCompile(`(?m)^B dnsmasq \(TFTP\) +[0-9.]+ +[0-9.]+ +[0-9.]+ +1\.00x$`),
		},
	},
	{
		script: "realbench-vs-virtual.sh",
		args:   []string{"-n", "1", "-q"},
		needs:  []string{"root", "qemu-system-x86_64", "ip", "go", "socat"},
		want: []*regexp.Regexp{
			regexp.MustCompile(`(?m)^rep 1/1  A virtual qemu-x86_64 +[0-9.]+ s$`),
			regexp.MustCompile(`(?m)^rep 1/1  B simulated bench, pc1 +[0-9.]+ s$`),
			regexp.MustCompile(`(?m)^A virtual qemu-x86_64 +[0-9.]+ +[0-9.]+ +[0-9.]+ +1\.00x$`),
			regexp.MustCompile(`(?m)^B simulated bench, pc1 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x$`),
		},
	},
	{
		script: "store-sqlite-vs-postgres.sh",
		args:   []string{"-i", "20", "-r", "40", "-k", "1"},
		needs:  []string{"go", "/usr/lib/postgresql/*/bin/initdb"},
		want: []*regexp.Regexp{
			regexp.MustCompile(`(?m)^import of 20 openssl speed outputs, one bootbench import$`),
			regexp.MustCompile(`(?m)^sqlite +[0-9.]+ +[0-9.]+$`),
			regexp.MustCompile(`(?m)^postgres +[0-9.]+ +[0-9.]+$`),
			regexp.MustCompile(`(?m)^results push of 40 runs, SQLite to PostgreSQL: [0-9.]+ s, [0-9.]+ runs/s$`),
			regexp.MustCompile(`(?m)^results compare --by clock over 40 runs \(20 at each of 2 clocks\), 1 times$`),
			regexp.MustCompile(`(?m)^sqlite +[0-9.]+ +[0-9.]+ +[0-9.]+$`),
			regexp.MustCompile(`(?m)^postgres +[0-9.]+ +[0-9.]+ +[0-9.]+$`),
		},
	},
	{
		script: "store-scale.sh",
		args:   []string{"200"},
		needs:  []string{"go", "/usr/bin/time"},
		want:   storeScaleReport(`SQLite \(modernc\.org/sqlite\) in WAL mode`),
	},
	{
		script: "store-scale.sh",
		args:   []string{"-e", "postgres", "200"},
		needs:  []string{"go", "/usr/bin/time", "/usr/lib/postgresql/*/bin/initdb"},
		want:   storeScaleReport(`postgres \(PostgreSQL\) [0-9.]+.*, throwaway cluster`),
	},
	{
		script: "tftp-vs-dnsmasq.sh",
		args:   []string{"-n", "1", "-q"},
		needs:  []string{"root", "ip", "go", "curl", "dnsmasq", "in.tftpd"},
		want: []*regexp.Regexp{
			regexp.MustCompile(`(?m)^rep 1/1  512 +A bootbench tftp +[0-9.]+ s$`),
			regexp.MustCompile(`(?m)^rep 1/1  1468 +C tftpd-hpa +[0-9.]+ s$`),
			regexp.MustCompile(`(?m)^rep 1/1  512x8 +B dnsmasq +[0-9.]+ s$`),
			regexp.MustCompile(`(?m)^512 +A bootbench tftp +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x$`),
			regexp.MustCompile(`(?m)^1468 +B dnsmasq +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +1\.00x$`),
			regexp.MustCompile(`(?m)^rep 1/1  512busy +A bootbench tftp +[0-9.]+ s$`),
			regexp.MustCompile(`(?m)^512busy +A bootbench tftp +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x$`),
			regexp.MustCompile(`(?m)^1468busy +B dnsmasq +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +1\.00x$`),
			regexp.MustCompile(`(?m)^1468busy +A bootbench tftp +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x$`),
			regexp.MustCompile(`(?m)^512x8 +A bootbench tftp +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x$`),
			regexp.MustCompile(`(?m)^1468x8 +C tftpd-hpa +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x$`),
			regexp.MustCompile(`(?m)^512w16 +A bootbench tftp +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x$`),
			regexp.MustCompile(`(?m)^512w1 +A bootbench tftp +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +-$`),
			regexp.MustCompile(`(?m)^windowsize 16 at blksize 512, A bootbench tftp: [0-9.]+x the throughput of 512w1, [0-9.]+x that of 512 \(curl\)$`),
		},
	},
	{
		script: "twin-boot.sh",
		args:   []string{"-n", "1", "-q"},
		needs:  []string{"root", "qemu-system-x86_64", "qemu-system-aarch64", "ip", "go"},
		want: []*regexp.Regexp{
			regexp.MustCompile(`(?m)^rep 1/1  qemu-x86_64 +A Debian's kernel +[0-9.]+ s$`),
			regexp.MustCompile(`(?m)^rep 1/1  qemu-x86_64 +B bootbench's kernel +[0-9.]+ s$`),
			regexp.MustCompile(`(?m)^rep 1/1  qemu-arm64 +A Debian's, self-tests +[0-9.]+ s$`),
			regexp.MustCompile(`(?m)^rep 1/1  qemu-arm64 +B Debian's, notests +[0-9.]+ s$`),
			regexp.MustCompile(`(?m)^qemu-x86_64 +A Debian's kernel +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +1\.00x$`),
			regexp.MustCompile(`(?m)^qemu-x86_64 +B bootbench's kernel +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x$`),
			regexp.MustCompile(`(?m)^qemu-arm64 +A Debian's, self-tests +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +1\.00x$`),
			regexp.MustCompile(`(?m)^qemu-arm64 +B Debian's, notests +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x$`),
		},
	},
	{
		script: "speed-vs-openssl.sh",
		args:   []string{"-s", "1", "-a", "sha256,rsa2048"},
		needs:  []string{"openssl", "go"},
		want: []*regexp.Regexp{
			regexp.MustCompile(`(?m)^openssl at the default clock \(baseline, 1 run\) vs bootbench-speed at the default clock \(1 run\)$`),
			regexp.MustCompile(`(?m)^sha256@1024 +B/s +[0-9]+ +[0-9]+ +1\+1 +[0-9.]+ `),
			regexp.MustCompile(`(?m)^rsa2048-sign +ops/s `),
		},
	},
}

// storeScaleReport is what store-scale.sh at N=200 reports, on the
// engine its header line names as engine says.
func storeScaleReport(engine string) []*regexp.Regexp {
	row := func(command string) *regexp.Regexp {
		return regexp.MustCompile(`(?m)^` + command + ` +[0-9.]+ +[0-9]+ +[0-9.]+ +[0-9]+ +(?:[0-9.]+x|-) +(?:[0-9.]+x|-)$`)
	}
	return []*regexp.Regexp{
		regexp.MustCompile(`(?m); ` + engine + `.*; [0-9]+ cores$`),
		regexp.MustCompile(`(?m)^stores of 20 and 200 runs; rb450g at 680 and 800 MHz 10 runs each, the rest rb450 at 300 MHz$`),
		regexp.MustCompile(`(?m)^import of 200 openssl speed outputs, [0-9]+ files a command: [0-9.]+ s, [0-9]+ runs/s$`),
		row(`results list`),
		row(`results list --board rb450g`),
		row(`results list --limit 0 --board rb450g`),
		row(`results compare --by clock --board rb450g`),
		row(`results export --format json`),
		row(`results export --format csv`),
	}
}

// TestScripts runs every bench/*.sh, each variant as a subtest named by
// the script and its arguments (TestScripts/store-scale.sh_-e_postgres_200).
// With BOOTBENCH_E2E=1 (make test, CI) a missing prerequisite fails the
// test.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("*.sh")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bench/*.sh (%v)", err)
	}
	for _, f := range files {
		if !slices.ContainsFunc(scripts, func(s script) bool { return s.script == f }) {
			t.Errorf("bench/%s is not run here: add it to scripts in bench_test.go with its smallest repetition count", f)
		}
	}
	for _, s := range scripts {
		f := s.script
		t.Run(strings.Join(append([]string{f}, s.args...), " "), func(t *testing.T) {
			if !slices.Contains(files, f) {
				t.Fatalf("scripts names bench/%s, which is not there", f)
			}
			requireAll(t, s.needs)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			// The scripts run from the repository root.
			// As a user runs them: no go test settings in the environment.
			cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join("bench", f)}, s.args...)...)
			cmd.Env = userenv.Environ()
			cmd.Dir = ".."
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			start := time.Now()
			if err := cmd.Run(); err != nil {
				t.Fatalf("bench/%s %s: %v\nstdout:\n%s\nstderr:\n%s", f, strings.Join(s.args, " "), err, out.String(), tail(errb.String(), 40))
			}
			t.Logf("bench/%s %s: %.0f s\n%s", f, strings.Join(s.args, " "), time.Since(start).Seconds(), out.String())
			for _, re := range s.want {
				if !re.Match(out.Bytes()) {
					t.Errorf("report lacks a line matching %s", re)
				}
			}
		})
	}
}

func requireAll(t *testing.T, prereqs []string) {
	t.Helper()
	var missing []string
	for _, n := range prereqs {
		if n == "root" {
			if os.Geteuid() != 0 {
				missing = append(missing, "root")
			}
			continue
		}
		if strings.HasPrefix(n, "/") {
			if found, _ := filepath.Glob(n); len(found) == 0 {
				missing = append(missing, n)
			}
			continue
		}
		missing = append(missing, needs.Missing(n)...)
	}
	if len(missing) == 0 {
		return
	}
	needs.Unmet(t, "missing "+strings.Join(missing, ", ")+" (make deps installs them)")
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
