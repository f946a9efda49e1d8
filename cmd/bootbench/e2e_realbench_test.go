package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
	"golang.org/x/sys/unix"

	"github.com/bootbench/bootbench/internal/testkit/needs"
	"github.com/bootbench/bootbench/internal/testkit/userenv"
)

// A simulated bench gives bootbench exactly what a real bench gives it, and
// nothing more: a network namespace (the bench host) holding an interface
// bootbench did not create, a serial adapter at a stable path (one end of
// a socat pty pair; the board's UART is the other end), and a power switch
// whose "on" starts the board (a QEMU PC netbooting from that interface)
// and whose "off" stops it. bootbench runs inside the namespace, as it
// would on the bench host.
type simBench struct {
	t     *testing.T
	ns    string // the bench host's network namespace
	dir   string
	tty   string // the adapter, as bootbench sees it
	uart  string // the board's end
	mac   string
	socat *exec.Cmd
	sw    string // the switch's namespace, when the segment has one
	rival string // the namespace of the segment's other DHCP host, when it has one
	iface string // the bench NIC, as the inventory names it
	tap   string // the board's cable: bench0 itself, or a switch port
	// nics are more of the board's NICs, as QEMU options, written into
	// its power switch's on.
	nics string
}

const (
	simMAC      = "52:54:00:bb:05:20"
	simBenchNet = "198.18.5.1/24"
	simBoardIP  = "198.18.5.20"
)

func requireSimBench(t *testing.T) {
	t.Helper()
	requireBench(t)
	if missing := needs.Missing("socat", "pdudaemon", "dnsmasq"); len(missing) > 0 {
		needs.Unmet(t, "simulated bench needs "+strings.Join(missing, ", ")+" (make deps installs them)")
	}
}

func randomSuffix() string {
	var b [3]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// sh runs a command and fails the test if it fails.
func sh(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// newSimBench makes the bench host with a tap bench0 that the board's QEMU
// attaches to, optionally already holding bootbench's address.
func newSimBench(t *testing.T, withAddress bool) *simBench {
	s := &simBench{t: t, ns: "bbsim-" + randomSuffix(), dir: simDir(t), mac: simMAC, iface: "bench0", tap: "bench0"}
	sh(t, "ip", "netns", "add", s.ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", s.ns).Run() })
	sh(t, "ip", "-n", s.ns, "link", "set", "lo", "up")
	sh(t, "ip", "-n", s.ns, "tuntap", "add", "dev", "bench0", "mode", "tap")
	sh(t, "ip", "-n", s.ns, "link", "set", "bench0", "up")
	if withAddress {
		sh(t, "ip", "-n", s.ns, "addr", "add", simBenchNet, "dev", "bench0")
	}
	s.startAdapter()
	s.writePowerScripts("ip netns exec " + s.ns)
	return s
}

// simDir is a directory whose path socat's address syntax can carry (a
// subtest's TempDir has the test's name, commas and all).
func simDir(t *testing.T) string {
	d, err := os.MkdirTemp("", "bbsim-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// startAdapter is the USB serial adapter: a pty pair that exists before
// the board is powered, bootbench's end at a stable path.
func (s *simBench) startAdapter() {
	t := s.t
	s.tty, s.uart = filepath.Join(s.dir, "ttyUSB0"), filepath.Join(s.dir, "board-uart")
	s.socat = exec.Command("socat", "PTY,link="+s.tty+",raw,echo=0", "PTY,link="+s.uart+",raw,echo=0")
	if err := s.socat.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.socat.Process.Kill(); s.socat.Wait() })
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(s.uart); err == nil {
			if _, err := os.Stat(s.tty); err == nil {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("socat made no pty pair")
}

// writePowerScripts writes on.sh and off.sh: the board's power switch. On
// starts a PC (SeaBIOS, iPXE NIC ROM, console on its UART) on the tap; off
// stops it. netns is the prefix that runs QEMU where the tap is.
func (s *simBench) writePowerScripts(netns string) {
	sercon := filepath.Join(s.dir, "sercon-port")
	os.WriteFile(sercon, []byte{0xf8, 0x03}, 0o644) // SeaBIOS's console on COM1, as the PC's setup would
	pid := filepath.Join(s.dir, "qemu.pid")
	on := fmt.Sprintf(`#!/bin/sh
# The board's power switch, on: a PC that netboots from its NIC.
exec %s qemu-system-x86_64 -accel tcg -M pc -cpu qemu64 -m 512 -display none -vga none \
  -netdev tap,id=n0,ifname=%s,script=no,downscript=no -device virtio-net-pci,netdev=n0,mac=%s%s \
  -chardev tty,id=s0,path=%s -serial chardev:s0 -boot n \
  -fw_cfg name=etc/sercon-port,file=%s -daemonize -pidfile %s
`, netns, s.tap, s.mac, s.nics, s.uart, sercon, pid)
	off := offScript(pid)
	os.WriteFile(filepath.Join(s.dir, "on.sh"), []byte(on), 0o755)
	os.WriteFile(filepath.Join(s.dir, "off.sh"), []byte(off), 0o755)
	s.t.Cleanup(func() { exec.Command(filepath.Join(s.dir, "off.sh")).Run() })
}

// running is a process that has not exited (a zombie has).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	return err == nil && !regexp.MustCompile(`(?m)^State:\s*Z`).Match(b)
}

// offScript is a board's power switch, off, for a QEMU started with
// -daemonize -pidfile pidfile: it stops QEMU and returns once it is gone.
// A QEMU that has exited is gone, though it stays a zombie until init
// reaps it (which some hosts' init does only every few seconds): its
// tap and pty are closed by then, as a board's are once its power is cut.
func offScript(pidfile string) string {
	return fmt.Sprintf(`#!/bin/sh
# The board's power switch, off.
[ -f %[1]s ] || exit 0
pid=$(cat %[1]s)
running() { [ -n "$pid" ] && [ -e /proc/$pid ] && ! grep -q '^State:[[:space:]]*Z' /proc/$pid/status 2>/dev/null; }
kill "$pid" 2>/dev/null
for i in $(seq 50); do running || break; sleep 0.1; done
kill -9 "$pid" 2>/dev/null
rm -f %[1]s
`, pidfile)
}

// inventory writes bench.yaml with board pc1 and the given power entry.
func (s *simBench) inventory(power string) string {
	inv := fmt.Sprintf(`# A simulated bench: one PC on bench0, its console on a USB serial adapter.
bench:
  interface: %s
  address: %s
boards:
  pc1:
    profile: pc-x86_64
    mac: "%s"
    address: %s
    console: %s
    power: %s
`, s.iface, simBenchNet, s.mac, simBoardIP, s.tty, power)
	path := filepath.Join(s.dir, "bench.yaml")
	if err := os.WriteFile(path, []byte(inv), 0o644); err != nil {
		s.t.Fatal(err)
	}
	return path
}

func (s *simBench) commandPower() string {
	return fmt.Sprintf(`{driver: command, on: "%s", off: "%s"}`, filepath.Join(s.dir, "on.sh"), filepath.Join(s.dir, "off.sh"))
}

// run runs bootbench inside the bench host's namespace.
func (s *simBench) run(db string, args ...string) result {
	return bootbenchIn(s.t, s.ns, db, args...)
}

// addrs is what bench0 holds, to compare before and after.
func (s *simBench) addrs() string {
	out := sh(s.t, "ip", "-n", s.ns, "-o", "-4", "addr", "show", "dev", s.iface)
	var a []string
	for _, f := range strings.Fields(out) {
		if strings.Contains(f, "/") && net.ParseIP(strings.Split(f, "/")[0]) != nil {
			a = append(a, f)
		}
	}
	return strings.Join(a, " ")
}

// assertBoardOff checks the power switch left no board running and the
// adapter's lock was released.
func (s *simBench) assertBoardOff() {
	t := s.t
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(s.dir, "qemu.pid")); err == nil {
		if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 0 && running(pid) {
			t.Errorf("the board's QEMU (pid %d) is still running", pid)
		}
	}
	dev, err := filepath.EvalSymlinks(s.tty)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"/run/lock", "/var/lock"} {
		lock := filepath.Join(dir, "LCK.."+strings.ReplaceAll(strings.TrimPrefix(dev, "/dev/"), "/", "_"))
		if _, err := os.Stat(lock); err == nil {
			t.Errorf("console lock %s left behind", lock)
		}
	}
}

type storedRun struct {
	ID               string          `json:"id"`
	Board            string          `json:"board"`
	ClockMHz         int             `json:"clock_mhz"`
	ClockReportedMHz int             `json:"clock_reported_mhz"`
	ClockCheck       string          `json:"clock_check"`
	Status           string          `json:"status"`
	Reason           string          `json:"reason"`
	Hello            json.RawMessage `json:"hello"`
	Metrics          []struct {
		Name  string  `json:"name"`
		Value float64 `json:"value"`
	} `json:"metrics"`
}

func storedRuns(t *testing.T, db string) []storedRun {
	t.Helper()
	return exportedRuns[storedRun](t, db)
}

// exportedRuns are the store's runs as the JSON export gives them, read
// into what a test looks at.
func exportedRuns[R any](t *testing.T, db string) []R {
	t.Helper()
	r := bootbench(t, db, "results", "export", "--format", "json")
	var e struct{ Runs []R }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &e) != nil {
		t.Fatalf("export: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	return e.Runs
}

func assertOneOK(t *testing.T, db string, r result) {
	t.Helper()
	t.Logf("bootbench's progress:\n%s", r.stderr)
	if r.code != 0 {
		t.Fatalf("bootbench run: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	runs := storedRuns(t, db)
	if len(runs) != 1 || runs[0].Board != "pc1" || runs[0].Status != "ok" || len(runs[0].Metrics) < 12 {
		t.Fatalf("stored: %+v\nstderr:\n%s", runs, r.stderr)
	}
}

// TestE2ESimulatedBench runs a board bootbench did not create, the way a
// user runs one on a real bench, with each power switch.
func TestE2ESimulatedBench(t *testing.T) {
	requireSimBench(t)
	parallelE2E(t)
	t.Run("command power, bench address added and removed", func(t *testing.T) {
		s := newSimBench(t, false)
		inv := s.inventory(s.commandPower())
		before := s.addrs()
		db := filepath.Join(t.TempDir(), "results.db")
		r := s.run(db, append([]string{"run", "--inventory", inv, "--board", "pc1"}, quickSuite...)...)
		assertOneOK(t, db, r)
		for _, want := range []string{"added 198.18.5.1/24 to bench0", "removed 198.18.5.1/24 from bench0", "dhcp-offer to " + simMAC + ": " + simBoardIP, "board up: amd64", "power    on: command"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("progress lacks %q:\n%s", want, r.stderr)
			}
		}
		if after := s.addrs(); after != before {
			t.Errorf("bench0's addresses: %q before, %q after", before, after)
		}
		s.assertBoardOff()
		assertNothingLeft(t, r.stderr)
	})
	t.Run("pdudaemon power, bench address kept", func(t *testing.T) {
		s := newSimBench(t, true)
		url := startPDUDaemon(t, s)
		inv := s.inventory(fmt.Sprintf(`{driver: pdudaemon, url: "%s", pdu: bench, port: 1}`, url))
		before := s.addrs()
		db := filepath.Join(t.TempDir(), "results.db")
		r := s.run(db, append([]string{"run", "--inventory", inv, "--board", "pc1"}, quickSuite...)...)
		assertOneOK(t, db, r)
		if strings.Contains(r.stderr, "added 198.18.5.1/24") {
			t.Errorf("bootbench added an address bench0 already had:\n%s", r.stderr)
		}
		if after := s.addrs(); after != before || before != simBenchNet {
			t.Errorf("bench0's addresses: %q before, %q after", before, after)
		}
		s.assertBoardOff()
		assertNothingLeft(t, r.stderr)
	})
	t.Run("the console is the run's while it runs", func(t *testing.T) {
		s := newSimBench(t, true)
		inv := s.inventory(s.commandPower())
		db := filepath.Join(t.TempDir(), "results.db")
		cmd := userenv.Command([]string{"BOOTBENCH_CACHE=" + cacheOf(t)}, "ip", "netns", "exec", s.ns, bootbenchBin, "run", "--inventory", inv, "--board", "pc1", "--seconds", "0.1", "--db", db)
		var progress lockedBuffer
		cmd.Stderr = &progress
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Wait()
		deadline := time.Now().Add(60 * time.Second)
		for !strings.Contains(progress.String(), "power    on:") {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("the run never powered the board on:\n%s", progress.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
		start := time.Now()
		r := bootbench(t, db, "console", "pc1", "--inventory", inv)
		took := time.Since(start)
		want := fmt.Sprintf("is in use by pid %d (bootbench run --inventory %s --board pc1", cmd.Process.Pid, inv)
		if r.code != 2 || !strings.Contains(r.stderr, want) || took > 3*time.Second {
			t.Errorf("second console: exit %d after %v, stderr %q; want exit 2 at once naming %q", r.code, took, r.stderr, want)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("the run: %v\n%s", err, progress.String())
		}
		s.assertBoardOff()
	})
	t.Run("a clock the board cannot take", func(t *testing.T) {
		s := newSimBench(t, true)
		inv := s.inventory(s.commandPower())
		db := filepath.Join(t.TempDir(), "results.db")
		r := s.run(db, append([]string{"run", "--inventory", inv, "--board", "pc1", "--clock", "800"}, quickSuite...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "clock-mismatch: asked for 800 MHz, but the board reports no clock") {
			t.Fatalf("exit %d, want 1 with the clock mismatch\nstderr:\n%s", r.code, r.stderr)
		}
		runs := storedRuns(t, db)
		if len(runs) != 1 || runs[0].Status != "clock-mismatch" || runs[0].ClockMHz != 800 || runs[0].ClockCheck != "mismatch" || len(runs[0].Metrics) != 0 {
			t.Errorf("stored: %+v", runs)
		}
		s.assertBoardOff()
	})
}

// startPDUDaemon runs Debian's pdudaemon in the bench host's namespace,
// its localcmdline driver switching the board with on.sh and off.sh, and
// returns its URL.
func startPDUDaemon(t *testing.T, s *simBench) string {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0") // a free port number; the daemon listens in the namespace
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	conf := fmt.Sprintf(`{"daemon": {"hostname": "127.0.0.1", "port": %d, "listener": "http", "logging_level": "INFO"},
 "pdus": {"bench": {"driver": "localcmdline", "cmd_on": "%s %%s", "cmd_off": "%s %%s"}}}`,
		port, filepath.Join(s.dir, "on.sh"), filepath.Join(s.dir, "off.sh"))
	confPath := filepath.Join(s.dir, "pdudaemon.conf")
	os.WriteFile(confPath, []byte(conf), 0o644)
	var log bytes.Buffer
	cmd := exec.Command("ip", "netns", "exec", s.ns, "pdudaemon", "--conf", confPath)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("pdudaemon said:\n%s", log.String())
		}
	})
	for i := 0; i < 100; i++ {
		if exec.Command("ip", "netns", "exec", s.ns, "bash", "-c", fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", port)).Run() == nil {
			return fmt.Sprintf("http://127.0.0.1:%d", port)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("pdudaemon did not listen on port %d:\n%s", port, log.String())
	return ""
}

// newSwitchedBench makes a bench whose segment is a switch: the bench
// host's NIC bench0, the board, and a host running dnsmasq as the segment's
// own DHCP server, each in its own namespace, all on one bridge. A rival
// server must be on the wire, not on bootbench's host: what bootbench sends
// out of bench0 reaches it only through the switch.
func newSwitchedBench(t *testing.T, withRival bool) *simBench {
	sfx := randomSuffix()
	s := &simBench{t: t, ns: "bbsim-" + sfx, dir: simDir(t), mac: simMAC, iface: "bench0", tap: "board0", sw: "bbsw-" + sfx}
	s.rival = "bbrv-" + sfx
	sw, rival := s.sw, s.rival
	for _, ns := range []string{s.ns, sw, rival} {
		sh(t, "ip", "netns", "add", ns)
		ns := ns
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		sh(t, "ip", "-n", ns, "link", "set", "lo", "up")
	}
	sh(t, "ip", "-n", sw, "link", "add", "br0", "type", "bridge")
	sh(t, "ip", "-n", sw, "link", "set", "br0", "up")
	cable := func(port, peer, peerNS string) {
		sh(t, "ip", "-n", sw, "link", "add", port, "type", "veth", "peer", "name", peer, "netns", peerNS)
		sh(t, "ip", "-n", sw, "link", "set", port, "master", "br0", "up")
		sh(t, "ip", "-n", peerNS, "link", "set", peer, "up")
	}
	cable("sw-host", "bench0", s.ns)
	cable("sw-rival", "rival0", rival)
	sh(t, "ip", "-n", rival, "addr", "add", "198.18.5.2/24", "dev", "rival0")
	if withRival {
		s.startRival(rival)
	}
	s.cableBoard()
	return s
}

// cableBoard plugs s's board into the switch: a tap port on the bridge,
// its serial adapter and its power switch.
func (s *simBench) cableBoard() {
	sh(s.t, "ip", "-n", s.sw, "tuntap", "add", "dev", s.tap, "mode", "tap")
	sh(s.t, "ip", "-n", s.sw, "link", "set", s.tap, "master", "br0", "up")
	s.startAdapter()
	s.writePowerScripts("ip netns exec " + s.sw)
}

// addBoard is another board on s's switch, with its own adapter and power.
func (s *simBench) addBoard(n int, mac string) *simBench {
	b := &simBench{t: s.t, ns: s.ns, sw: s.sw, dir: simDir(s.t), mac: mac, iface: s.iface, tap: fmt.Sprintf("board%d", n)}
	b.cableBoard()
	return b
}

// startRival runs dnsmasq as the segment's DHCP server in namespace ns.
func (s *simBench) startRival(ns string) {
	t := s.t
	var log bytes.Buffer
	cmd := exec.Command("ip", "netns", "exec", ns, "dnsmasq", "--no-daemon", "--conf-file=/dev/null",
		"--port=0", "--user=root", "--bind-interfaces", "--interface=rival0", "--log-dhcp", "--log-facility=-",
		"--dhcp-range=198.18.5.100,198.18.5.150,255.255.255.0", "--dhcp-leasefile="+filepath.Join(s.dir, "leases"),
		"--pid-file="+filepath.Join(s.dir, "dnsmasq.pid"))
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("dnsmasq said:\n%s", log.String())
		}
	})
}

// TestE2ERivalDHCP: on a segment with its own DHCP server, bootbench refuses
// to be a second one and says what to do; with --proxy it boots the board
// while that server hands out the address.
func TestE2ERivalDHCP(t *testing.T) {
	requireSimBench(t)
	parallelE2E(t)
	s := newSwitchedBench(t, true)
	inv := s.inventory(s.commandPower())
	db := filepath.Join(t.TempDir(), "results.db")

	start := time.Now()
	r := s.run(db, append([]string{"run", "--inventory", inv, "--board", "pc1"}, quickSuite...)...)
	if r.code != 2 || !strings.Contains(r.stderr, "another DHCP server answers on the bench segment") ||
		!strings.Contains(r.stderr, "198.18.5.2") || !strings.Contains(r.stderr, "--proxy") {
		t.Fatalf("full mode next to dnsmasq: exit %d, want 2 naming the server and --proxy\nstderr:\n%s", r.code, r.stderr)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("refusing took %v", d)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "qemu.pid")); err == nil {
		t.Error("the board was powered on although bootbench refused to serve")
	}
	if runs := storedRuns(t, db); len(runs) != 0 {
		t.Errorf("a refused bench stored runs: %+v", runs)
	}

	r = s.run(db, append([]string{"run", "--inventory", inv, "--board", "pc1", "--proxy"}, quickSuite...)...)
	assertOneOK(t, db, r)
	if !strings.Contains(r.stderr, "proxy-offer to "+simMAC) || !strings.Contains(r.stderr, "proxyDHCP+TFTP+HTTP on bench0") {
		t.Errorf("progress shows no proxyDHCP:\n%s", r.stderr)
	}
	show := bootbench(t, db, "results", "show", storedRuns(t, db)[0].ID, "--transcript")
	if !strings.Contains(show.stdout, "net0: 198.18.5.1") || strings.Contains(show.stdout, "net0: "+simBoardIP+"/") {
		t.Errorf("the board's address did not come from dnsmasq's range:\n%s", show.stdout)
	}
	// iPXE shows the download's progress when it takes a while (23%, backspaces, 53%... ok).
	if !regexp.MustCompile(`http://198\.18\.5\.1/pc1/vmlinuz\.\.\.[ 0-9%\x08]* ok`).MatchString(show.stdout) {
		t.Errorf("the board did not load from bootbench:\n%s", show.stdout)
	}
	s.assertBoardOff()
	assertNothingLeft(t, r.stderr)
}

// TestE2ERivalDHCPAfterQuietVerdict: a command that starts minutes after
// the segment was heard quiet switches its board on while it listens
// again, so the real bench costs no 4 s per command; a DHCP server heard
// then ends the run at once: the board is switched off, nothing of the
// run is stored, and the command refuses as it would have before power-on.
func TestE2ERivalDHCPAfterQuietVerdict(t *testing.T) {
	requireSimBench(t)
	parallelE2E(t)
	s := newSwitchedBench(t, false)
	inv := s.inventory(s.commandPower())
	db := filepath.Join(t.TempDir(), "results.db")
	args := append([]string{"run", "--inventory", inv, "--board", "pc1"}, quickSuite...)

	first := s.run(db, args...)
	assertOneOK(t, db, first)
	if strings.Contains(first.stderr, "switched on meanwhile") {
		t.Errorf("the first command on a segment never heard switched the board on before the verdict:\n%s", first.stderr)
	}

	// Within minutes of that quiet verdict: switched on at once, stored.
	second := s.run(db, args...)
	if second.code != 0 || !strings.Contains(second.stderr, "switched on meanwhile") || len(storedRuns(t, db)) != 2 {
		t.Fatalf("a command on a segment heard quiet minutes ago: exit %d, %d runs stored; want it switched on before the verdict and stored\n%s", second.code, len(storedRuns(t, db)), second.stderr)
	}
	on, verdict := strings.Index(second.stderr, "power    on:"), strings.Index(second.stderr, "watching for one that starts")
	if on < 0 || verdict < 0 || on > verdict {
		t.Errorf("want the board switched on before the verdict:\n%s", second.stderr)
	}

	s.startRival(s.rival)
	start := time.Now()
	r := s.run(db, args...)
	if r.code != 2 || !strings.Contains(r.stderr, "another DHCP server answers on the bench segment") ||
		!strings.Contains(r.stderr, "198.18.5.2") || !strings.Contains(r.stderr, "switched on before this verdict, and is off again); nothing of the run was stored") {
		t.Fatalf("a rival heard after power-on: exit %d, want 2 naming the server\nstderr:\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"switched on meanwhile", "power    on:", "refused: another DHCP server"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, r.stderr)
		}
	}
	if n := strings.Count(r.stderr, "for another DHCP server"); n != 1 {
		t.Errorf("%d probe lines, want 1:\n%s", n, r.stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("refusing took %v", d)
	}
	if runs := storedRuns(t, db); len(runs) != 2 {
		t.Errorf("stored %d runs, want the first two commands' alone: %+v", len(runs), runs)
	}
	s.assertBoardOff()
	assertNothingLeft(t, r.stderr)

	// The rival is remembered: the next command waits for its verdict
	// before power-on again, and refuses without switching the board on.
	r = s.run(db, args...)
	if r.code != 2 || strings.Contains(r.stderr, "switched on meanwhile") || strings.Contains(r.stderr, "power    on:") {
		t.Errorf("after a rival was heard: exit %d, want 2 before power-on\nstderr:\n%s", r.code, r.stderr)
	}
}

// TestE2ERivalDHCPAfterProbe: a DHCP server that starts on the segment
// after serve's probe found none is reported when it offers, by its
// address, without a board booting: a client's DISCOVER (broadcast flag
// set, so dnsmasq broadcasts its offer) from the switch makes it offer.
func TestE2ERivalDHCPAfterProbe(t *testing.T) {
	requireSimBench(t)
	parallelE2E(t)
	s := newSwitchedBench(t, false)
	inv := serveInventory(s, map[string]*simBench{"pc1": s}, map[string]string{"pc1": simBoardIP})
	db := filepath.Join(t.TempDir(), "results.db")
	cmd, out, errb := startServe(t, s, db, "--inventory", inv, "--log", "text")
	waitFor(t, 30*time.Second, "the probe's verdict", func() bool { return strings.Contains(out.String(), "watching for one that starts") }, out, errb)
	if n := strings.Count(out.String(), "for another DHCP server"); n != 1 {
		t.Errorf("%d probe lines, want 1:\n%s", n, out.String())
	}

	s.startRival(s.rival)
	deadline := time.Now().Add(20 * time.Second)
	const want = "another DHCP server at 198.18.5.2 offered 198.18.5."
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no report of the rival's offer:\n%s\n---\n%s", out.String(), errb.String())
		}
		// dnsmasq pings an address for 3 s before it offers it; the
		// DISCOVER is sent again until the offer is seen.
		inNamespace(t, s.sw, func() { discoverFrom(t, "br0", 2*time.Second) })
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve after Ctrl-C: %v\n%s", err, errb.String())
	}
	if n := strings.Count(out.String(), "another DHCP server at"); n != 1 {
		t.Errorf("%d reports of the rival, want 1:\n%s", n, out.String())
	}
}

// discoverFrom sends a DHCPDISCOVER with the broadcast flag from iface and
// waits up to wait for an offer (one is not needed: the test reads serve's).
func discoverFrom(t *testing.T, iface string, wait time.Duration) {
	t.Helper()
	c, err := nclient4.New(iface, nclient4.WithTimeout(wait), nclient4.WithRetry(1))
	if err != nil {
		t.Error(err) // on inNamespace's goroutine: no Fatal
		return
	}
	defer c.Close()
	c.DiscoverOffer(context.Background(), dhcpv4.WithBroadcast(true))
}

// inNamespace runs fn on a thread in network namespace ns.
func inNamespace(t *testing.T, ns string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		f, err := os.Open("/run/netns/" + ns)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			t.Error(err)
			return
		}
		fn()
	}()
	<-done
}
