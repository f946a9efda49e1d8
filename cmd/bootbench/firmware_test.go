package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFirmwareRefusals: what a board under its own firmware cannot run is
// refused before anything is powered, in one line.
func TestFirmwareRefusals(t *testing.T) {
	inv := filepath.Join(t.TempDir(), "bench.yaml")
	text := `bench:
  interface: bench0
  address: 198.18.5.1/24
boards:
  rb1:
    profile: rb1100
    image: none
    console: /dev/ttyUSB1
    power: {driver: manual}
    route_configs:
      plain: [{send: "/ip firewall filter remove [find dynamic=no]"}, {expect: "] > "}]
  rb2:
    profile: rb1100
    mac: "00:0c:42:00:00:02"
    address: 198.18.5.22
    console: /dev/ttyUSB2
    power: {driver: manual}
`
	if err := os.WriteFile(inv, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	db := emptyStore(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"another benchmark under RouterOS", []string{"--board", "rb1", "--bench", "speed"}, "32-bit PowerPC"},
		{"dd under RouterOS", []string{"--board", "rb1", "--bench", "dd"}, "under its own firmware (image: none) it runs route"},
		{"a configuration it lacks", []string{"--board", "rb1", "--bench", "route", "--route-configs", "plain,stateful"}, `board rb1 has no configuration "stateful" in its route_configs (plain)`},
		{"no route networks", []string{"--board", "rb1", "--bench", "route"}, "the route benchmark needs the bench's route networks"},
		{"netbooted RB1100, route", []string{"--board", "rb2", "--bench", "route"}, "the route benchmark runs under RouterOS, its own firmware, on an inventory board with profile rb1100, image: none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bootbench(t, db, append([]string{"run", "--inventory", inv}, tt.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.want) || strings.Contains(r.stderr, "power    on") {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 with %q, nothing powered", r.code, r.stderr, tt.want)
			}
		})
	}
}
