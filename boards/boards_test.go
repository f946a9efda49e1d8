package boards

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestShippedProfilesParse(t *testing.T) {
	ps, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) == 0 {
		t.Fatal("no profiles shipped")
	}
	if _, err := Get(Default); err != nil {
		t.Fatalf("default board: %v", err)
	}
	for _, p := range ps {
		// A virtual board's clocks are QEMU's instruction clocks, whether
		// set on QEMU or told its ROM (config.txt, a menu, NVRAM).
		if p.ClockMethod == ClockQEMUIcount || p.Virtual != nil && (p.ClockMethod == ClockConfigTxt || p.ClockMethod.SetInFirmware()) {
			for _, c := range p.Clocks {
				if _, err := IcountShift(c); err != nil {
					t.Errorf("%s: %v", p.Name, err)
				}
			}
		}
	}
}

// TestSeedProfiles holds the shipped real boards to the facts their
// sources give, and to saying what is tested where.
func TestSeedProfiles(t *testing.T) {
	tests := []struct {
		name, arch, gomips string
		ram                int
		boot               BootMethod
		format             ImageFormat
		clocks             []MHz
		unsupported        bool
	}{
		{"rb450", "mips", "softfloat", 32, BootRouterBOOT, FormatELF, []MHz{300}, false},
		{"rb450g", "mips", "softfloat", 256, BootRouterBOOT, FormatELF, []MHz{680, 800}, false},
		{"rb750", "mips", "softfloat", 32, BootRouterBOOT, FormatELF, []MHz{400}, false},
		{"rb750g", "mips", "softfloat", 64, BootRouterBOOT, FormatELF, []MHz{680}, false},
		{"wrt54g-v3", "mipsle", "softfloat", 16, BootCFE, FormatELF, []MHz{192, 200, 216, 228, 240, 252, 264, 272, 280, 300}, false},
		{"tl-mr3420", "mips", "softfloat", 32, BootUBootSerial, FormatUImage, nil, true},
		{"rb1100", "ppc", "", 512, BootRouterBOOT, FormatELF, nil, true},
		{"pc-x86_64", "amd64", "", 512, BootIPXE, FormatCPIO, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Get(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if p.Arch != tt.arch || p.GOMIPS != tt.gomips || p.RAMMB != tt.ram || p.Boot != tt.boot || p.ImageFormat != tt.format || !slices.Equal(p.Clocks, tt.clocks) {
				t.Errorf("got %s %s %d MB %s %s %v", p.Arch, p.GOMIPS, p.RAMMB, p.Boot, p.ImageFormat, p.Clocks)
			}
			if !p.OnlyVirtual() {
				t.Errorf("%s claims a hardware run; none is recorded in this repository", p.Name)
			}
			err = p.Unsupported()
			if (err != nil) != tt.unsupported {
				t.Errorf("Unsupported() = %v", err)
			}
			if tt.name == "rb1100" && (!strings.Contains(err.Error(), "bootbench import") || !strings.Contains(err.Error(), "PowerPC")) {
				t.Errorf("refusal does not say why and what works: %v", err)
			}
			if tt.unsupported && !strings.Contains(err.Error(), "what works: ") {
				t.Errorf("refusal does not say why and what works: %v", err)
			}
		})
	}
}

func TestTestedNamesVirtualBoards(t *testing.T) {
	ps := []Profile{
		{Name: "qemu-mipsel", Virtual: &Virtual{}},
		{Name: "rb", Tested: Tested{Virtual: []VirtualTest{{Board: "qemu-mipsel", Covers: "x"}}}},
	}
	if err := checkTested(ps); err != nil {
		t.Fatal(err)
	}
	ps[1].Tested.Virtual[0].Board = "rb"
	if err := checkTested(ps); err == nil || !strings.Contains(err.Error(), `"rb", which is no virtual board`) {
		t.Errorf("err = %v", err)
	}
}

func TestGetUnknown(t *testing.T) {
	_, err := Get("rb9999")
	if err == nil || !strings.Contains(err.Error(), Default) {
		t.Fatalf("error %v should list the known boards", err)
	}
}

// TestPiTwinProfile: the rpi4b-twin is the Pi 4's netboot and its
// config.txt clock, on the Pi 4's core, with a serial its ROM asks under.
func TestPiTwinProfile(t *testing.T) {
	p, err := Get("rpi4b-twin")
	if err != nil {
		t.Fatal(err)
	}
	v := p.Virtual
	if p.Boot != BootRaspberryPi || p.ClockMethod != ClockConfigTxt || !slices.Equal(p.Clocks, []MHz{1000, 500, 250}) || p.DefaultClock != 1000 || p.Arch != "arm64" {
		t.Errorf("boot %s, clock %s %v default %d, arch %s", p.Boot, p.ClockMethod, p.Clocks, p.DefaultClock, p.Arch)
	}
	if v == nil || v.ROM != "raspberrypi" || v.Serial != "bb0004b1" || !slices.Contains(v.Args, "cortex-a72") || v.QEMU != "qemu-system-aarch64" {
		t.Errorf("virtual: %+v", v)
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"typo field", "name: x\narch: amd64\nram: 5\n", "field ram not found"},
		{"no arch", "name: x\n", "needs name and arch"},
		{"bad default clock", "name: x\narch: arm\nboot: ipxe\nclock_method: manual\nclocks: [680]\ndefault_clock: 800\n", "not among"},
		{"bad mac", "name: x\narch: arm\nboot: ipxe\nvirtual: {mac: zz}\n", "bad MAC"},
		{"no boot method", "name: x\narch: arm\n", "no boot method"},
		{"unknown boot method", "name: x\narch: arm\nboot: floppy\n", `unknown boot method "floppy"`},
		{"unknown clock method", "name: x\narch: arm\nboot: ipxe\nclock_method: turbo\n", `unknown clock method "turbo"`},
		{"unknown image format", "name: x\narch: arm\nboot: ipxe\nimage_format: zip\n", `unknown image format "zip"`},
		{"clocks without method", "name: x\narch: arm\nboot: ipxe\nclocks: [680]\n", "no clock_method"},
		{"cmdline without template", "name: x\narch: arm\nboot: ipxe\nclock_method: cmdline\n", "{mhz}"},
		{"real board never tested", "name: x\narch: mips\nboot: routerboot-bootp\n", "say where it was tested"},
		{"virtual stand-in without covers", "name: x\narch: mips\nboot: routerboot-bootp\ntested: {virtual: [{board: qemu-mipsel}]}\n", "needs board and covers"},
		{"works without not_supported", "name: x\narch: ppc\nboot: routerboot-bootp\nworks: [import]\ntested: {hardware: [one]}\n", "give not_supported too"},
		{"serial method without steps", "name: x\narch: arm\nboot: uboot-serial\n", "needs console_steps"},
		{"cfe without steps", "name: x\narch: mipsle\nboot: cfe\n", "needs console_steps"},
		{"kernel built and Debian's", "name: x\narch: mipsle\nboot: ipxe\nkernel: {build: malta-le, debian_arch: mipsel, flavour: 4kc-malta}\nvirtual: {mac: '52:54:00:00:00:01'}\n", "give build, or debian_arch and flavour, not both"},
		{"Pi ROM without serial", "name: x\narch: arm64\nboot: rpi-netboot\nvirtual: {mac: '52:54:00:00:00:01', rom: raspberrypi}\n", `virtual serial "": a Raspberry Pi's serial is 8 lower-case hex digits`},
		{"Pi serial in capitals", "name: x\narch: arm64\nboot: rpi-netboot\nvirtual: {mac: '52:54:00:00:00:01', rom: raspberrypi, serial: BB0004B1}\n", "8 lower-case hex digits"},
		{"Pi serial too short", "name: x\narch: arm64\nboot: rpi-netboot\nvirtual: {mac: '52:54:00:00:00:01', rom: raspberrypi, serial: 4b1}\n", "8 lower-case hex digits"},
		{"step saying two things", "name: x\narch: arm\nboot: uboot-serial\nconsole_steps: [{expect: '=> ', send: dhcp}]\n", "step 1: give one of"},
		{"empty step", "name: x\narch: arm\nboot: uboot-serial\nconsole_steps: [{timeout: 5s}]\n", "step 1: give one of"},
	}
	for _, tt := range tests {
		if _, err := Parse([]byte(tt.yaml)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestIcountShift(t *testing.T) {
	for mhz, want := range map[MHz]int{1000: 0, 500: 1, 250: 2} {
		if got, err := IcountShift(mhz); err != nil || got != want {
			t.Errorf("IcountShift(%d) = %d, %v", mhz, got, err)
		}
	}
	if _, err := IcountShift(680); err == nil {
		t.Error("680 MHz accepted as a virtual clock")
	}
}

func TestCheckClock(t *testing.T) {
	fixed := Profile{Name: "rb450"}
	listed := Profile{Name: "rb450g", ClockMethod: ClockManual, Clocks: []MHz{680, 800}, DefaultClock: 680}
	any := Profile{Name: "pc-x86_64", ClockMethod: ClockCPUFreq}
	tests := []struct {
		p    Profile
		mhz  MHz
		want string // "" = accepted
	}{
		{fixed, 0, ""},
		{fixed, 300, "runs at one clock"},
		{listed, 800, ""},
		{listed, 680, ""},
		{listed, 750, "no clock setting 750 MHz (settings: 680, 800 MHz)"},
		{any, 800, ""},
		{any, 0, ""},
	}
	for _, tt := range tests {
		err := tt.p.CheckClock(tt.mhz)
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s at %v: %v, want %q", tt.p.Name, tt.mhz, err, tt.want)
		}
	}
}

// TestParseMHz: a clock as a user types it, 0 being the board's default.
func TestParseMHz(t *testing.T) {
	for in, want := range map[string]MHz{"800": 800, " 680 ": 680, "800MHz": 800, "680mhz": 680, "0": 0} {
		if got, err := ParseMHz(in); err != nil || got != want {
			t.Errorf("ParseMHz(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "fast", "-5", "800 GHz"} {
		if _, err := ParseMHz(bad); err == nil || err.Error() != fmt.Sprintf("%q is not a clock in MHz", bad) {
			t.Errorf("ParseMHz(%q): %v", bad, err)
		}
	}
}

// TestConsoleStepTimeout: an expect without a timeout waits the default.
func TestConsoleStepTimeout(t *testing.T) {
	p, err := Parse([]byte("name: x\narch: arm\nboot: uboot-serial\ntested: {hardware: [one]}\nconsole_steps: [{expect: '=> '}, {send: dhcp}, {expect: '=> ', timeout: 5s}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := []time.Duration{p.ConsoleSteps[0].Timeout, p.ConsoleSteps[1].Timeout, p.ConsoleSteps[2].Timeout}; got[0] != defaultStepTimeout || got[1] != 0 || got[2] != 5*time.Second {
		t.Errorf("timeouts %v", got)
	}
}
