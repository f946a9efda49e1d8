// Package boards holds the board profiles: what every board of a model shares
// (architecture, RAM, boot method, console, clock settings and how they are
// applied, timeouts). Profiles are data, shipped in profiles/*.yaml; the code
// that acts on them lives in harness and netboot.
package boards

import (
	"embed"
	"fmt"
	"io/fs"
	"net"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

//go:embed profiles/*.yaml
var profileFS embed.FS

// Profile is one board model.
type Profile struct {
	Name         string        `yaml:"name"`
	Description  string        `yaml:"description"`
	Arch         string        `yaml:"arch"`
	GOARM        string        `yaml:"goarm"`
	GOMIPS       string        `yaml:"gomips"`
	RAMMB        int           `yaml:"ram_mb"`
	Boot         string        `yaml:"boot"` // ipxe, pxelinux, uboot-dhcp, uboot-serial, routerboot-bootp, qemu-direct
	ImageFormat  string        `yaml:"image_format"`
	Console      string        `yaml:"console"` // kernel console device, e.g. ttyS0
	Baud         int           `yaml:"baud"`
	BootTimeout  time.Duration `yaml:"boot_timeout"`
	RunTimeout   time.Duration `yaml:"run_timeout"`
	ClockMethod  string        `yaml:"clock_method"` // cpufreq, cmdline, bootloader, qemu-icount, manual
	Clocks       []int         `yaml:"clocks"`       // MHz settings the board offers
	DefaultClock int           `yaml:"default_clock"`
	Virtual      *Virtual      `yaml:"virtual"`
}

// Virtual describes a QEMU board.
type Virtual struct {
	QEMU          string   `yaml:"qemu"`
	Args          []string `yaml:"args"`
	NIC           string   `yaml:"nic"`
	MAC           string   `yaml:"mac"`
	SeaBIOSSerial bool     `yaml:"seabios_serial"`
	UBootEnv      []string `yaml:"uboot_env"`
	Kernel        struct {
		DebianArch string `yaml:"debian_arch"`
		Flavour    string `yaml:"flavour"`
	} `yaml:"kernel"`
}

// Default is the board used when none is named.
const Default = "qemu-x86_64"

// All returns every shipped profile, sorted by name.
func All() ([]Profile, error) {
	files, err := fs.Glob(profileFS, "profiles/*.yaml")
	if err != nil {
		return nil, err
	}
	var ps []Profile
	for _, f := range files {
		b, err := profileFS.ReadFile(f)
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
	return ps, nil
}

// Get returns the named profile.
func Get(name string) (Profile, error) {
	ps, err := All()
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
	if p.Virtual != nil {
		if _, err := net.ParseMAC(p.Virtual.MAC); err != nil {
			return p, fmt.Errorf("profile %s: bad MAC: %w", p.Name, err)
		}
	}
	if p.DefaultClock != 0 && !p.HasClock(p.DefaultClock) {
		return p, fmt.Errorf("profile %s: default clock %d MHz is not among its clocks %v", p.Name, p.DefaultClock, p.Clocks)
	}
	return p, nil
}

// HasClock reports whether the board offers mhz.
func (p Profile) HasClock(mhz int) bool {
	for _, c := range p.Clocks {
		if c == mhz {
			return true
		}
	}
	return false
}

// IcountShift is the QEMU -icount shift that gives mhz on a virtual board:
// shift N runs the guest at 1000/2^N MHz of virtual time.
func IcountShift(mhz int) (int, error) {
	for s := 0; s <= 10; s++ {
		if 1000>>s == mhz {
			return s, nil
		}
	}
	return 0, fmt.Errorf("%d MHz is not a virtual clock (1000, 500, 250, … MHz)", mhz)
}
