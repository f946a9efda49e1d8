package gofix

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/needs"
	"github.com/bootbench/bootbench/internal/testkit/userenv"
)

func goroot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestFor corrects the toolchain's own files: one sequence inside
// runtime·usleep and nothing else, for the four MIPS architectures, and
// nothing for the others.
func TestFor(t *testing.T) {
	root := goroot(t)
	tests := []struct {
		goarch, file string
	}{
		{"mips", "sys_linux_mipsx.s"}, {"mipsle", "sys_linux_mipsx.s"},
		{"mips64", "sys_linux_mips64x.s"}, {"mips64le", "sys_linux_mips64x.s"},
		{"amd64", ""}, {"arm", ""}, {"ppc64le", ""},
	}
	for _, tt := range tests {
		t.Run(tt.goarch, func(t *testing.T) {
			files, err := For(root, tt.goarch)
			if err != nil {
				t.Fatal(err)
			}
			if tt.file == "" {
				if len(files) != 0 || Needed(tt.goarch) {
					t.Fatalf("%s needs no correction, got %d files", tt.goarch, len(files))
				}
				return
			}
			if len(files) != 1 || files[0].Original != filepath.Join(root, "src", "runtime", tt.file) {
				t.Fatalf("files: %+v", files)
			}
			orig, _ := os.ReadFile(files[0].Original)
			removed, added := lineDiff(string(orig), string(files[0].Text))
			if len(removed) != 3 || len(added) != 3 {
				t.Fatalf("changed lines: removed %q, added %q; want the three that compute tv_nsec", removed, added)
			}
			if !strings.Contains(strings.Join(added, "\n"), "HI, R5") {
				t.Errorf("the correction does not take the remainder from HI: %q", added)
			}
			fn, _ := usleepBody(string(files[0].Text))
			if !strings.Contains(fn, "HI, R5") {
				t.Error("the change is outside runtime·usleep")
			}
		})
	}
}

// lineDiff lists the lines only in a and only in b, in order (the files
// differ in lines that moved within one short sequence).
func lineDiff(a, b string) (onlyA, onlyB []string) {
	count := map[string]int{}
	for _, l := range strings.Split(a, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(b, "\n") {
		count[l]--
	}
	for l, n := range count {
		for ; n > 0; n-- {
			onlyA = append(onlyA, l)
		}
		for ; n < 0; n++ {
			onlyB = append(onlyB, l)
		}
	}
	return onlyA, onlyB
}

// TestForRefusesUnknownRuntime: a toolchain whose file lacks the expected
// instructions (a Go that fixed usleep, or rewrote it) is refused in one
// line naming the file; so is one without the file.
func TestForRefusesUnknownRuntime(t *testing.T) {
	real, err := os.ReadFile(filepath.Join(goroot(t), "src", "runtime", "sys_linux_mipsx.s"))
	if err != nil {
		t.Fatal(err)
	}
	upstreamFixed := strings.Replace(string(real), fixes["mipsx"].old, fixes["mipsx"].new, 1)
	tests := []struct {
		name, text string // "" : no file
		want       string
	}{
		{"already fixed", upstreamFixed, "has not the runtime·usleep instructions bootbench corrects"},
		{"no usleep", "TEXT runtime·gettid(SB),NOSPLIT,$0-4\n\tRET\n", "has not the runtime·usleep instructions"},
		{"sequence outside usleep", "TEXT runtime·usleep(SB),NOSPLIT,$28-4\n\tRET\n\nTEXT runtime·other(SB),NOSPLIT,$0\n" + fixes["mipsx"].old, "has not the runtime·usleep instructions"},
		{"no file", "", "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			file := filepath.Join(root, "src", "runtime", "sys_linux_mipsx.s")
			if tt.text != "" {
				os.MkdirAll(filepath.Dir(file), 0o755)
				os.WriteFile(file, []byte(tt.text), 0o644)
			}
			_, err := For(root, "mipsle")
			if err == nil {
				t.Fatal("a runtime nobody checked was accepted")
			}
			if msg := err.Error(); !strings.Contains(msg, tt.want) || !strings.Contains(msg, file) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming %s with %q", msg, file, tt.want)
			}
		})
	}
}

// TestOverlayCorrectsSleeps builds a program that times 100 of the
// runtime's own 1 ms sleeps for big- and little-endian MIPS, with and
// without the overlay, and runs it under QEMU's user-mode emulation: the
// stock runtime's sleeps are over 10 times too short, the corrected ones
// right.
func TestOverlayCorrectsSleeps(t *testing.T) {
	root := goroot(t)
	for _, tt := range []struct{ goarch, qemu string }{{"mips", "qemu-mips"}, {"mipsle", "qemu-mipsel"}, {"mips64le", "qemu-mips64el"}} {
		t.Run(tt.goarch, func(t *testing.T) {
			if _, err := exec.LookPath(tt.qemu); err != nil {
				needs.Unmet(t, tt.qemu+" missing (make deps installs qemu-user)")
			}
			files, err := For(root, tt.goarch)
			if err != nil {
				t.Fatal(err)
			}
			overlay, err := WriteOverlay(t.TempDir(), files)
			if err != nil {
				t.Fatal(err)
			}
			stock := sleepFor(t, tt.goarch, tt.qemu, "")
			fixed := sleepFor(t, tt.goarch, tt.qemu, overlay)
			t.Logf("%s: 100 × runtime.usleep(1000): stock %v, corrected %v", tt.goarch, stock, fixed)
			// Short by 1000×, bounded by the host's timer slack and
			// scheduling: under half of what was asked (the host's
			// refusal threshold) even on a loaded machine.
			if stock > 50*time.Millisecond {
				t.Errorf("stock runtime slept %v: the bug this corrects is not there", stock)
			}
			// At least what was asked; and not a unit off the other
			// way (1000× long would be 100 s). The upper bound leaves
			// room for a host whose two cores run QEMU boards beside
			// this test (make test runs two packages at a time): each
			// of the 100 wake-ups may come late.
			if fixed < 100*time.Millisecond || fixed > time.Second {
				t.Errorf("corrected runtime slept %v for 100 ms", fixed)
			}
		})
	}
}

const probe = `package main

import (
	"fmt"
	"time"
	_ "unsafe"
)

//go:linkname usleep runtime.usleep
func usleep(usec uint32)

func main() {
	start := time.Now()
	for i := 0; i < 100; i++ {
		usleep(1000)
	}
	fmt.Println(time.Since(start).Microseconds())
}
`

// sleepFor builds the probe for goarch (with overlay, when given), runs it
// under qemu and returns what it measured.
func sleepFor(t *testing.T, goarch, qemu, overlay string) time.Duration {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module probe\n\ngo 1.21\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(probe), 0o644)
	args := []string{"build", "-o", "probe"}
	if overlay != "" {
		args = append(args, "-overlay="+overlay)
	}
	build := exec.Command("go", append(args, ".")...)
	build.Dir = dir
	build.Env = userenv.Environ("GOOS=linux", "GOARCH="+goarch, "GOMIPS=softfloat", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build for %s: %v\n%s", goarch, err, out)
	}
	run := exec.Command(qemu, filepath.Join(dir, "probe"))
	// The probe's goroutine sleeps inside runtime.usleep, which the
	// scheduler counts as running: past 10 ms sysmon preempts it with a
	// signal, the signal ends nanosleep early, and usleep does not resume
	// it (measured: some 40 sleeps a second cut short, none with
	// asyncpreemptoff). On a loaded host enough were cut to bring the
	// corrected 100 ms under 64 ms. The runtime's own callers of usleep
	// do not run as preemptible goroutines, so the probe turns it off.
	run.Env = userenv.Environ("GODEBUG=asyncpreemptoff=1")
	out, err := run.Output()
	if err != nil {
		t.Fatalf("%s probe: %v", qemu, err)
	}
	var us int64
	if _, err := fmt.Sscan(strings.TrimSpace(string(out)), &us); err != nil {
		t.Fatalf("probe printed %q", out)
	}
	return time.Duration(us) * time.Microsecond
}
