// Package boards holds the board profiles: what every board of a model shares
// (architecture, RAM, boot method, console, clock settings and how they are
// applied, timeouts). Profiles are data, shipped in profiles/*.yaml; the code
// that acts on them lives in harness and netboot.
package boards

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/bootbench/bootbench/benchmark"
)

//go:embed profiles/*.yaml
var profileFS embed.FS

// Profile is one board model.
type Profile struct {
	Name        string      `yaml:"name"`
	Description string      `yaml:"description"`
	Arch        string      `yaml:"arch"`
	GOARM       string      `yaml:"goarm"`
	GOMIPS      string      `yaml:"gomips"`
	RAMMB       int         `yaml:"ram_mb"`
	Boot        BootMethod  `yaml:"boot"`
	ImageFormat ImageFormat `yaml:"image_format"`
	Console     string      `yaml:"console"` // kernel console device, e.g. ttyS0
	Baud        int         `yaml:"baud"`
	// Kernel is the Debian kernel package the board boots when the
	// inventory names no kernel of its own.
	Kernel      DebianKernel  `yaml:"kernel"`
	BootTimeout time.Duration `yaml:"boot_timeout"`
	RunTimeout  time.Duration `yaml:"run_timeout"`
	// ClockMethod is how a requested clock is applied; empty for a board
	// that runs at one clock.
	ClockMethod ClockMethod `yaml:"clock_method"`
	// Clocks are the settings the board offers. Empty with a method set
	// means any clock the board accepts (cpufreq finds out and reports).
	Clocks       Clocks `yaml:"clocks"`
	DefaultClock MHz    `yaml:"default_clock"`
	// FixedClock is the one clock of a model that has no clock setting
	// (no ClockMethod), where the model has one clock (the RB450's
	// AR7130 runs at 300 MHz): output imported for such a board is held
	// to it, and it is what --clock 0 means there. 0: not known.
	FixedClock MHz `yaml:"fixed_clock"`
	// ClockCmdline is the kernel parameter that sets the clock for the
	// cmdline method, with {mhz} for the setting: "cpu_mhz={mhz}".
	ClockCmdline string `yaml:"clock_cmdline"`
	// KernelModules are modules of the profile's Debian kernel that the
	// image carries and benchinit loads before it sets the clock: a
	// Raspberry Pi's cpufreq driver is a module in Debian's arm64 kernel
	// (raspberrypi-cpufreq, which starts cpufreq-dt).
	KernelModules []string `yaml:"kernel_modules"`
	// KernelParams are kernel parameters every run of this board model
	// needs: "nowait" for QEMU's Malta on a virtual clock, whose idle
	// loop's WAIT hangs early userspace now and then.
	KernelParams string `yaml:"kernel_params"`
	// BogoMIPSPerMHz lets the host check a clock from the BogoMIPS the
	// board reports where it has no cpufreq: a MIPS 24K/74K core
	// reports BogoMIPS of about 2/3 of its clock in MHz, for example.
	BogoMIPSPerMHz float64 `yaml:"bogomips_per_mhz"`
	// IPXE names the iPXE binaries a firmware PXE client is chainloaded
	// into, by file name (undionly.kpxe for BIOS, ipxe.efi for x86-64
	// UEFI); a name not given is Debian's, from /usr/lib/ipxe.
	IPXE map[string]string `yaml:"ipxe"`
	// ConsoleSteps drive the bootloader over the console from power-on
	// (boot methods uboot-serial and cfe; pxelinux where the bootloader
	// does not run pxe by itself): wait for its text, type its commands.
	ConsoleSteps []ConsoleStep `yaml:"console_steps"`
	Virtual      *Virtual      `yaml:"virtual"`

	// Tested says where this profile's path has run: required for every
	// real board bootbench supports, so that nobody mistakes a profile for
	// a proven one.
	Tested Tested `yaml:"tested"`
	// NotSupported, when set, is why bootbench cannot run this model
	// (e.g. no Go port for its CPU): run refuses it with this reason and
	// Works, before anything is built or powered.
	NotSupported string `yaml:"not_supported"`
	// Works lists what bootbench does for this model all the same.
	Works []string `yaml:"works"`
	// Firmware, when set, says the model runs benchmarks under its own
	// firmware (an inventory board with image: none), and which: the way
	// to run a model bootbench cannot netboot (RouterOS on an RB1100).
	Firmware *FirmwareUse `yaml:"firmware"`
	// RaspberryPi is what a Raspberry Pi's firmware loads (boot method
	// rpi-netboot).
	RaspberryPi *RaspberryPi `yaml:"raspberry_pi"`
	// ClockLimits are the model's documented clock limits, checked
	// before power-on; nil where the profile knows none.
	ClockLimits *ClockLimits `yaml:"clock_limits"`
}

// FirmwareUse is how a model is benchmarked under its own firmware.
type FirmwareUse struct {
	Name       string   `yaml:"name"`       // the firmware: "RouterOS"
	Benchmarks []string `yaml:"benchmarks"` // what runs under it: the host-driven ones
	// Example is an inventory board entry for the model, as a user
	// would write it.
	Example string `yaml:"example"`
}

// Tested records where a profile has been exercised.
type Tested struct {
	// Hardware lists runs on real boards of this model ("2026-05 RB450G
	// rev. 2, bench of ..."); empty when none has run on one.
	Hardware []string `yaml:"hardware"`
	// Virtual lists the virtual boards whose runs go through part of this
	// profile's path, and which part.
	Virtual []VirtualTest `yaml:"virtual"`
}

// VirtualTest is one virtual board standing in for part of a real one.
type VirtualTest struct {
	Board  string `yaml:"board"`  // a virtual profile
	Covers string `yaml:"covers"` // what of this profile's path it runs
}

// OnlyVirtual says whether a real board's profile has never run on
// hardware.
func (p Profile) OnlyVirtual() bool { return p.Virtual == nil && len(p.Tested.Hardware) == 0 }

// ConsoleStep is one step of driving a bootloader over its console: wait
// for text (expect, within timeout), or type a command (send, then Enter),
// or type keys as they are (key, e.g. " " to stop an autoboot); in an
// inventory's route_configs also ask the operator to do something by hand
// and press Enter (manual; profiles have none). In send,
// {server} is the bench's address, {ip} the board's, {board} the board's
// name and {file} the boot file the board's dialect gets (U-Boot's
// ${...} variables are U-Boot's).
type ConsoleStep struct {
	Expect  string        `yaml:"expect"`
	Send    string        `yaml:"send"`
	Key     string        `yaml:"key"`
	Manual  string        `yaml:"manual"`
	Timeout time.Duration `yaml:"timeout"`
}

// defaultStepTimeout is how long an expect step waits when the profile
// does not say.
const defaultStepTimeout = 30 * time.Second

// DebianKernel names a Debian kernel package: linux-image-<abi>-<flavour>
// for architecture debian_arch, fetched into the cache, never installed;
// or, with Build, a kernel bootbench builds from Debian's Linux source for
// a board whose Debian kernel does not fit it ("malta-le": the 16 MB
// WRT54G's twin cannot hold Debian's 9.7 MiB Malta kernel).
type DebianKernel struct {
	DebianArch string `yaml:"debian_arch"`
	Flavour    string `yaml:"flavour"`
	Build      string `yaml:"build"`
}

// Named says whether the profile names a kernel at all.
func (k DebianKernel) Named() bool { return k.Flavour != "" || k.Build != "" }

// Virtual describes a QEMU board.
type Virtual struct {
	QEMU string   `yaml:"qemu"`
	Args []string `yaml:"args"`
	NIC  string   `yaml:"nic"`
	// PortNIC is the -device model of the route benchmark's two extra
	// NICs when it is not NIC (a board whose boot NIC is its machine's
	// own: Malta's PCnet, set up by a boot ROM).
	PortNIC       string   `yaml:"port_nic"`
	MAC           string   `yaml:"mac"`
	SeaBIOSSerial bool     `yaml:"seabios_serial"`
	UBootEnv      []string `yaml:"uboot_env"`
	// ROM is a boot ROM the virtual board has instead of firmware in QEMU:
	// "routerboot" does what MikroTik's RouterBOOT does on the network,
	// "cfe" what Broadcom's CFE does, "raspberrypi" what a Raspberry Pi
	// 4's EEPROM bootloader and firmware do (see vbench).
	ROM string `yaml:"rom"`
	// Serial is the board's serial number where its ROM tells one: a
	// Raspberry Pi's 8 lower-case hex digits, under which its boot ROM
	// asks for its files by TFTP ("raspberrypi").
	Serial string `yaml:"serial"`
	// AddCmdlineArea gives the board's kernel a command line area
	// (OpenWrt's CMDLINE:) in the single ELF when it has none, for a ROM
	// that reads it on the kernel's behalf.
	AddCmdlineArea bool `yaml:"add_cmdline_area"`
	// Pflash are firmware images QEMU maps as flash, in order: the first
	// read-only (the firmware's code), the others copied for each boot (its
	// variables), as OVMF needs.
	Pflash []string `yaml:"pflash"`
}

// checkSerial refuses a Raspberry Pi ROM without the serial it asks
// under, and a serial that is not one a Pi reports.
func (v *Virtual) checkSerial() error {
	if v.ROM != "raspberrypi" && v.Serial == "" {
		return nil
	}
	if !piSerial(v.Serial) {
		return fmt.Errorf("virtual serial %q: a Raspberry Pi's serial is 8 lower-case hex digits (e.g. bb0004b1)", v.Serial)
	}
	return nil
}

// piSerial says whether s is a Raspberry Pi serial number as its boot
// ROM prefixes TFTP paths with it: 8 lower-case hex digits.
func piSerial(s string) bool {
	if len(s) != 8 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Default is the board used when none is named.
const Default = "qemu-x86_64"

// All returns every shipped profile, sorted by name. The profiles share
// their slices and maps with every other caller's: read them, do not
// change them in place.
func All() ([]Profile, error) {
	ps, err := profiles()
	if err != nil {
		return nil, err
	}
	return slices.Clone(ps), nil
}

// profiles are the shipped profiles, parsed once: every board lookup used to
// parse all of them again (1.7 ms each; an inventory of 20,000 boards took
// 34 s to load).
var profiles = sync.OnceValues(func() ([]Profile, error) { return parseAll(profileFS) })

// parseAll reads every profiles/*.yaml of fsys: a board model is one file
// there and nothing else names it.
func parseAll(fsys fs.FS) ([]Profile, error) {
	files, err := fs.Glob(fsys, "profiles/*.yaml")
	if err != nil {
		return nil, err
	}
	var ps []Profile
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		p, err := Parse(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	if err := checkTested(ps); err != nil {
		return nil, err
	}
	return ps, nil
}

// Get returns the named profile.
func Get(name string) (Profile, error) {
	ps, err := profiles()
	if err != nil {
		return Profile{}, err
	}
	var names []string
	for _, p := range ps {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Profile{}, fmt.Errorf("unknown board %q (known: %s)", name, strings.Join(names, ", "))
}

// Parse reads and checks one profile.
func Parse(b []byte) (Profile, error) {
	var p Profile
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("parse profile: %w", err)
	}
	if p.Name == "" || p.Arch == "" {
		return p, fmt.Errorf("profile needs name and arch")
	}
	if p.Baud == 0 {
		p.Baud = 115200
	}
	if p.BootTimeout == 0 {
		p.BootTimeout = 3 * time.Minute
	}
	if p.RunTimeout == 0 {
		p.RunTimeout = 10 * time.Minute
	}
	if p.Boot == "" {
		return p, fmt.Errorf("profile %s: no boot method", p.Name)
	}
	if p.ImageFormat == "" {
		p.ImageFormat = FormatCPIO
	}
	if p.Virtual != nil {
		if _, err := net.ParseMAC(p.Virtual.MAC); err != nil {
			return p, fmt.Errorf("profile %s: bad MAC: %w", p.Name, err)
		}
		if err := p.Virtual.checkSerial(); err != nil {
			return p, fmt.Errorf("profile %s: %w", p.Name, err)
		}
	}
	if err := p.checkSteps(); err != nil {
		return p, err
	}
	if k := p.Kernel; k.Build != "" && (k.Flavour != "" || k.DebianArch != "") {
		return p, fmt.Errorf("profile %s: kernel: give build, or debian_arch and flavour, not both", p.Name)
	}
	if len(p.Clocks) > 0 && p.ClockMethod == "" {
		return p, fmt.Errorf("profile %s: clocks %v but no clock_method to set them", p.Name, p.Clocks)
	}
	if p.FixedClock != 0 && p.ClockMethod != "" {
		return p, fmt.Errorf("profile %s: fixed_clock is for a model with one clock; clock_method %s sets clocks", p.Name, p.ClockMethod)
	}
	if want, ok := firmwareClockBoot[p.ClockMethod]; ok && p.Boot != want {
		return p, fmt.Errorf("profile %s: clock_method %s is typed into %s's firmware; it needs boot %s", p.Name, p.ClockMethod, want, want)
	}
	if p.ClockMethod.SetInFirmware() && len(p.Clocks) == 0 {
		return p, fmt.Errorf("profile %s: clock_method %s needs the clocks its firmware offers (clocks: [...])", p.Name, p.ClockMethod)
	}
	if p.ClockMethod == ClockCmdline && !strings.Contains(p.ClockCmdline, "{mhz}") {
		return p, fmt.Errorf("profile %s: clock_method cmdline needs clock_cmdline with {mhz}", p.Name)
	}
	if p.DefaultClock != 0 && len(p.Clocks) > 0 && !slices.Contains(p.Clocks, p.DefaultClock) {
		return p, fmt.Errorf("profile %s: default clock %s is not among its clocks %v", p.Name, p.DefaultClock, p.Clocks)
	}
	if p.Virtual == nil && p.NotSupported == "" && len(p.Tested.Hardware) == 0 && len(p.Tested.Virtual) == 0 {
		return p, fmt.Errorf("profile %s: say where it was tested (tested.hardware, or tested.virtual with the virtual boards that stand in for it)", p.Name)
	}
	for _, v := range p.Tested.Virtual {
		if v.Board == "" || v.Covers == "" {
			return p, fmt.Errorf("profile %s: each tested.virtual entry needs board and covers", p.Name)
		}
	}
	if f := p.Firmware; f != nil && (f.Name == "" || len(f.Benchmarks) == 0 || f.Example == "") {
		return p, fmt.Errorf("profile %s: firmware needs name, benchmarks and example", p.Name)
	}
	if err := p.checkRaspberryPi(); err != nil {
		return p, err
	}
	if p.NotSupported == "" && len(p.Works) > 0 {
		return p, fmt.Errorf("profile %s: works lists what works despite not_supported; give not_supported too", p.Name)
	}
	return p, nil
}

// checkTested makes every tested.virtual entry name a virtual profile.
func checkTested(ps []Profile) error {
	virtual := map[string]bool{}
	for _, p := range ps {
		if p.Virtual != nil {
			virtual[p.Name] = true
		}
	}
	for _, p := range ps {
		for _, v := range p.Tested.Virtual {
			if !virtual[v.Board] {
				return fmt.Errorf("profile %s: tested.virtual names %q, which is no virtual board", p.Name, v.Board)
			}
		}
	}
	return nil
}

// checkSteps refuses console steps that say nothing or two things, and a
// method driven over the console without them.
func (p *Profile) checkSteps() error {
	if (p.Boot == BootUBootSerial || p.Boot == BootCFE) && len(p.ConsoleSteps) == 0 {
		return fmt.Errorf("profile %s: boot method %s needs console_steps (expect/send) to drive the bootloader", p.Name, p.Boot)
	}
	for i := range p.ConsoleSteps {
		st := &p.ConsoleSteps[i]
		n := 0
		for _, f := range []string{st.Expect, st.Send, st.Key, st.Manual} {
			if f != "" {
				n++
			}
		}
		if n != 1 || st.Manual != "" {
			return fmt.Errorf("profile %s: console step %d: give one of expect, send or key", p.Name, i+1)
		}
		if st.Expect != "" && st.Timeout == 0 {
			st.Timeout = defaultStepTimeout
		}
	}
	return nil
}

// Unsupported returns the reason run refuses this model, with what works
// instead, or nil.
func (p Profile) Unsupported() error {
	if p.NotSupported == "" {
		return nil
	}
	msg := fmt.Sprintf("board model %s cannot be run by bootbench: %s", p.Name, p.NotSupported)
	if len(p.Works) > 0 {
		msg += "; what works: " + strings.Join(p.Works, "; ")
	}
	return errors.New(msg)
}

// UnsupportedFor returns why bench cannot run on board b of this model,
// or nil. A board under its own firmware (image: none) runs only what the
// host drives (the route benchmark): nothing of bootbench's runs on it. A
// model bootbench cannot netboot runs that way what its profile's
// firmware lists.
func (p Profile) UnsupportedFor(b Board, bench string) error {
	f := p.Firmware
	if b.OwnFirmware {
		bm, _ := benchmark.Lookup(bench)
		refused := !bm.HostNetworks || (f != nil && !slices.Contains(f.Benchmarks, bench))
		if refused && p.NotSupported != "" {
			return fmt.Errorf("%w; under its own firmware (image: none) it runs %s", p.Unsupported(), strings.Join(firmwareBenchmarks(f), ", "))
		}
		if refused {
			return fmt.Errorf("board %s keeps its own firmware (image: none): bootbench runs nothing on it, so only a benchmark the host drives through it runs (%s), not %s", b.Name, strings.Join(firmwareBenchmarks(f), ", "), bench)
		}
		return nil
	}
	err := p.Unsupported()
	if err != nil && f != nil && slices.Contains(f.Benchmarks, bench) {
		return fmt.Errorf("%w; the %s benchmark runs under %s, its own firmware, on an inventory board with profile %s, image: none and route_configs (see 'bootbench boards show %s')", err, bench, f.Name, p.Name, p.Name)
	}
	return err
}

// firmwareBenchmarks are the benchmarks a board under its own firmware
// can run: the host-driven ones, or those f lists.
func firmwareBenchmarks(f *FirmwareUse) []string {
	if f != nil {
		return f.Benchmarks
	}
	var names []string
	for _, n := range benchmark.Names() {
		if bm, _ := benchmark.Lookup(n); bm.HostNetworks {
			names = append(names, n)
		}
	}
	return names
}

// firmwareClockBoot is the boot method whose firmware a clock method
// talks to.
var firmwareClockBoot = map[ClockMethod]BootMethod{
	ClockRouterBOOTMenu: BootRouterBOOT,
	ClockCFENVRAM:       BootCFE,
}

// CheckClock says whether the board can be run at mhz: one of its clocks,
// or any clock where the profile lists none but has a way to set one. 0,
// the board's default, is always possible.
func (p Profile) CheckClock(mhz MHz) error {
	switch {
	case mhz == 0 || mhz == p.DefaultClock || mhz == p.FixedClock:
		return nil
	case p.ClockMethod == "" && p.FixedClock != 0:
		return fmt.Errorf("board model %s runs at one clock, %s; it has no clock settings", p.Name, p.FixedClock)
	case p.ClockMethod == "":
		return fmt.Errorf("board model %s runs at one clock; it has no clock settings", p.Name)
	case len(p.Clocks) > 0 && !slices.Contains(p.Clocks, mhz):
		return fmt.Errorf("board model %s has no clock setting %s (settings: %s)", p.Name, mhz, p.Clocks.Joined(", "))
	case mhz < 0:
		return fmt.Errorf("clock %s is not a clock", mhz)
	}
	return p.checkLimits(mhz)
}

// IcountShift is the QEMU -icount shift that gives mhz on a virtual board:
// shift N runs the guest at 1000/2^N MHz of virtual time.
func IcountShift(mhz MHz) (int, error) {
	for s := 0; s <= 10; s++ {
		if MHz(1000>>s) == mhz {
			return s, nil
		}
	}
	return 0, fmt.Errorf("%s is not a virtual clock (1000, 500, 250, … MHz)", mhz.Figure())
}
