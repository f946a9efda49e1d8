package initramfs

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestChangelogEpoch: SOURCE_DATE_EPOCH is the newest changelog entry's
// date (Debian's own openssl changelog, a one-digit day); a changelog with
// no trailer or a bad date is an error. Where dpkg-parsechangelog is on the
// host, each epoch is also what dpkg-buildpackage would set.
func TestChangelogEpoch(t *testing.T) {
	tests := []struct {
		file string
		want int64
		err  string
	}{
		{"openssl", 1780775780, ""},
		{"one-digit-day", 1680429600, ""},
		{"no-trailer", 0, "no entry's trailer line"},
		{"bad-date", 0, "the newest entry's date"},
	}
	_, dpkgErr := exec.LookPath("dpkg-parsechangelog")
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "changelog", tt.file)
			got, err := changelogEpoch(path)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("changelogEpoch = %d, %v; want %d", got, err, tt.want)
			}
			if dpkgErr == nil {
				out, err := exec.Command("dpkg-parsechangelog", "-l", path, "-STimestamp").Output()
				if dpkg, _ := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err != nil || dpkg != got {
					t.Errorf("dpkg-parsechangelog says %s (%v), we %d", out, err, got)
				}
			}
		})
	}
}

// TestCrossConfigure: the Configure and make arguments of each cross
// target match testdata/crossopenssl/<arch>.golden, one per line: a change
// to them is a change of the program every cached build was made with.
func TestCrossConfigure(t *testing.T) {
	for arch, ct := range crossTargets {
		t.Run(arch, func(t *testing.T) {
			steps := ct.steps(crossRecipe{Configure: ct.configureArgs(), Make: makeTargets})
			var lines []string
			for _, s := range steps {
				lines = append(lines, strings.Join(s, " "))
			}
			got := strings.Join(lines, "\n") + "\n"
			golden := filepath.Join("testdata", "crossopenssl", arch+".golden")
			if *updateGolden {
				os.WriteFile(golden, []byte(got), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			// make's -j is the host's parallelism, no input of the bytes.
			if norm := normJobs(got); norm != normJobs(string(want)) {
				t.Errorf("build steps:\n%s\nwant (%s):\n%s", got, golden, want)
			}
		})
	}
}

func normJobs(s string) string {
	var out []string
	for _, w := range strings.Fields(s) {
		if strings.HasPrefix(w, "-j") {
			w = "-jN"
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// TestCrossRecipeDigest: every input of the build names another cache
// entry, and the same inputs the same one.
func TestCrossRecipeDigest(t *testing.T) {
	ct := crossTargets["mips"]
	base := crossRecipe{Source: "openssl=3.0.20-1~deb12u2", Compiler: "mips-linux-gnu-gcc (Debian 12.2.0-14) 12.2.0",
		Toolchain: "gcc-mips-linux-gnu=4:12.2.0-4\nlibc6-dev-mips-cross=2.36-8cross1", Configure: ct.configureArgs(), Make: makeTargets}
	changes := map[string]func(r *crossRecipe){
		"source security update": func(r *crossRecipe) { r.Source = "openssl=3.0.22-1~deb12u2" },
		"compiler update":        func(r *crossRecipe) { r.Compiler = "mips-linux-gnu-gcc (Debian 12.2.0-15) 12.2.0" },
		"C library update":       func(r *crossRecipe) { r.Toolchain = "gcc-mips-linux-gnu=4:12.2.0-4\nlibc6-dev-mips-cross=2.36-9cross1" },
		"a flag more":            func(r *crossRecipe) { r.Configure = append(append([]string(nil), r.Configure...), "-Os") },
		"a make target more":     func(r *crossRecipe) { r.Make = []string{"build_sw"} },
	}
	again := base
	again.Configure = append([]string(nil), base.Configure...)
	if base.digest() != again.digest() {
		t.Fatal("the same recipe has two digests")
	}
	seen := map[string]string{base.digest(): "base"}
	for name, change := range changes {
		r := base
		change(&r)
		d := r.digest()
		if prev, ok := seen[d]; ok {
			t.Errorf("%s: same digest as %s", name, prev)
		}
		seen[d] = name
	}
}

// TestCheckNoBuildPath: a program holding the build directory's path is
// refused, one without it passes.
func TestCheckNoBuildPath(t *testing.T) {
	dir := t.TempDir()
	build := filepath.Join(dir, ".build-123")
	tests := []struct {
		name, content string
		bad           bool
	}{
		{"clean", "\x7fELF relative crypto/aes/aes_core.c", false},
		{"leaks its directory", "\x7fELF " + build + "/openssl-3.0.20/crypto/aes/aes_core.c", true},
	}
	for _, tt := range tests {
		bin := filepath.Join(dir, tt.name)
		if err := os.WriteFile(bin, []byte(tt.content), 0o755); err != nil {
			t.Fatal(err)
		}
		err := checkNoBuildPath(bin, build)
		if (err != nil) != tt.bad {
			t.Errorf("%s: err = %v, want refused %v", tt.name, err, tt.bad)
		}
	}
}

// TestUpstreamVersion: the version the progress line names.
func TestUpstreamVersion(t *testing.T) {
	for in, want := range map[string]string{"3.0.20-1~deb12u2": "3.0.20", "1:2.3-4-5": "2.3-4", "3.0.20": "3.0.20"} {
		if got := upstreamVersion(in); got != want {
			t.Errorf("upstreamVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCrossToolsMissing: without the cross compiler on PATH the build is
// refused before anything is fetched, naming the packages to install.
func TestCrossToolsMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := crossTargets["mips"].crossTools()
	if err == nil || !strings.Contains(err.Error(), "mips-linux-gnu-gcc, which is not installed (apt-get install gcc-mips-linux-gnu") {
		t.Fatalf("err = %v, want the compiler and its packages named", err)
	}
	_, err = Build(context.Background(), Spec{Arch: "mips", Bench: "openssl", Source: source(t)}, t.TempDir())
	if !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), "make deps") {
		t.Fatalf("Build: %v, want a bad spec naming make deps", err)
	}
}
