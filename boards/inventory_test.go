package boards

import (
	"context"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadInventory(t *testing.T) {
	inv, err := LoadInventory(context.Background(), filepath.Join("testdata", "bench.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if inv.Bench.Interface != "enp3s0" || inv.Bench.Address != netip.MustParsePrefix("198.18.5.1/24") {
		t.Errorf("bench: %+v", inv.Bench)
	}
	if len(inv.Boards) != 4 {
		t.Fatalf("%d boards, want 4", len(inv.Boards))
	}
	pc1, ok := inv.Board("pc1")
	if !ok || pc1.Profile.Name != "pc-x86_64" || pc1.MAC.String() != "52:54:00:bb:05:20" ||
		pc1.Address != netip.MustParseAddr("198.18.5.20") || pc1.Baud != 115200 || pc1.Line != 6 {
		t.Errorf("pc1: %+v", pc1)
	}
	if pc1.Power.Driver != PowerCommand || pc1.Power.On != "relay 3 on" || pc1.Power.Off != "relay 3 off" {
		t.Errorf("pc1 power: %+v", pc1.Power)
	}
	if j := pc1.Job; j.Bench != "speed" || len(j.Clocks) != 1 || j.Clocks[0] != 800 || j.Reps != (Reps{Count: 3}) || j.Seconds != 0.5 || strings.Join(j.Algs, ",") != "md5,sha256" {
		t.Errorf("pc1 job: %+v", j)
	}
	pc2, _ := inv.Board("pc2")
	if pc2.Baud != 57600 || pc2.Kernel != "/srv/kernels/vmlinuz" || pc2.Power.Driver != PowerPDUDaemon || pc2.Power.PDU != "bench-pdu" || pc2.Power.Port != 3 || pc2.Job.Reps != (Reps{Count: 1}) || pc2.Job.Bench != "speed" {
		t.Errorf("pc2: %+v", pc2)
	}
	pc3, _ := inv.Board("pc3")
	if pc3.Address.IsValid() || pc3.Power.Delay != 3*time.Second || pc3.Power.Relay != 1 {
		t.Errorf("pc3: %+v", pc3)
	}
}

// TestInventoryProblems feeds broken inventories: each problem is one line
// naming the file and the line it is on.
func TestInventoryProblems(t *testing.T) {
	const head = "bench:\n  interface: bench0\n  address: 198.18.5.1/24\nboards:\n  pc1:\n    profile: pc-x86_64\n"
	const rest = "    mac: \"52:54:00:bb:05:20\"\n    address: 198.18.5.20\n    console: /dev/ttyUSB0\n    power: {driver: manual}\n"
	tests := []struct {
		name, yaml string
		want       []string // one per expected line
	}{
		{"unknown field", head + rest + "    maac: x\n", []string{`bench.yaml:11: unknown field "maac" in board pc1`}},
		{"unknown top-level field", "benches: {}\n" + head[len("bench:\n")-len("bench:\n"):] + rest, []string{`bench.yaml:1: unknown field "benches" in the inventory`}},
		{"malformed mac", head + strings.Replace(rest, `"52:54:00:bb:05:20"`, "52:54:00:bb:05", 1), []string{`bench.yaml:7: board pc1: mac "52:54:00:bb:05" is not an Ethernet address`}},
		{"duplicate mac", head + rest + "  pc2:\n    profile: pc-x86_64\n" + strings.Replace(rest, "198.18.5.20", "198.18.5.21", 1), []string{"bench.yaml:13: board pc2: MAC 52:54:00:bb:05:20 is board pc1's too"}},
		{"duplicate address", head + rest + "  pc2:\n    profile: pc-x86_64\n" + strings.Replace(rest, "bb:05:20", "bb:05:21", 1), []string{"bench.yaml:14: board pc2: address 198.18.5.20 is board pc1's too"}},
		{"malformed address", head + strings.Replace(rest, "198.18.5.20", "198.18.5.300", 1), []string{`bench.yaml:8: board pc1: address "198.18.5.300" is not an IPv4 address`}},
		{"address outside subnet", head + strings.Replace(rest, "198.18.5.20", "198.18.6.20", 1), []string{"bench.yaml:8: board pc1: address 198.18.6.20 is outside the bench subnet 198.18.5.0/24"}},
		{"address is ours", head + strings.Replace(rest, "198.18.5.20", "198.18.5.1", 1), []string{"bench.yaml:8: board pc1: address 198.18.5.1 is bootbench's own"}},
		{"unknown profile", strings.Replace(head, "pc-x86_64", "rb9000", 1) + rest, []string{`bench.yaml:6: board pc1: unknown profile "rb9000"`}},
		{"virtual profile", strings.Replace(head, "pc-x86_64", "qemu-x86_64", 1) + rest, []string{"bench.yaml:6: board pc1: profile qemu-x86_64 is a virtual board"}},
		{"no console", head + strings.Replace(rest, "    console: /dev/ttyUSB0\n", "", 1), []string{"bench.yaml:5: board pc1: no console"}},
		{"relative console", head + strings.Replace(rest, "/dev/ttyUSB0", "ttyUSB0", 1), []string{`bench.yaml:9: board pc1: console "ttyUSB0": give an absolute device path`}},
		{"bad usb console", head + strings.Replace(rest, "/dev/ttyUSB0", "usb:403:6001", 1), []string{`bench.yaml:9: board pc1: console "usb:403:6001": write usb:VID:PID`}},
		{"command without off", head + strings.Replace(rest, "{driver: manual}", `{driver: command, on: "relay on"}`, 1), []string{"bench.yaml:10: board pc1 power: driver command needs off"}},
		{"pdudaemon without port", head + strings.Replace(rest, "{driver: manual}", `{driver: pdudaemon, url: "http://localhost:16421", pdu: p}`, 1), []string{"bench.yaml:10: board pc1 power: driver pdudaemon needs port"}},
		{"unknown power driver", head + strings.Replace(rest, "manual", "zigbee", 1), []string{`bench.yaml:10: board pc1 power driver: unknown power driver "zigbee"`}},
		{"power field of another driver", head + strings.Replace(rest, "{driver: manual}", `{driver: tasmota, url: "http://x", pdu: p}`, 1), []string{`bench.yaml:10: board pc1 power: driver tasmota has no field "pdu"`}},
		{"no power", head + strings.Replace(rest, "    power: {driver: manual}\n", "", 1), []string{"bench.yaml:5: board pc1: no power"}},
		{"bench without interface", strings.Replace(head, "  interface: bench0\n", "", 1) + rest, []string{"bench.yaml:2: bench: no interface"}},
		{"bench address without length", strings.Replace(head, "198.18.5.1/24", "198.18.5.1", 1) + rest, []string{`bench.yaml:3: bench address "198.18.5.1" is not an address with a prefix length`}},
		{"clock the model lacks", head + rest + "    job: {clock: [abc]}\n", []string{`bench.yaml:11: board pc1 job clock: "abc" is not a whole number`}},
		{"reps neither a count nor auto", head + rest + "    job: {reps: lots}\n", []string{`bench.yaml:11: board pc1 job reps: "lots" is neither a count nor auto`}},
		{"reps 0", head + rest + "    job: {reps: 0}\n", []string{`bench.yaml:11: board pc1 job reps: 0: a count is at least 1 (or say auto)`}},
		{"target_ci without auto", head + rest + "    job: {reps: 5, target_ci: 1%}\n", []string{`bench.yaml:11: board pc1 job: target_ci goes with reps: auto`}},
		{"target_ci no percentage", head + rest + "    job: {reps: auto, target_ci: tight}\n", []string{`bench.yaml:11: board pc1 job target_ci: "tight" is not a percentage`}},
		{"target_ci of 100 %", head + rest + "    job: {reps: auto, target_ci: 100%}\n", []string{`bench.yaml:11: board pc1 job: reps auto: target interval 100 %: give a percentage more than 0 and under 100`}},
		{"max_reps too few for one clock", head + rest + "    job: {reps: auto, max_reps: 5}\n", []string{`bench.yaml:11: board pc1 job: reps auto: at most 5 runs a setting: a 95 % interval needs 6`}},
		{"yaml syntax", head + rest + "   bad: [\n", []string{"bench.yaml:"}},
		{"two problems", head + strings.Replace(strings.Replace(rest, "198.18.5.20", "10.0.0.1", 1), "/dev/ttyUSB0", "tty", 1), []string{
			"bench.yaml:8: board pc1: address 10.0.0.1 is outside the bench subnet",
			`bench.yaml:9: board pc1: console "tty"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseInventory("/etc/bootbench/bench.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("accepted:\n%s", tt.yaml)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), len(tt.want), err)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(lines[i], w) && !strings.Contains(lines[i], w) {
					t.Errorf("line %d = %q, want it to start with %q", i, lines[i], w)
				}
			}
		})
	}
}

func TestResolve(t *testing.T) {
	inv, err := LoadInventory(context.Background(), filepath.Join("testdata", "bench.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := Resolve("pc1", inv); err != nil || b.Name != "pc1" || b.Virtual() {
		t.Errorf("pc1: %+v, %v", b, err)
	}
	if b, err := Resolve("qemu-x86_64", nil); err != nil || !b.Virtual() || b.MAC.String() != "52:54:00:bb:00:01" {
		t.Errorf("qemu-x86_64: %+v, %v", b, err)
	}
	if _, err := Resolve("pc-x86_64", inv); err == nil || !strings.Contains(err.Error(), "is a board model") {
		t.Errorf("a model as a board: %v", err)
	}
	if _, err := Resolve("pc9", inv); err == nil || !strings.Contains(err.Error(), "pc1, pc2, pc3, pc4") {
		t.Errorf("unknown board: %v", err)
	}
}

func TestInventoryPath(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("BOOTBENCH_INVENTORY", "")
	if got := InventoryPath(""); got != "" {
		t.Errorf("no inventory anywhere: %q", got)
	}
	def := filepath.Join(cfg, "bootbench", "bench.yaml")
	os.MkdirAll(filepath.Dir(def), 0o755)
	os.WriteFile(def, nil, 0o644)
	if got := InventoryPath(""); got != def {
		t.Errorf("XDG default: %q", got)
	}
	t.Setenv("BOOTBENCH_INVENTORY", "/env/bench.yaml")
	if got := InventoryPath(""); got != "/env/bench.yaml" {
		t.Errorf("env: %q", got)
	}
	if got := InventoryPath("/flag.yaml"); got != "/flag.yaml" {
		t.Errorf("flag: %q", got)
	}
}

// TestInventoryRepsAuto: a job's reps: auto, with its target and most
// rounds or the defaults.
func TestInventoryRepsAuto(t *testing.T) {
	const inv = "bench:\n  interface: bench0\n  address: 198.18.5.1/24\nboards:\n  pc1:\n    profile: pc-x86_64\n" +
		"    mac: \"52:54:00:bb:05:20\"\n    console: /dev/ttyUSB0\n    power: {driver: manual}\n    job: %s\n"
	for _, tt := range []struct {
		job  string
		want Reps
	}{
		{"{reps: auto}", AutoReps()},
		{"{reps: AUTO, clock: [800, 1000], max_reps: 4}", Reps{Auto: true, Target: DefaultTargetCI, Max: 4}},
		{"{reps: auto, target_ci: 0.5%, max_reps: 30}", Reps{Auto: true, Target: 0.005, Max: 30}},
		{"{reps: auto, target_ci: 1}", Reps{Auto: true, Target: 0.01, Max: DefaultMaxReps}},
		{"{reps: 7}", Reps{Count: 7}},
		{"{bench: speed}", Reps{Count: 1}},
	} {
		i, err := ParseInventory("bench.yaml", []byte(strings.Replace(inv, "%s", tt.job, 1)))
		if err != nil {
			t.Errorf("%s: %v", tt.job, err)
			continue
		}
		if got := i.Boards[0].Job.Reps; got != tt.want {
			t.Errorf("%s: reps %+v, want %+v", tt.job, got, tt.want)
		}
	}
}

func TestParseReps(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Reps
		err  string
	}{
		{"5", Reps{Count: 5}, ""},
		{" auto ", AutoReps(), ""},
		{"0", Reps{}, "a count is at least 1 (or say auto)"},
		{"-2", Reps{}, "-2: a count is at least 1"},
		{"many", Reps{}, `"many" is neither a count nor auto`},
	} {
		got, err := ParseReps(tt.in)
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) || got != tt.want {
			t.Errorf("ParseReps(%q) = %+v, %v; want %+v, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
	for _, tt := range []struct {
		in   string
		want float64
	}{{"2%", 0.02}, {"2 %", 0.02}, {"0.5", 0.005}, {"12.25%", 0.1225}} {
		if got, err := ParsePercent(tt.in); err != nil || math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("ParsePercent(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
		if back := Percent(tt.want); back != strings.TrimSuffix(strings.TrimSuffix(tt.in, "%"), " ")+" %" && tt.in != "0.5" {
			t.Errorf("Percent(%v) = %q", tt.want, back)
		}
	}
}
