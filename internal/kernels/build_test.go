package kernels

import (
	"bufio"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/internal/testkit/needs"
	"github.com/bootbench/bootbench/internal/testkit/userenv"
	"github.com/u-root/mkuimage/cpio"
)

// bootinitMarker is testdata/bootinit's Marker.
const bootinitMarker = "BOOTBENCH-KERNEL-INIT"

// requireBoot checks what building variant v and booting it need.
func requireBoot(t *testing.T, v Variant, qemu string) {
	t.Helper()
	if testing.Short() && !needs.E2E() {
		t.Skip("builds a kernel and boots QEMU; skipped with -short")
	}
	if missing := needs.Missing(qemu, "go", "apt-get", "apt-cache", "dpkg-deb"); len(missing) > 0 {
		needs.Unmet(t, "not found: "+strings.Join(missing, ", ")+" (make deps installs what is missing)")
	}
	if err := buildTools(specs[v]); err != nil {
		needs.Unmet(t, err.Error()+" (make deps installs what is missing)")
	}
}

// testCache is the user's bootbench cache, where a kernel built once
// stays for every later test and run.
func testCache(t *testing.T) string {
	if c := os.Getenv("BOOTBENCH_CACHE"); c != "" {
		return c
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "bootbench")
}

// qemuBoard is how a variant is booted (QEMU's binary, machine, CPU and
// the kernel's console), what /init it runs (built for goarch and gomips,
// packed as initrd), and what it must show: its image's format (check),
// the byte order /init finds, and fields /proc/cpuinfo has.
type qemuBoard struct {
	qemu, machine, cpu, console string
	goarch, gomips, initrd      string
	check                       func(t *testing.T, kernel string)
	order                       string
	cpuinfo                     map[string]string
}

// boardOf is how each variant is booted and what it must show. The
// big-endian Malta's /init is built softfloat, as bootbench's images are;
// the little-endian one's hardfloat, as Debian's mipsel programs are,
// whose floating-point instructions the kernel runs or emulates.
var boardOf = map[Variant]qemuBoard{
	MaltaBE: {"qemu-system-mips", "malta", "24Kc", "ttyS0", "mips", "softfloat", "cpio.gz",
		mipsELF(elf.ELFDATA2MSB), "big", maltaCPU},
	MaltaLE: {"qemu-system-mipsel", "malta", "24Kc", "ttyS0", "mipsle", "hardfloat", "cpio.xz",
		mipsELF(elf.ELFDATA2LSB), "little", maltaCPU},
	PC: {"qemu-system-x86_64", "pc", "qemu64", "ttyS0", "amd64", "", "cpio.gz",
		magicAt(0x202, "HdrS"), "little", map[string]string{"model name": "QEMU Virtual CPU"}},
}

// maltaCPU is what /proc/cpuinfo says of a 24Kc on a Malta.
var maltaCPU = map[string]string{"system type": "MIPS Malta", "cpu model": "24Kc", "isa": "mips32r2"}

// TestBuiltBoots builds each variant (or takes it from the cache), checks
// its image's format (a MIPS ELF of the variant's byte order, an x86
// bzImage), and boots it on its QEMU machine: the kernel
// must unpack the initramfs, run a Go program as /init, let it sleep and
// compute in floating point, say what the CPU is, and power off.
func TestBuiltBoots(t *testing.T) {
	for _, v := range Variants {
		t.Run(string(v), func(t *testing.T) {
			b := boardOf[v]
			requireBoot(t, v, b.qemu)
			kernel := buildForTest(t, v)
			b.check(t, kernel)
			initrd := testInitramfs(t, b.goarch, b.gomips, b.initrd)
			con, took := boot(t, b, kernel, initrd, nil, "", 3*time.Minute)
			t.Logf("%s: /init ran %v after QEMU started: %s", v, took.Round(10*time.Millisecond), con.marker)
			if want := "byteorder=" + b.order; con.field("byteorder") != b.order {
				t.Errorf("/init said %q, want %s", con.marker, want)
			}
			if slept, err := strconv.ParseFloat(con.field("slept"), 64); err != nil || slept < 0.1 || slept > 5 {
				t.Errorf("/init slept 100 ms, and its clock says %q (%v)", con.field("slept"), err)
			}
			if want := fmt.Sprint(sumOfInverseSquares()); con.field("float") != want {
				t.Errorf("/init computed %q, want %s", con.field("float"), want)
			}
			for field, want := range b.cpuinfo {
				if got := con.cpuinfo[field]; !strings.Contains(got, want) {
					t.Errorf("/proc/cpuinfo %s: %q, want %q in it", field, got, want)
				}
			}
		})
	}
}

// buildForTest is Built within the test's time, logging what it says.
func buildForTest(t *testing.T, v Variant) string {
	t.Helper()
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-30*time.Second))
		defer cancel()
	}
	start := time.Now()
	kernel, err := Built(ctx, testCache(t), v, func(s string) { t.Log(s) })
	if ctx.Err() != nil {
		t.Fatalf("%v: the test's time ran out (a first build takes minutes per variant: go test -timeout 30m; make test allows 60m)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(kernel)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s, %.1f MiB, in %v", v, kernel, float64(st.Size())/(1<<20), time.Since(start).Round(time.Millisecond))
	return kernel
}

// mipsELF checks that a kernel is a MIPS executable of byte order data.
func mipsELF(data elf.Data) func(t *testing.T, kernel string) {
	return func(t *testing.T, kernel string) {
		t.Helper()
		f, err := elf.Open(kernel)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if f.Data != data || f.Machine != elf.EM_MIPS || f.Type != elf.ET_EXEC {
			t.Errorf("%s: ELF %v %v %v, want %v %v %v", kernel, f.Data, f.Machine, f.Type, data, elf.EM_MIPS, elf.ET_EXEC)
		}
	}
}

// magicAt checks that a kernel image has magic at offset: the boot
// protocol's mark of an image a loader can start (x86's setup header).
func magicAt(offset int64, magic string) func(t *testing.T, kernel string) {
	return func(t *testing.T, kernel string) {
		t.Helper()
		f, err := os.Open(kernel)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		got := make([]byte, len(magic))
		if _, err := f.ReadAt(got, offset); err != nil || string(got) != magic {
			t.Errorf("%s: %q at %#x (%v), want %q", kernel, got, offset, err, magic)
		}
	}
}

// sumOfInverseSquares is what testdata/bootinit's float computes.
func sumOfInverseSquares() float64 {
	x := 0.0
	for i := 1; i <= 10; i++ {
		x += 1 / float64(i*i)
	}
	return x
}

// testInitramfs builds testdata/bootinit for goarch and gomips and packs
// it as the /init of an initramfs in format (initramfs.Formats).
func testInitramfs(t *testing.T, goarch, gomips, format string) string {
	t.Helper()
	dir := t.TempDir()
	initBin := filepath.Join(dir, "init")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", initBin, "./testdata/bootinit")
	build.Env = userenv.Environ("GOOS=linux", "GOARCH="+goarch, "GOMIPS="+gomips, "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build testdata/bootinit: %v\n%s", err, out)
	}
	data, err := os.ReadFile(initBin)
	if err != nil {
		t.Fatal(err)
	}
	archive := newcArchive(t,
		cpio.Directory("dev", 0o755),
		cpio.CharDev("dev/console", 0o600, 5, 1),
		cpio.Directory("proc", 0o555),
		cpio.StaticRecord(data, cpio.Info{Name: "init", Mode: cpio.S_IFREG | 0o755}),
	)
	packed, err := initramfs.Compress(archive, format)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "initramfs."+format)
	if err := os.WriteFile(path, packed, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func newcArchive(t *testing.T, recs ...cpio.Record) []byte {
	t.Helper()
	var b strings.Builder
	w := cpio.Newc.Writer(&b)
	if err := cpio.WriteRecordsAndDirs(w, recs); err != nil {
		t.Fatal(err)
	}
	if err := cpio.WriteTrailer(w); err != nil {
		t.Fatal(err)
	}
	return []byte(b.String())
}

// console is what a boot showed: /init's marker line, /proc/cpuinfo as
// field → value, and every line with the time it came after QEMU's start,
// for an error message.
type console struct {
	marker  string
	cpuinfo map[string]string
	log     strings.Builder
}

// boot boots kernel and initrd on board b's machine and CPU, without
// network, with extra QEMU options and the kernel command line params
// after the console's, and returns what the console showed once /init is
// done, and how long after QEMU's start /init spoke. A boot that takes
// longer than limit fails.
func boot(t *testing.T, b qemuBoard, kernel, initrd string, extra []string, params string, limit time.Duration) (*console, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	args := append([]string{"-accel", "tcg", "-M", b.machine, "-cpu", b.cpu, "-m", "256",
		"-nographic", "-no-reboot", "-monitor", "none", "-serial", "stdio", "-nic", "none",
		"-kernel", kernel, "-initrd", initrd, "-append", strings.TrimSpace("console=" + b.console + " " + params + " panic=-1")}, extra...)
	cmd := exec.CommandContext(ctx, b.qemu, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	con, took := readConsole(stdout, start)
	err = waitPowerOff(cmd, stdout)
	if con.marker == "" {
		t.Fatalf("no %s from /init (QEMU: %v, %v); console:\n%s", bootinitMarker, err, ctx.Err(), con.log.String())
	}
	if err != nil {
		t.Errorf("QEMU after /init powered off: %v", err)
	}
	return con, took
}

// readConsole reads the console up to /init's end marker.
func readConsole(r io.Reader, start time.Time) (*console, time.Duration) {
	con := &console{cpuinfo: map[string]string{}}
	var took time.Duration
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		fmt.Fprintf(&con.log, "[%6.1fs] %s\n", time.Since(start).Seconds(), line)
		switch {
		case strings.HasPrefix(line, bootinitMarker+"-END"):
			return con, took
		case strings.HasPrefix(line, bootinitMarker):
			con.marker, took = line, time.Since(start)
		case con.marker != "":
			if k, v, ok := strings.Cut(line, ":"); ok {
				con.cpuinfo[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	return con, took
}

// waitPowerOff waits for QEMU to end as /init powers the board off
// (QEMU exits with the board's power-off), and stops it
// if it does not within a while.
func waitPowerOff(cmd *exec.Cmd, stdout io.Reader) error {
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, stdout); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		cmd.Wait()
		return fmt.Errorf("did not power off within 30s")
	}
	return cmd.Wait()
}

// TestMaltaBEVirtualClock boots the big-endian kernel on QEMU's virtual
// clock (-icount shift=N,sleep=off, the RTC on it too: -rtc clock=vm) at
// three shifts: the kernel must reach /init at each, /init's sleep must
// end, and the BogoMIPS must halve with each step, as the guest's
// instructions take twice as long.
//
// The kernel runs with nowait, idling in a loop instead of the CPU's WAIT:
// on QEMU 7.2 a 24Kc that waits with its tick stopped (NO_HZ_IDLE) is
// never woken by its timer under -icount sleep=off, so /init's first
// sleep never ends (measured at shifts 0 and 2; a periodic tick, nohz=off,
// or sleep=on avoid it too, and Debian's periodic-tick kernel hangs so
// now and then).
func TestMaltaBEVirtualClock(t *testing.T) {
	b := boardOf[MaltaBE]
	requireBoot(t, MaltaBE, b.qemu)
	kernel := buildForTest(t, MaltaBE)
	initrd := testInitramfs(t, b.goarch, b.gomips, b.initrd)
	var bogo []float64
	for shift := 0; shift <= 2; shift++ {
		clock := []string{"-icount", fmt.Sprintf("shift=%d,sleep=off", shift), "-rtc", "clock=vm"}
		// malta_hpt (bootbench's patch, patches/malta-hpt.patch): the
		// counter's rate given, not counted against a second of the RTC,
		// which spins on RTC reads that are slow under -icount (a minute
		// or two of the host's time at shift 0). The delay loop is still
		// calibrated against the timer, which is what is checked here.
		con, took := boot(t, b, kernel, initrd, clock, "nowait malta_hpt=166666666", 2*time.Minute)
		var mips float64
		if _, err := fmt.Sscan(con.cpuinfo["BogoMIPS"], &mips); err != nil {
			t.Fatalf("shift %d: BogoMIPS %q: %v", shift, con.cpuinfo["BogoMIPS"], err)
		}
		t.Logf("shift %d: BogoMIPS %.2f, /init after %v (%s s of the guest's clock), wait instruction: %s", shift, mips,
			took.Round(100*time.Millisecond), con.field("uptime"), con.cpuinfo["wait instruction"])
		bogo = append(bogo, mips)
	}
	for i := 1; i < len(bogo); i++ {
		if r := bogo[i-1] / bogo[i]; r < 1.98 || r > 2.02 {
			t.Errorf("BogoMIPS %.2f at shift %d is %.3f times that at shift %d, want 2", bogo[i-1], i-1, r, i)
		}
	}
}

// field reads name=value off /init's marker line.
func (con *console) field(name string) string {
	for _, f := range strings.Fields(con.marker) {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			return v
		}
	}
	return ""
}
