package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/results/store"
)

// emptyStore makes a results store holding no runs.
func emptyStore(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "r.db")
	s, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	return db
}

// TestCLIErrors checks bad input gives exit 2 and one line saying what to do,
// and --help teaches, without any board or root.
func TestCLIErrors(t *testing.T) {
	db := emptyStore(t)
	tests := []struct {
		args     []string
		code     int
		inStderr string
		inStdout string
	}{
		{[]string{}, 2, "no command given", ""},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`, ""},
		{[]string{"run", "--board", "rb9999"}, 2, `unknown board "rb9999": virtual boards: qemu-arm64, qemu-arm64-pxe, qemu-mipsel, qemu-rb450, qemu-rb450g, qemu-routerboot, qemu-wrt54g, qemu-x86_64, qemu-x86_64-uefi, rpi4b-twin; boards on a real bench come from an inventory`, ""},
		{[]string{"run", "--board", "pc-x86_64"}, 2, "pc-x86_64 is a board model, not a board on this bench", ""},
		{[]string{"run", "--clock", "680"}, 2, "board model qemu-x86_64 has no clock setting 680 MHz (settings: 1000, 500, 250 MHz)", ""},
		{[]string{"run", "--clock", "fast"}, 2, `--clock: "fast" is not a clock in MHz`, ""},
		{[]string{"run", "--proxy"}, 2, "--proxy is for a real bench", ""},
		{[]string{"run", "--inventory", "/nonexistent/bench.yaml", "--board", "pc1"}, 2, "read inventory: open /nonexistent/bench.yaml: no such file or directory", ""},
		{[]string{"run", "--reps", "0"}, 2, "--reps must be at least 1", ""},
		{[]string{"run", "--reps", "often"}, 2, `run: --reps "often": give a count of repetitions, or auto`, ""},
		{[]string{"run", "--reps", "5", "--target-ci", "1%"}, 2, "run: --target-ci goes with --reps auto", ""},
		{[]string{"run", "--max-reps", "9", "--target-ci", "1%"}, 2, "run: --max-reps and --target-ci go with --reps auto", ""},
		{[]string{"run", "--reps", "auto", "--target-ci", "tight"}, 2, `run: --target-ci: "tight" is not a percentage`, ""},
		{[]string{"run", "--reps", "auto", "--target-ci", "0"}, 2, "run: --target-ci: target interval 0 %: give a percentage more than 0 and under 100", ""},
		{[]string{"run", "--reps", "auto", "--clock", "1000,500", "--max-reps", "3"}, 2, "run: --max-reps: at most 3 runs a setting: a 95 % interval needs 4", ""},
		{[]string{"run", "--reps", "auto", "--max-reps", "5"}, 2, "run: --max-reps: at most 5 runs a setting: a 95 % interval needs 6", ""},
		{[]string{"results", "compare", "--by", "clock", "--board", "qemu-x86_64", "--target-ci", "100%"}, 2, `results compare: --target-ci "100%": give a percentage more than 0 and under 100`, ""},
		{[]string{"run", "--transport", "nfs"}, 2, "--transport must be http or tftp", ""},
		{[]string{"run", "--bogus"}, 2, "flag provided but not defined: -bogus", ""},
		{[]string{"run", "--bench", "route", "--route-window", "256KiB"}, 2, `--route-window: "256KiB" is not a size in bytes with an optional K, M or G (like 256K)`, ""},
		{[]string{"run", "--bench", "route", "--route-window", "0"}, 2, `--route-window: "0" is not a size`, ""},
		{[]string{"run", "--bench", "route", "--route-streams", "0"}, 2, "--route-streams: 0 is not from 1 to 128", ""},
		{[]string{"run", "--help"}, 0, "", "-route-window string"},
		{[]string{"run", "--help"}, 0, "", "dd (built in: a file written to and read back from the board's tmpfs"},
		{[]string{"results", "show", "nope"}, 2, `no run "nope"`, ""},
		{[]string{"results", "export", "--format", "yaml"}, 2, `unknown format "yaml"`, ""},
		{[]string{"image", "build", "--arch", "sparc"}, 2, "unknown arch", ""},
		{[]string{"run", "--help"}, 0, "", "Netboots the board"},
		{[]string{"boards", "list"}, 0, "", "qemu-x86_64"},
		{[]string{"results", "list"}, 0, "", "RUN"},
		// A bench page other hosts could reach is refused before serve
		// reads its inventory.
		{[]string{"serve", "--http", "0.0.0.0:8080"}, 2, "serve: --http 0.0.0.0:8080: other hosts could reach the bench page; add --http-allow-remote", ""},
		{[]string{"serve", "--http", "[::]:8080"}, 2, "add --http-allow-remote", ""},
		{[]string{"serve", "--http", "198.18.5.1:8080"}, 2, "add --http-allow-remote", ""},
		{[]string{"serve", "--http", "bench-host.example:8080"}, 2, "add --http-allow-remote", ""},
		{[]string{"serve", "--http-allow-remote"}, 2, "--http-allow-remote without --http", ""},
		{[]string{"serve", "--http", "127.0.0.1:http"}, 2, `port "http" is not a number`, ""},
		{[]string{"serve", "--help"}, 0, "", "-http-allow-remote"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := bootbench(t, db, tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", r.code, tt.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.inStderr) || !strings.Contains(r.stdout, tt.inStdout) {
				t.Errorf("stderr %q stdout %q; want %q / %q", r.stderr, r.stdout, tt.inStderr, tt.inStdout)
			}
			// Bad input is one line; only a bare "bootbench" also shows the usage.
			if tt.code == 2 && len(tt.args) > 0 {
				if n := strings.Count(strings.TrimSpace(r.stderr), "\n") + 1; n != 1 {
					t.Errorf("error is %d lines, want one:\n%s", n, r.stderr)
				}
			}
		})
	}
}

// TestCLIBrokenInventory: every problem in a bench.yaml is one line naming
// the file and line, and the command exits 2 before touching anything.
func TestCLIBrokenInventory(t *testing.T) {
	const good = `bench:
  interface: bench0
  address: 198.18.5.1/24
boards:
  pc1:
    profile: pc-x86_64
    mac: "52:54:00:bb:05:20"
    address: 198.18.5.20
    console: /dev/ttyUSB0
    power: {driver: command, on: "relay on", off: "relay off"}
`
	tests := []struct {
		name, from, to, want string
	}{
		{"unknown field", "    console:", "    consloe:", `bench.yaml:9: unknown field "consloe" in board pc1`},
		{"malformed mac", `"52:54:00:bb:05:20"`, `"52:54:00:bb:05"`, `bench.yaml:7: board pc1: mac "52:54:00:bb:05" is not an Ethernet address`},
		{"malformed address", "198.18.5.20", "198.18.5.x", `bench.yaml:8: board pc1: address "198.18.5.x" is not an IPv4 address`},
		{"address outside the bench subnet", "198.18.5.20", "10.1.2.3", "bench.yaml:8: board pc1: address 10.1.2.3 is outside the bench subnet 198.18.5.0/24"},
		{"unknown profile", "pc-x86_64", "pc-z80", `bench.yaml:6: board pc1: unknown profile "pc-z80"`},
		{"console missing", "    console: /dev/ttyUSB0\n", "", "bench.yaml:5: board pc1: no console"},
		{"power driver missing its fields", `{driver: command, on: "relay on", off: "relay off"}`, `{driver: command, on: "relay on"}`, "bench.yaml:10: board pc1 power: driver command needs off"},
		{"pdudaemon without pdu", `{driver: command, on: "relay on", off: "relay off"}`, `{driver: pdudaemon, url: "http://127.0.0.1:16421", port: 1}`, "bench.yaml:10: board pc1 power: driver pdudaemon needs pdu"},
		{"unknown power driver", "driver: command", "driver: x10", `bench.yaml:10: board pc1 power driver: unknown power driver "x10"`},
		{"bench address without prefix", "198.18.5.1/24", "198.18.5.1", `bench.yaml:3: bench address "198.18.5.1" is not an address with a prefix length`},
		{"duplicate mac", "    power:", "  pc2: {profile: pc-x86_64, mac: \"52:54:00:bb:05:20\", address: 198.18.5.21, console: /dev/ttyUSB1, power: {driver: manual}}\n    power:", ""},
		{"yaml syntax", "boards:", "boards: [", "bench.yaml:"},
		// Type errors in the inventory's words, not YAML's.
		{"baud not a number", "    console: /dev/ttyUSB0\n", "    console: /dev/ttyUSB0\n    baud: fast\n", `bench.yaml:10: board pc1 baud: "fast" is not a whole number`},
		{"delay not a duration", `off: "relay off"}`, `off: "relay off", delay: banana}`, `bench.yaml:10: board pc1 power delay: "banana" is not a duration (like 90s, 5m or 1h30m)`},
		{"a list for one value", "    power:", "    job: {reps: [1, 2]}\n    power:", "board pc1 job reps: want one value, not a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := strings.Replace(good, tt.from, tt.to, 1)
			if inv == good {
				t.Fatalf("the case changes nothing")
			}
			path := filepath.Join(t.TempDir(), "bench.yaml")
			os.WriteFile(path, []byte(inv), 0o644)
			db := filepath.Join(t.TempDir(), "r.db")
			r := bootbench(t, db, "run", "--inventory", path, "--board", "pc1")
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "bootbench: bench.yaml:") || !strings.Contains(lines[0], tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and one line with %q", r.code, r.stderr, tt.want)
			}
			if _, err := os.Stat(db); err == nil {
				t.Error("a broken inventory created the results store")
			}
		})
	}
}

// TestRunRefusesBoardWithoutKernel: a board whose profile names no kernel,
// and whose inventory entry none either, is refused before anything is
// built or the bench touched: no DHCP probe, no bench address, no store.
func TestRunRefusesBoardWithoutKernel(t *testing.T) {
	const inv = `bench:
  interface: bbnokernel0
  address: 198.18.5.1/24
boards:
  rb1:
    profile: rb450g
    mac: "52:54:00:bb:05:21"
    address: 198.18.5.21
    console: /dev/ttyUSB-bootbench-none
    power: {driver: manual}
`
	path := filepath.Join(t.TempDir(), "bench.yaml")
	if err := os.WriteFile(path, []byte(inv), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "r.db")
	r := bootbench(t, db, "run", "--inventory", path, "--board", "rb1", "--clock", "680,800", "--reps", "2")
	oneLine(t, r, 2, "run: board rb1: no kernel (name one in the inventory, kernel: FILE, or with --kernel)")
	if strings.Contains(r.stderr, "DHCP") || strings.Contains(r.stderr, "[   setup]") {
		t.Errorf("the bench was touched before the refusal:\n%s", r.stderr)
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a refused run created the results store")
	}
}
