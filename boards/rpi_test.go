package boards

import (
	"net"
	"strings"
	"testing"
)

// TestClockLimits: the Pi profiles' clocks are checked against their
// documented limits: above the hard limit always refused, above the safe
// one only with over_voltage allowed, and over_voltage served only there.
func TestClockLimits(t *testing.T) {
	for _, tt := range []struct {
		profile     string
		mhz         MHz
		allowed     bool
		wantErr     string // "" accepted
		overVoltage int
	}{
		{"rpi4b", 1500, false, "", 0},
		{"rpi4b", 1800, false, "", 0},
		{"rpi4b", 600, false, "", 0},
		{"rpi4b", 599, true, "below 600 MHz", 0},
		{"rpi4b", 1900, false, "above 1800 MHz, the highest clock without over_voltage; --allow-overvoltage", 6},
		{"rpi4b", 2000, true, "", 6},
		{"rpi4b", 2100, true, "", 6},
		{"rpi4b", 2050, true, "not a multiple of 100 MHz, the steps its cpufreq reports clocks in (it would report 2100", 6},
		{"rpi4b", 1750, false, "not a multiple of 100 MHz", 0},
		{"rpi4b", 2147, true, "above 2100 MHz", 6},
		{"rpi4b", 2200, true, "above 2100 MHz, the highest clock its firmware takes", 6},
		{"rpi4b", 2500, false, "above 2100 MHz", 6},
		{"rpi3b-plus", 1400, false, "", 0},
		{"rpi3b-plus", 1200, false, "", 0},
		{"rpi3b-plus", 1500, true, "above 1400 MHz, the highest clock its firmware takes", 0},
		{"pc-x86_64", 9000, false, "", 0}, // no limits known: cpufreq finds out
	} {
		p, err := Get(tt.profile)
		if err != nil {
			t.Fatal(err)
		}
		err = p.CheckClock(tt.mhz)
		if err == nil {
			err = p.CheckOvervoltage(tt.mhz, tt.allowed)
		}
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s at %d MHz (allowed %v): %v", tt.profile, tt.mhz, tt.allowed, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s at %d MHz (allowed %v): %v, want %q", tt.profile, tt.mhz, tt.allowed, err, tt.wantErr)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("%s at %d MHz: the error is not one line: %q", tt.profile, tt.mhz, err)
		}
		if got := p.OverVoltage(tt.mhz); got != tt.overVoltage {
			t.Errorf("%s at %d MHz: over_voltage %d, want %d", tt.profile, tt.mhz, got, tt.overVoltage)
		}
	}
}

// TestRaspberryPiProfiles: each Pi profile names the firmware its ROM
// asks for first and a device tree of Debian's kernel.
func TestRaspberryPiProfiles(t *testing.T) {
	for name, first := range map[string]string{"rpi4b": "start4.elf", "rpi3b-plus": "bootcode.bin"} {
		p, err := Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Boot != BootRaspberryPi || p.ClockMethod != ClockConfigTxt || p.RaspberryPi == nil || p.RaspberryPi.Firmware[0] != first ||
			!strings.HasPrefix(p.RaspberryPi.DeviceTree, "broadcom/bcm") || p.Console != "ttyS1" {
			t.Errorf("%s: %+v %+v", name, p, p.RaspberryPi)
		}
	}
}

// TestRaspberryPiProfileProblems: a profile that cannot be served as a Pi
// is refused when it is read.
func TestRaspberryPiProfileProblems(t *testing.T) {
	const base = "name: x\narch: arm64\nboot: rpi-netboot\ntested: {hardware: [a bench]}\n"
	const files = "raspberry_pi: {firmware: [start4.elf], device_tree: broadcom/bcm2711-rpi-4-b.dtb}\n"
	for _, tt := range []struct{ yaml, want string }{
		{base, "needs raspberry_pi: firmware and device_tree"},
		{base + "raspberry_pi: {firmware: [start4.elf]}\n", "needs raspberry_pi: firmware and device_tree"},
		{strings.Replace(base, "rpi-netboot", "ipxe", 1) + files, "raspberry_pi is for boot method rpi-netboot"},
		{strings.Replace(base, "rpi-netboot", "ipxe", 1) + "clock_method: config-txt\n", "config-txt needs boot method rpi-netboot"},
		{base + files + "clock_method: config-txt\nclock_limits: {min: 600, safe: 1800, max: 2147}\n", "clocks above safe need over_voltage"},
		{base + files + "clock_method: config-txt\nclock_limits: {min: 600, safe: 1800, max: 1700}\n", "0 < min <= safe <= max"},
		{base + files + "clock_method: config-txt\ndefault_clock: 1900\nclock_limits: {min: 600, safe: 1800, max: 1800}\n", "outside clock_limits"},
	} {
		if _, err := Parse([]byte(tt.yaml)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.yaml, err, tt.want)
		}
	}
	if _, err := Parse([]byte(base + files + "clock_method: config-txt\ndefault_clock: 1500\nclock_limits: {min: 600, safe: 1800, max: 2147, over_voltage: 6}\n")); err != nil {
		t.Errorf("a good Pi profile: %v", err)
	}
}

// TestInventorySerial: a Pi board's serial is read, lower-cased, and
// checked; other boards have none.
func TestInventorySerial(t *testing.T) {
	const head = "bench: {interface: bench0, address: 198.18.5.1/24}\nboards:\n"
	pi := func(name, mac, addr, serial string) string {
		s := "  " + name + ":\n    profile: rpi4b\n    mac: \"" + mac + "\"\n    address: " + addr + "\n    console: /dev/ttyUSB0\n    power: {driver: manual}\n"
		if serial != "" {
			s += "    serial: " + serial + "\n"
		}
		return s
	}
	inv, err := ParseInventory("bench.yaml", []byte(head+pi("pi1", "dc:a6:32:01:36:c2", "198.18.5.30", `"9FFEFDEF"`)))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := inv.Board("pi1"); b.Serial != "9ffefdef" {
		t.Errorf("serial %q, want 9ffefdef", b.Serial)
	}
	inv, err = ParseInventory("bench.yaml", []byte(head+pi("pi1", "dc:a6:32:01:36:c2", "198.18.5.30", "9ffefdef")+"    job: {clock: [1500, 2000], allow_overvoltage: true}\n"))
	if b, _ := inv.Board("pi1"); err != nil || !b.Job.AllowOvervoltage || len(b.Job.Clocks) != 2 {
		t.Errorf("a job allowed over_voltage: %+v, %v", b.Job, err)
	}
	for _, tt := range []struct{ yaml, want string }{
		{head + pi("pi1", "dc:a6:32:01:36:c2", "198.18.5.30", ""), "bench.yaml:3: board pi1: no serial"},
		{head + pi("pi1", "dc:a6:32:01:36:c2", "198.18.5.30", "9ffefde"), `bench.yaml:9: board pi1: serial "9ffefde" is not 8 hex digits`},
		{head + pi("pi1", "dc:a6:32:01:36:c2", "198.18.5.30", "9ffefdeg"), `is not 8 hex digits`},
		{head + pi("pi1", "dc:a6:32:01:36:c2", "198.18.5.30", "9ffefdef") + pi("pi2", "dc:a6:32:01:36:c3", "198.18.5.31", "9ffefdef"), "bench.yaml:16: board pi2: serial 9ffefdef is board pi1's too"},
		{head + strings.Replace(pi("pc1", "52:54:00:bb:05:20", "198.18.5.20", "9ffefdef"), "rpi4b", "pc-x86_64", 1), "serial is for Raspberry Pi boards"},
		{head + pi("pi1", "dc:a6:32:01:36:c2", "198.18.5.30", "9ffefdef") + "    job: {clock: [1500, 2000]}\n", "bench.yaml:10: board pi1 job: board model rpi4b: 2000 MHz is above 1800 MHz, the highest clock without over_voltage; allow_overvoltage: true serves it"},
		{head + pi("pi1", "dc:a6:32:01:36:c2", "198.18.5.30", "9ffefdef") + "    job: {clock: [1500, 2500], allow_overvoltage: true}\n", "above 2100 MHz"},
		{head + pi("pi1", "dc:a6:32:01:36:c2", "198.18.5.30", "9ffefdef") + pi("9ffefdef", "dc:a6:32:01:36:c3", "198.18.5.31", "0000beef"), "board 9ffefdef: its name is board pi1's serial, and both would be served from folder 9ffefdef/"},
		{head + pi("0000beef", "dc:a6:32:01:36:c3", "198.18.5.31", "0000cafe") + pi("pi1", "dc:a6:32:01:36:c2", "198.18.5.30", "0000beef"), "board pi1: serial 0000beef is a board's name too"},
	} {
		_, err := ParseInventory("bench.yaml", []byte(tt.yaml))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.yaml, err, tt.want)
		}
	}
}

func TestRaspberryPiMAC(t *testing.T) {
	for mac, want := range map[string]bool{"dc:a6:32:01:36:c2": true, "b8:27:eb:28:f6:6d": true, "e4:5f:01:00:00:01": true, "52:54:00:bb:05:20": false} {
		hw, _ := net.ParseMAC(mac)
		if got := RaspberryPiMAC(hw); got != want {
			t.Errorf("RaspberryPiMAC(%s) = %v", mac, got)
		}
	}
	if RaspberryPiMAC(nil) {
		t.Error("no MAC is a Pi's")
	}
}

// TestClockStepsChecked: limits that do not sit on their own step are a
// broken profile.
func TestClockStepsChecked(t *testing.T) {
	l := ClockLimits{Min: 600, Safe: 1800, Max: 2147, OverVoltage: 6, Step: 100}
	if err := l.check("x", 1500); err == nil || !strings.Contains(err.Error(), "multiples of step 100") {
		t.Errorf("max off the step: %v", err)
	}
	l.Max = 2100
	if err := l.check("x", 1550); err == nil {
		t.Error("a default clock off the step was taken")
	}
	if err := l.check("x", 1500); err != nil {
		t.Error(err)
	}
}
