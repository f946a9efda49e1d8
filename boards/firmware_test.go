package boards

import (
	"strings"
	"testing"
	"time"
)

// firmwareHead is an inventory up to a board under its own firmware's
// fields; a test adds them.
const firmwareHead = "bench:\n  interface: bench0\n  address: 198.18.5.1/24\n  route: {client: lan0, server: wan0}\nboards:\n  fw1:\n    profile: pc-x86_64\n    image: none\n    console: /dev/ttyUSB0\n    power: {driver: manual}\n"

func TestFirmwareBoard(t *testing.T) {
	inv, err := ParseInventory("bench.yaml", []byte(firmwareHead+`    route_configs:
      plain: []
      stateful:
        - {expect: "# ", timeout: 2m}
        - {send: "nft add rule inet fw forward ct state established accept"}
        - {key: "\x03"}
      by-hand: {manual: "set the firewall to stateful"}
`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := inv.Board("fw1")
	if !b.OwnFirmware || b.MAC != nil || inv.Bench.Route == nil || inv.Bench.Route.Client != "lan0" || inv.Bench.Route.Server != "wan0" {
		t.Fatalf("board %+v, bench %+v", b, inv.Bench)
	}
	var names []string
	for _, c := range b.RouteConfigs {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "plain,stateful,by-hand" {
		t.Fatalf("configurations %v, want the file's order", names)
	}
	st := b.RouteConfigs[1].Steps
	if len(st) != 3 || st[0].Expect != "# " || st[0].Timeout != 2*time.Minute || st[1].Send == "" || st[2].Key != "\x03" {
		t.Errorf("stateful steps: %+v", st)
	}
	if m := b.RouteConfigs[2].Steps; len(m) != 1 || m[0].Manual != "set the firewall to stateful" {
		t.Errorf("by-hand steps: %+v", m)
	}
	if len(b.RouteConfigs[0].Steps) != 0 || b.RouteConfigs[1].Line != 13 {
		t.Errorf("plain %+v", b.RouteConfigs[0])
	}
	if b.RouteAddrs[0] != DefaultRouteAddrs[0] || b.RouteAddrs[1] != DefaultRouteAddrs[1] {
		t.Errorf("route addresses %v", b.RouteAddrs)
	}
}

// TestFirmwareProblems: what goes wrong in a board under its own firmware
// is one line each, with the file and line.
func TestFirmwareProblems(t *testing.T) {
	const netboot = "bench:\n  interface: bench0\n  address: 198.18.5.1/24\nboards:\n  pc1:\n    profile: pc-x86_64\n    mac: \"52:54:00:bb:05:20\"\n    console: /dev/ttyUSB0\n    power: {driver: manual}\n"
	tests := []struct{ name, yaml, want string }{
		{"unknown image", strings.Replace(firmwareHead, "image: none", "image: own", 1) + "    route_configs: {plain: []}\n", `bench.yaml:8: board fw1: image "own": give none`},
		{"no configurations", firmwareHead, "bench.yaml:6: board fw1: image: none needs route_configs"},
		{"configurations not a mapping", firmwareHead + "    route_configs: [plain]\n", "bench.yaml:11: board fw1: route_configs must map each configuration's name to its steps"},
		{"bad name", firmwareHead + "    route_configs:\n      Plain Old: []\n", `bench.yaml:12: board fw1: route config name "Plain Old": use lower-case letters`},
		{"direct", firmwareHead + "    route_configs:\n      direct: []\n", "bench.yaml:12: board fw1: route config name direct is the baseline"},
		{"twice", firmwareHead + "    route_configs:\n      plain: []\n      plain: []\n", "bench.yaml:13: board fw1: route config plain given twice"},
		{"two things in a step", firmwareHead + "    route_configs:\n      plain:\n        - {send: a, expect: b}\n", "bench.yaml:13: board fw1 route config plain step 1: give one of expect, send, key or manual"},
		{"unknown step field", firmwareHead + "    route_configs:\n      plain:\n        - {sned: a}\n", `bench.yaml:13: unknown field "sned" in board fw1 route config plain step 1 (did you mean send?)`},
		{"timeout on a send", firmwareHead + "    route_configs:\n      plain:\n        - {send: a, timeout: 5s}\n", "bench.yaml:13: board fw1 route config plain step 1: timeout is how long an expect waits"},
		{"steps a scalar", firmwareHead + "    route_configs:\n      plain: manual\n", "bench.yaml:12: board fw1 route config plain: give a list of steps"},
		{"kernel", firmwareHead + "    kernel: /srv/vmlinuz\n    route_configs: {plain: []}\n", "bench.yaml:11: board fw1: kernel is for a netbooted board"},
		{"configurations on a netbooted board", netboot + "    route_configs: {plain: []}\n", "bench.yaml:10: board pc1: route_configs are for a board under its own firmware"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseInventory("bench.yaml", []byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Count(err.Error(), "\n") != 0 {
				t.Errorf("got %v\nwant one line with %q", err, tt.want)
			}
		})
	}
}

// TestFirmwareExamples: every profile's example inventory entry loads as
// the board it shows.
func TestFirmwareExamples(t *testing.T) {
	ps, err := All()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range ps {
		if p.Firmware == nil {
			continue
		}
		n++
		text := "bench:\n  interface: bench0\n  address: 198.18.5.1/24\n  route: {client: lan0, server: wan0}\nboards:\n" + indent(p.Firmware.Example, "  ")
		inv, err := ParseInventory("bench.yaml", []byte(text))
		if err != nil {
			t.Errorf("%s's example: %v\n%s", p.Name, err, text)
			continue
		}
		b := inv.Boards[0]
		if !b.OwnFirmware || b.Profile.Name != p.Name || len(b.RouteConfigs) == 0 {
			t.Errorf("%s's example is board %+v", p.Name, b)
		}
		for _, bench := range p.Firmware.Benchmarks {
			if err := p.UnsupportedFor(b, bench); err != nil {
				t.Errorf("%s's example refuses %s: %v", p.Name, bench, err)
			}
		}
	}
	if n == 0 {
		t.Fatal("no profile runs under its own firmware; rb1100 should")
	}
}

func indent(s, by string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = by + l
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestUnsupportedFor(t *testing.T) {
	rb1100, err := Get("rb1100")
	if err != nil {
		t.Fatal(err)
	}
	pc, _ := Get("pc-x86_64")
	own := func(p Profile) Board { return Board{Name: "b1", Profile: p, OwnFirmware: true} }
	tests := []struct {
		name  string
		b     Board
		bench string
		want  string // "" is runs
	}{
		{"RB1100 under RouterOS, route", own(rb1100), "route", ""},
		{"RB1100 under RouterOS, speed", own(rb1100), "speed", "32-bit PowerPC"},
		{"RB1100 netbooted, route", Board{Name: "b1", Profile: rb1100}, "route", "the route benchmark runs under RouterOS, its own firmware, on an inventory board with profile rb1100, image: none"},
		{"RB1100 netbooted, speed", Board{Name: "b1", Profile: rb1100}, "speed", "32-bit PowerPC"},
		{"PC under its own firmware, route", own(pc), "route", ""},
		{"PC under its own firmware, dd", own(pc), "dd", "board b1 keeps its own firmware (image: none): bootbench runs nothing on it"},
		{"PC netbooted, speed", Board{Name: "b1", Profile: pc}, "speed", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.b.Profile.UnsupportedFor(tt.b, tt.bench)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}
