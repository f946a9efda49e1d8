package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/u-root/mkuimage/cpio"

	"github.com/bootbench/bootbench/internal/debpkg"
	"github.com/bootbench/bootbench/internal/kernels"
)

// A board under its own firmware, simulated as hardware is: a PC whose
// "firmware" is a Debian kernel and an initramfs of Debian's busybox-static
// and nftables that sets its two ports' addresses at boot and leaves a
// shell on its serial console, as an OpenWrt or RouterOS console does. Its
// power switch (command) starts and stops QEMU; its serial console is a
// socat pty pair; its two ports are cabled, through a switch namespace, to
// two host interfaces of the bench host that exist before bootbench
// starts. bootbench netboots nothing for it.

// The firmware's ports and the prompt its console shows.
const (
	fwMACLAN = "52:54:00:bb:07:01"
	fwMACWAN = "52:54:00:bb:07:02"
	fwPrompt = "fw# "
)

// fwModules are what the firmware's kernel loads: its NICs and nf_tables
// with conntrack (crc32c_generic first: conntrack's libcrc32c asks for it).
var fwModules = []string{"virtio_pci", "virtio_net", "crc32c_generic", "nf_tables", "nft_ct"}

// fwInit is the firmware's /init: ports named and addressed by MAC, routing
// on, then a shell on the console.
const fwInit = `#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /tmp /run
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sys /sys
/bin/busybox mount -t devtmpfs dev /dev
/bin/busybox --install -s /bin
export PATH=/bin:/usr/sbin:/usr/bin
for m in /lib/modules/fw/*.ko; do insmod "$m"; done
for i in /sys/class/net/*; do
	case "$(cat "$i/address")" in
	` + fwMACLAN + `) ip link set "${i##*/}" name lan ;;
	` + fwMACWAN + `) ip link set "${i##*/}" name wan ;;
	esac
done
ip addr add 198.18.1.1/24 dev lan
ip addr add 198.18.2.1/24 dev wan
ip link set lan up
ip link set wan up
echo 1 > /proc/sys/net/ipv4/ip_forward
echo "firmware: lan 198.18.1.1, wan 198.18.2.1, forwarding"
export PS1='` + fwPrompt + `'
exec setsid sh -c 'exec sh -i <>/dev/ttyS0 >&0 2>&1'
`

// firmwareImage builds the firmware's initramfs from Debian's packages
// (fetched into the cache) and the kernel's modules, and returns it with
// the kernel.
func firmwareImage(t *testing.T) (kernel, initrd string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	kernel, err := kernels.Debian(ctx, testCache, "", "amd64", "amd64")
	if err != nil {
		t.Fatal(err)
	}
	root, err := debpkg.Sysroot(ctx, testCache, "amd64", "busybox-static", "nftables")
	if err != nil {
		t.Fatal(err)
	}
	mods, err := kernels.Modules(ctx, testCache, kernel, "lib/modules/fw", fwModules)
	if err != nil {
		t.Fatal(err)
	}
	rec := cpio.NewRecorder()
	recs := []cpio.Record{cpio.StaticFile("init", fwInit, 0o755)}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		switch {
		case err != nil:
			return err
		case rel == ".":
			return nil
		case rel == "usr/share" || rel == "usr/lib/x86_64-linux-gnu/gconv" || rel == "init":
			return fs.SkipDir
		}
		r, err := rec.GetRecord(p)
		if err != nil {
			return err
		}
		r.Name = rel
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
		host, img, _ := strings.Cut(m, ":")
		r, err := rec.GetRecord(host)
		if err != nil {
			t.Fatal(err)
		}
		r.Name = img
		recs = append(recs, r)
	}
	initrd = filepath.Join(t.TempDir(), "firmware.cpio")
	f, err := os.Create(initrd)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := cpio.Newc.Writer(f)
	if err := cpio.WriteRecordsAndDirs(w, recs); err != nil {
		t.Fatal(err)
	}
	if err := cpio.WriteTrailer(w); err != nil {
		t.Fatal(err)
	}
	return kernel, initrd
}

// newFirmwareBench is the bench host (namespace) with its two route
// interfaces lan0 and wan0, each cabled through a switch namespace to a
// tap the board's QEMU has a port on, and the board's adapter and power.
func newFirmwareBench(t *testing.T, kernel, initrd string) *simBench {
	sfx := randomSuffix()
	s := &simBench{t: t, ns: "bbsim-" + sfx, dir: simDir(t), sw: "bbsw-" + sfx}
	for _, ns := range []string{s.ns, s.sw} {
		sh(t, "ip", "netns", "add", ns)
		ns := ns
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		sh(t, "ip", "-n", ns, "link", "set", "lo", "up")
	}
	for _, c := range []struct{ host, br, tap string }{{"lan0", "brlan", "fwlan"}, {"wan0", "brwan", "fwwan"}} {
		sh(t, "ip", "-n", s.sw, "link", "add", c.br, "type", "bridge")
		sh(t, "ip", "-n", s.sw, "link", "set", c.br, "up")
		sh(t, "ip", "-n", s.sw, "link", "add", c.br+"-h", "type", "veth", "peer", "name", c.host, "netns", s.ns)
		sh(t, "ip", "-n", s.sw, "link", "set", c.br+"-h", "master", c.br, "up")
		sh(t, "ip", "-n", s.sw, "tuntap", "add", "dev", c.tap, "mode", "tap")
		sh(t, "ip", "-n", s.sw, "link", "set", c.tap, "master", c.br, "up")
	}
	sh(t, "ip", "-n", s.ns, "link", "set", "lan0", "up") // as the bench host has it; wan0 stays down
	// No vnet headers on the board's ports: the host hands it frames a
	// wire carries, not 64 KiB segments.
	s.startAdapter()
	pid := filepath.Join(s.dir, "qemu.pid")
	on := fmt.Sprintf(`#!/bin/sh
# The board's power switch, on: a PC that starts its own firmware.
exec ip netns exec %s qemu-system-x86_64 -accel tcg -M pc -cpu qemu64 -m 256 -display none -vga none -nodefaults \
  -kernel %s -initrd %s -append "console=ttyS0 panic=-1 quiet" -no-reboot \
  -netdev tap,id=l,ifname=fwlan,script=no,downscript=no,vnet_hdr=off -device virtio-net-pci,netdev=l,mac=%s \
  -netdev tap,id=w,ifname=fwwan,script=no,downscript=no,vnet_hdr=off -device virtio-net-pci,netdev=w,mac=%s \
  -chardev tty,id=s0,path=%s -serial chardev:s0 -daemonize -pidfile %s
`, s.sw, kernel, initrd, fwMACLAN, fwMACWAN, s.uart, pid)
	off := offScript(pid)
	os.WriteFile(filepath.Join(s.dir, "on.sh"), []byte(on), 0o755)
	os.WriteFile(filepath.Join(s.dir, "off.sh"), []byte(off), 0o755)
	t.Cleanup(func() { exec.Command(filepath.Join(s.dir, "off.sh")).Run() })
	return s
}

// firmwareInventory is bench.yaml as the board's owner writes it: the
// bench's route interfaces, and the board with image: none and two
// configurations typed at its shell.
func (s *simBench) firmwareInventory() string {
	inv := fmt.Sprintf(`# A board that keeps its own firmware: its console is a shell.
bench:
  interface: bench0
  address: %s
  route:
    client: lan0
    server: wan0
boards:
  fw1:
    profile: pc-x86_64
    image: none
    console: %s
    power: %s
    route_configs:
      plain:
        - {expect: "%[4]s", timeout: 120s}
        - {send: "nft flush ruleset"}
        - {expect: "%[4]s"}
      stateful:
        - {send: "nft add table inet fw"}
        - {expect: "%[4]s"}
        - {send: "nft 'add chain inet fw forward { type filter hook forward priority 0; policy drop; }'"}
        - {expect: "%[4]s"}
        - {send: "nft add rule inet fw forward ct state established,related accept"}
        - {expect: "%[4]s"}
        - {send: "nft add rule inet fw forward iifname lan accept"}
        - {expect: "%[4]s"}
        - {send: "nft list ruleset | grep -c accept"}
        - {expect: "2"}
`, simBenchNet, s.tty, s.commandPower(), fwPrompt)
	path := filepath.Join(s.dir, "bench.yaml")
	if err := os.WriteFile(path, []byte(inv), 0o644); err != nil {
		s.t.Fatal(err)
	}
	return path
}

// TestE2EOwnFirmware runs the route benchmark on a board under its own
// firmware: the baseline and both configurations stored, every size and
// direction, its configurations typed at its console, and nothing
// netbooted: no DHCP, TFTP or HTTP served, no bench NIC touched.
func TestE2EOwnFirmware(t *testing.T) {
	requireSimBench(t)
	parallelE2E(t)
	for _, c := range []string{"iperf3", "ethtool"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("the route benchmark needs %s (make deps installs it)", c)
		}
	}
	start := time.Now()
	kernel, initrd := firmwareImage(t)
	s := newFirmwareBench(t, kernel, initrd)
	inv := s.firmwareInventory()
	db := filepath.Join(t.TempDir(), "results.db")
	r := s.run(db, "run", "--inventory", inv, "--board", "fw1", "--bench", "route", "--route-sizes", "1460", "--seconds", "1")
	t.Logf("bootbench's progress:\n%s", r.stderr)
	if r.code != 0 {
		t.Fatalf("run: exit %d", r.code)
	}
	runs := storedRuns(t, db)
	if len(runs) != 1 || runs[0].Status != "ok" || runs[0].Board != "fw1" {
		t.Fatalf("stored: %+v", runs)
	}
	got := map[string]float64{}
	for _, m := range runs[0].Metrics {
		got[m.Name] = m.Value
	}
	for _, cfg := range []string{"direct", "plain", "stateful"} {
		for _, dir := range []string{"", "-reverse"} {
			for _, name := range []string{"tcp-throughput", "udp-throughput", "udp-loss"} {
				n := name + dir + "@1460/" + cfg
				v, ok := got[n]
				if !ok || (strings.HasSuffix(name, "throughput") && v <= 0) {
					t.Errorf("metric %s: %v (present %v)", n, v, ok)
				}
			}
		}
	}
	for _, cfg := range []string{"plain", "stateful"} {
		if got["tcp-throughput@1460/"+cfg] >= got["tcp-throughput@1460/direct"] {
			t.Errorf("%s: routed %v >= direct %v: the traffic did not go through the board", cfg, got["tcp-throughput@1460/"+cfg], got["tcp-throughput@1460/direct"])
		}
	}
	if len(got) > 3*2*4 {
		t.Errorf("%d metrics, want the host's figures only (no counters, no CPU):\n%v", len(got), got)
	}
	for _, never := range []string{"dhcp", "tftp", "http ", "bench address", "bench0"} {
		if strings.Contains(r.stderr, never) {
			t.Errorf("a board under its own firmware got %q in its run's progress", never)
		}
	}
	show := bootbench(t, db, "results", "show", runs[0].ID, "--transcript")
	for _, want := range []string{"firmware: lan 198.18.1.1", "nft add rule inet fw forward iifname lan accept"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("transcript lacks %q:\n%s", want, show.stdout)
		}
	}
	for iface, state := range map[string]string{"lan0": "state UP", "wan0": "state DOWN"} {
		if out := sh(t, "ip", "-n", s.ns, "link", "show", "dev", iface); !strings.Contains(out, state) {
			t.Errorf("%s afterwards: %s, want it back %s", iface, out, state)
		}
	}
	s.assertBoardOff()
	assertNothingLeft(t, r.stderr)
	t.Logf("took %v", time.Since(start))
}
