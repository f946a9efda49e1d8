package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bootbench/bootbench/adapters/vbench"
	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/internal/testkit/dnsmasqtest"
	"github.com/bootbench/bootbench/internal/testkit/needs"
	"github.com/bootbench/bootbench/internal/testkit/userenv"
)

// TestE2EPiTwinDnsmasq boots the rpi4b-twin the way a Pi user netboots a
// Pi 4 today, with no part of bootbench's server: dnsmasq as Raspberry
// Pi's network boot tutorial configures it, beside a home router's DHCP,
// a TFTP root with the board's serial directory holding stand-in
// firmware, config.txt naming the kernel and initramfs, cmdline.txt, a
// device tree file, Debian's arm64 kernel and bootbench's arm64 image.
// dnsmasq's log shows the ROM's files in its order, and the board
// reports in: benchinit's hello from a Cortex-A72 in the profile's RAM.
func TestE2EPiTwinDnsmasq(t *testing.T) {
	requireBench(t)
	needs.Commands(t, "qemu-system-aarch64")
	dnsmasqtest.Require(t)
	parallelE2E(t)
	p, err := boards.Get("rpi4b-twin")
	if err != nil {
		t.Fatal(err)
	}
	kernel, image := piKernelAndImage(t)
	const run = "pitwin-dnsmasq"
	root, want := piTFTPRoot(t, p.Virtual.Serial, kernel, image,
		"console="+p.Console+",115200 panic=-1 bootbench.run="+run)

	cache := cacheOf(t)
	n, err := vbench.NewNet(context.Background(), cache)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() }) // after the servers in it have ended
	dnsmasqtest.StartRouter(t, n.Name, n.Tap, "198.18.0.10", "198.18.0.10")
	pi := dnsmasqtest.StartPi(t, n.Name, n.Tap, "198.18.0.255", root)

	board := boards.VirtualBoard(p)
	vb := vbench.NewBoard(n, vbench.Machine{Binary: p.Virtual.QEMU, Args: p.Virtual.Args, MAC: board.MAC, Memory: p.RAMMB}, cache)
	vb.ROM, vb.Name, vb.Serial = p.Virtual.ROM, p.Name, p.Virtual.Serial
	hello, took, transcript := bootToHello(t, vb, run, p.BootTimeout)
	t.Logf("power-on to hello: %s", took.Round(100*time.Millisecond))

	got, err := pi.WaitTFTP(len(want), 5*time.Second)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("dnsmasq served, in order:\n%s\nwant:\n%s\n(%v)", strings.Join(got, "\n"), strings.Join(want, "\n"), err)
	}
	if hello == nil {
		t.Fatalf("no hello within %s\nconsole:\n%s\ndnsmasq:\n%s", p.BootTimeout, transcript, pi.Contents())
	}
	if hello.Arch != "arm64" || hello.MemTotalKB <= 0 || hello.MemTotalKB > int64(p.RAMMB)<<10 {
		t.Errorf("hello: arch %s, %d kB; want arm64 in at most %d MiB", hello.Arch, hello.MemTotalKB, p.RAMMB)
	}
	// The kernel prints the CPU's MIDR: 0x410fd08x is Arm's Cortex-A72.
	for _, line := range []string{"TFTP_GET: dc:a6:32:bb:00:b1 198.18.0.1 bb0004b1/start4.elf", "arm_freq=1000: -icount shift=0",
		"Kernel command line: console=ttyAMA0,115200 panic=-1 bootbench.run=" + run, "Booting Linux on physical CPU 0x0000000000 [0x410fd08"} {
		if !strings.Contains(transcript, line) {
			t.Errorf("console lacks %q:\n%s", line, transcript)
		}
	}
}

// piKernelAndImage are Debian's arm64 kernel, fetched as a user fetches
// it, and bootbench's arm64 image, built as a user builds it.
func piKernelAndImage(t *testing.T) (kernel, image string) {
	t.Helper()
	out, err := userenv.Command([]string{"BOOTBENCH_CACHE=" + cacheOf(t)}, "../../scripts/fetch-kernel.sh", "arm64").Output()
	if err != nil {
		t.Fatalf("scripts/fetch-kernel.sh arm64: %v", err)
	}
	kernel = strings.TrimSpace(string(out))
	image = filepath.Join(t.TempDir(), "bootbench-arm64.cpio")
	if r := bootbench(t, filepath.Join(t.TempDir(), "results.db"), "image", "build", "--arch", "arm64", "-o", image); r.code != 0 {
		t.Fatalf("image build: exit %d\n%s", r.code, r.stderr)
	}
	return kernel, image
}

// piTFTPRoot is a TFTP root as a Pi user fills it for a board with serial:
// its directory holds stand-in firmware and device tree, the kernel and
// image, a config.txt naming them and a cmdline.txt. want is what the
// Pi's ROM and firmware fetch, in order.
func piTFTPRoot(t *testing.T, serial, kernel, image, cmdline string) (root string, want []string) {
	t.Helper()
	root = t.TempDir()
	// dnsmasq serves as its own user: the tutorial's chmod 777.
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(root, serial)
	k, i := filepath.Base(kernel), filepath.Base(image)
	files := map[string]string{
		"start4.elf":          "stand-in: the twin runs no VideoCore firmware",
		"fixup4.dat":          "stand-in",
		"bcm2711-rpi-4-b.dtb": "stand-in: virt makes its own device tree",
		"config.txt":          "arm_64bit=1\nenable_uart=1\n[pi4]\nkernel=" + k + "\ninitramfs " + i + " followkernel\narm_freq=1000\n[all]\n",
		"cmdline.txt":         cmdline + "\n",
	}
	os.MkdirAll(dir, 0o755)
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{kernel, image} {
		b, err := os.ReadFile(f)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"start4.elf", "fixup4.dat", "config.txt", "cmdline.txt", "bcm2711-rpi-4-b.dtb", k, i} {
		want = append(want, serial+"/"+f)
	}
	return root, want
}

// bootToHello powers vb on and reads its console until the hello of run,
// or timeout; then powers it off. It returns the hello (nil: none), the
// time from power-on to it, and the console's text.
func bootToHello(t *testing.T, vb *vbench.Board, run string, timeout time.Duration) (*frame.HelloBody, time.Duration, string) {
	t.Helper()
	ctx := context.Background()
	con, err := vb.Console(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer con.Close()
	defer vb.Off(ctx)
	var mu sync.Mutex
	var transcript bytes.Buffer
	hello := make(chan frame.HelloBody, 1)
	go func() {
		c := frame.NewCollector(run)
		sc := bufio.NewScanner(con)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := bytes.TrimRight(sc.Bytes(), "\r")
			mu.Lock()
			transcript.Write(append(line, '\n'))
			mu.Unlock()
			if ev, _ := c.Feed(line); ev == frame.EventHello {
				hello <- c.Result().Hello
				return
			}
		}
	}()
	start := time.Now()
	if err := vb.On(ctx); err != nil {
		t.Fatal(err)
	}
	text := func() string { mu.Lock(); defer mu.Unlock(); return transcript.String() }
	select {
	case h := <-hello:
		return &h, time.Since(start), text()
	case <-time.After(timeout):
		return nil, time.Since(start), text()
	}
}
