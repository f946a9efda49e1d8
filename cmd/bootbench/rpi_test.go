package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/internal/testkit/needs"
	"github.com/bootbench/bootbench/plan"
)

// TestRunRefusesPiClockBeyondLimit (issue 22, acceptance 3): a Raspberry
// Pi 4 clock above its firmware's highest is refused before power-on, in
// one line that gives the limit, whether the board is named as a model or
// as a board of the bench, and --allow-overvoltage does not change that;
// a clock above the safe limit needs --allow-overvoltage. The board's
// power switch (a command that leaves a file) is never touched, and no
// results store is made.
func TestRunRefusesPiClockBeyondLimit(t *testing.T) {
	dir := t.TempDir()
	powered := filepath.Join(dir, "powered")
	inv := filepath.Join(dir, "bench.yaml")
	os.WriteFile(inv, []byte(`bench:
  interface: bbpinone0
  address: 198.18.5.1/24
boards:
  pi1:
    profile: rpi4b
    mac: "dc:a6:32:01:36:c2"
    address: 198.18.5.40
    serial: "9ffefdef"
    console: /dev/ttyUSB-bootbench-none
    power: {driver: command, on: "touch `+powered+`", off: "true"}
`), 0o644)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"the model", []string{"run", "--board", "rpi4b", "--clock", "2500"}, "run: board model rpi4b: 2500 MHz is above 2100 MHz, the highest clock its firmware takes"},
		{"a board of the bench", []string{"run", "--inventory", inv, "--board", "pi1", "--clock", "2500"}, "above 2100 MHz, the highest clock its firmware takes"},
		{"allowed overvoltage is not beyond the firmware", []string{"run", "--inventory", inv, "--board", "pi1", "--clock", "1500,2500", "--allow-overvoltage"}, "above 2100 MHz"},
		{"above the safe limit", []string{"run", "--inventory", inv, "--board", "pi1", "--clock", "1500,2000"}, "2000 MHz is above 1800 MHz, the highest clock without over_voltage; --allow-overvoltage serves it with over_voltage=6"},
		{"ci too", []string{"ci", "--inventory", inv, "--board", "pi1", "--clock", "2500", "--baseline", "board=pi1,clock=1500", "--max-regression", "3%"}, "above 2100 MHz"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "r.db")
			r := bootbench(t, db, tt.args...)
			oneLine(t, r, 2, tt.want)
			if _, err := os.Stat(powered); err == nil {
				t.Fatal("the board was powered on")
			}
			if _, err := os.Stat(db); err == nil {
				t.Error("a refused run created the results store")
			}
		})
	}
	for _, cmd := range []string{"run", "ci"} {
		if r := bootbench(t, filepath.Join(dir, "h.db"), cmd, "--help"); r.code != 0 || !strings.Contains(r.stdout+r.stderr, "-allow-overvoltage") {
			t.Errorf("%s --help does not teach --allow-overvoltage:\n%s%s", cmd, r.stdout, r.stderr)
		}
	}
}

// TestRaspberryPiFilesFetched: what a Pi 4 and a Pi 3B+ boot besides the
// kernel and image comes from Debian, into the cache: the firmware their
// ROM asks for from raspi-firmware, and the device tree from the Debian
// kernel's package (the profile's, for a board that boots a kernel of its
// own).
func TestRaspberryPiFilesFetched(t *testing.T) {
	if _, err := exec.LookPath("apt-get"); err != nil {
		needs.Unmet(t, "needs APT")
	}
	for _, name := range []string{"rpi4b", "rpi3b-plus"} {
		p, err := boards.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		job := plan.Job{Board: boards.Board{Name: "pi", Profile: p, Serial: "9ffefdef"}}
		if err := job.Settle(); err != nil {
			t.Fatal(err)
		}
		rp := plan.New(job).RaspberryPi
		files, err := raspberryPiFiles(context.Background(), "", "/srv/kernels/own-Image", *rp)
		if err != nil {
			t.Fatal(err)
		}
		want := append(append([]string(nil), p.RaspberryPi.Firmware...), filepath.Base(p.RaspberryPi.DeviceTree))
		if len(files) != len(want) {
			t.Errorf("%s: files %v, want %v", name, files, want)
		}
		for _, f := range want {
			st, err := os.Stat(files[f])
			if err != nil || st.Size() < 4096 || !strings.HasPrefix(files[f], cacheDir()) {
				t.Errorf("%s: %s at %q: %v", name, f, files[f], err)
			}
		}
	}
}

// TestUnknownPiHint: serve's hint for a Raspberry Pi the inventory lacks
// (known by its maker's MAC; its ROM says only PXEClient) names the Pi
// profiles and the serial to add.
func TestUnknownPiHint(t *testing.T) {
	inv, err := boards.ParseInventory("bench.yaml", []byte("bench: {interface: bench0, address: 198.18.5.1/24}\nboards:\n  pc1: {profile: pc-x86_64, mac: \"52:54:00:bb:05:20\", address: 198.18.5.2, console: /dev/ttyUSB0, power: {driver: manual}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	mac, _ := net.ParseMAC("dc:a6:32:01:36:c2")
	got := unknownHint(harness.UnknownBoard{MAC: mac, VendorClass: "PXEClient:Arch:00000:UNDI:002001", ClientArch: "Intel x86PC"}, inv)
	for _, want := range []string{"profile: rpi4b # a Raspberry Pi (or rpi3b-plus); add serial:", `mac: "dc:a6:32:01:36:c2"`, "address: 198.18.5.3"} {
		if !strings.Contains(got, want) {
			t.Errorf("hint lacks %q:\n%s", want, got)
		}
	}
}
