package serialctl

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/bootbench/bootbench/boards"
)

// clockRule reads the CPU clock a firmware announces in its banner.
type clockRule struct {
	re   *regexp.Regexp // its first group is the figure
	unit float64        // MHz per unit of the figure
}

// clockRules are the banner lines that carry the clock the firmware set,
// one per dialect; each is tested against a published console.
var clockRules = []clockRule{
	// MikroTik RouterBOOT, every version: "CPU frequency: 680 MHz".
	{regexp.MustCompile(`^CPU frequency:\s*(\d+)\s*MHz\b`), 1},
	// Broadcom CFE (WRT54G and its kin): "CPU type 0x29007: 216MHz",
	// the clock it set from NVRAM's clkfreq.
	{regexp.MustCompile(`^CPU type 0x[0-9A-Fa-f]+:\s*(\d+)\s*MHz\b`), 1},
	// Mainline U-Boot on SoCs whose clock code reports it:
	// "CPU:   Freescale i.MX51 rev3.0 at 800 MHz".
	{regexp.MustCompile(`^CPU:\s.*\bat (\d+(?:\.\d+)?)\s*MHz\b`), 1},
	{regexp.MustCompile(`^CPU:\s.*\bat (\d+(?:\.\d+)?)\s*GHz\b`), 1000},
}

// AnnouncedClock reads the CPU clock a firmware banner line announces:
// RouterBOOT's "CPU frequency: 680 MHz", CFE's "CPU type 0x29008:
// 200MHz", U-Boot's "CPU: ... at 800 MHz". The line is taken as a
// console delivers it (control sequences and surrounding space do not
// matter). Firmware that prints no clock (U-Boot 1.1.4 on Atheros, the
// Raspberry Pi 4's bootloader) gives nothing.
func AnnouncedClock(line []byte) (boards.MHz, bool) {
	for _, s := range firmwareReadings(Printable(line)) {
		for _, r := range clockRules {
			m := r.re.FindStringSubmatch(s)
			if m == nil {
				continue
			}
			v, err := strconv.ParseFloat(m[1], 64)
			if err != nil || v <= 0 {
				return 0, false
			}
			return boards.MHz(math.Round(v * r.unit)), true
		}
	}
	return 0, false
}

// firmwareReadings are the texts of a printable line a firmware's rules
// are tried on: after a Raspberry Pi bootloader's uptime, and as it is.
// (Firmware lines carry no kernel timestamp.)
func firmwareReadings(s string) []string {
	if loc := piUptime.FindStringIndex(s); loc != nil {
		return []string{s[loc[1]:], s}
	}
	return []string{s}
}

// bogoRules read a kernel's BogoMIPS: its calibration line at boot
// ("Calibrating delay loop... 452.19 BogoMIPS (lpj=2260992)", "Calibrating
// delay loop (skipped), value calculated using timer frequency.. 108.00
// BogoMIPS (lpj=216000)") and /proc/cpuinfo's "BogoMIPS : 266.24" (x86
// writes it in lower case). The SMP total ("Total of 4 processors
// activated (432.00 BogoMIPS)") is the sum of the cores, not one core's.
var bogoRules = []*regexp.Regexp{
	regexp.MustCompile(`^Calibrating delay.*?(\d+\.\d+) BogoMIPS\b`),
	regexp.MustCompile(`^(?i:bogomips)\s*:\s*(\d+(?:\.\d+)?)\s*$`),
}

// BogoMIPS reads the BogoMIPS a kernel line reports, as printed ("452.19"):
// the figure boards.MHzFromBogoMIPS takes.
func BogoMIPS(line []byte) (string, bool) {
	for _, t := range readings(Printable(line)) {
		for _, re := range bogoRules {
			if m := re.FindStringSubmatch(t); m != nil {
				return m[1], true
			}
		}
	}
	return "", false
}

// NetbootKind is what a netboot line says about the netboot.
type NetbootKind int

const (
	// NetStep is a step on the way: a request sent, an address got, a
	// file asked for.
	NetStep NetbootKind = iota + 1
	// NetLoaded is a file or image that arrived whole.
	NetLoaded
	// NetMissing is a file the server does not have; the loader may go
	// on to another (a Raspberry Pi asks for optional files, U-Boot's pxe
	// for several config names).
	NetMissing
	// NetFailed is the netboot failing: no answer, a transfer given up.
	NetFailed
	// NetLocal is the firmware loading its kernel from its own storage
	// (NAND, flash) instead of the network.
	NetLocal
)

var netbootKindNames = map[NetbootKind]string{
	NetStep: "step", NetLoaded: "loaded", NetMissing: "missing", NetFailed: "failed", NetLocal: "local",
}

func (k NetbootKind) String() string { return netbootKindNames[k] }

// A NetbootStep is one netboot line classified: its kind, and the line as
// a person reads it (long runs of progress dots shortened).
type NetbootStep struct {
	Kind NetbootKind
	Text string
}

// netRule recognises one kind of netboot line; kind decides the step's
// kind from the regexp's submatches.
type netRule struct {
	re   *regexp.Regexp
	kind func(m []string) NetbootKind
}

func always(k NetbootKind) func([]string) NetbootKind { return func([]string) NetbootKind { return k } }

// okOr reads an outcome word: "OK"/"ok" is ok, nothing (or the start of
// "ok", cut by the next line) is a step still under way, anything else
// is fail.
func okOr(i int, ok, fail NetbootKind) func([]string) NetbootKind {
	return func(m []string) NetbootKind {
		w := strings.ToLower(leadingLetters(m[i]))
		switch {
		case w == "ok":
			return ok
		case w == "" || w == "o":
			return NetStep
		}
		return fail
	}
}

func leadingLetters(s string) string {
	for i, r := range s {
		if !unicode.IsLetter(r) {
			return s[:i]
		}
	}
	return s
}

// netRules are matched against the start of a line, one block per
// firmware; each is tested against a published console in testdata/.
var netRules = []netRule{
	// MikroTik RouterBOOT: "trying bootp protocol... OK" (or dots, then
	// "failed"), "Got IP address: A", "resolved mac address M", "transfer
	// started ..... transfer ok, time=2.03s"; "loading kernel from nand...
	// OK" is its own storage.
	{regexp.MustCompile(`^trying (?:bootp|dhcp) protocol[.…\s]*(\S*)`), okOr(1, NetStep, NetFailed)},
	{regexp.MustCompile(`^(?:Got IP address|Gateway|resolved mac address)\b`), always(NetStep)},
	{regexp.MustCompile(`^transfer started[.…\s]*(?:transfer (\S+))?`), okOr(1, NetLoaded, NetFailed)},
	{regexp.MustCompile(`^loading kernel(?: from nand)?[.…\s]*(\S*)`), okOr(1, NetLocal, NetStep)},
	// Broadcom CFE: "Device eth0:  hwaddr ..., ipaddr A" (ifconfig -auto),
	// "Loader:elf Filesys:tftp Dev:eth0 File:HOST:FILE", "Loading:
	// 0x80001000/3403776 ... Entry address is 0x80001000" or "Loading: ...
	// 3560 bytes read"; Filesys:raw on flash is its own storage; "Could
	// not load HOST:FILE: Timeout occured".
	{regexp.MustCompile(`^Device eth\d+:\s+hwaddr \S+, ipaddr \S+`), always(NetStep)},
	{regexp.MustCompile(`^Loader:\S+ Filesys:tftp `), always(NetStep)},
	{regexp.MustCompile(`^Loader:\S+ Filesys:raw Dev:n?flash`), always(NetLocal)},
	{regexp.MustCompile(`^Loading: .*(?:Entry address is 0x|bytes read)`), always(NetLoaded)},
	{regexp.MustCompile(`^(?:Loading: )?Could not load `), always(NetFailed)},
	// U-Boot (1.1.4 to today): "BOOTP broadcast 1", "DHCP client bound to
	// address A", "TFTP from server S; our IP address is A", "Filename
	// 'F'.", "Bytes transferred = N (...)"; "TFTP error: 'File not found'
	// (1)"; "Retry count exceeded; starting again".
	{regexp.MustCompile(`^(?:BOOTP broadcast \d|DHCP client bound to address |TFTP from server |Filename ')`), always(NetStep)},
	{regexp.MustCompile(`^Bytes transferred = \d+`), always(NetLoaded)},
	{regexp.MustCompile(`^TFTP error: 'File not found'`), always(NetMissing)},
	{regexp.MustCompile(`^(?:TFTP error: |(?:ARP )?Retry count exceeded)`), always(NetFailed)},
	// iPXE: "Configuring (net0 52:54:00:bb:00:01)... ok", "tftp://S/F...
	// ok", "http://S/F... No such file or directory (...)".
	{regexp.MustCompile(`^Configuring \(net\d+ [^)]*\)[.\s]*(.*)`), okOr(1, NetStep, NetFailed)},
	{regexp.MustCompile(`^(?:tftp|https?)://\S*?(?:\.{3}|…)(?:\s+(.*))?$`), okOr(1, NetLoaded, NetFailed)},
	// The Raspberry Pi 4 bootloader, older ("NET_BOOT:") and newer
	// ("NETWORK:") wording: "... wait for link TFTP: 0.0.0.0", "YI_ADDR
	// A", "NET A MASK gw G tftp S", "TFTP_GET: MAC S PATH", "Read PATH
	// bytes N", "TFTP 1: file PATH not found" / "TFTP: 1: File not
	// found"; "NETBOOT init failed".
	{regexp.MustCompile(`^(?:NET_BOOT|NETWORK):? \S+ wait for link`), always(NetStep)},
	{regexp.MustCompile(`^(?:YI_ADDR:? \S|NET \S+ \S+ gw \S+ tftp \S|TFTP_GET: )`), always(NetStep)},
	{regexp.MustCompile(`^Read \S+ bytes\s+\d+`), always(NetLoaded)},
	{regexp.MustCompile(`^TFTP:? \d+: (?:file \S+ not found|File not found)`), always(NetMissing)},
	{regexp.MustCompile(`^(?:NETBOOT init failed|(?:NET_BOOT|NETWORK): failed)`), always(NetFailed)},
}

// dotRun is a firmware's progress dots, shortened when shown.
var dotRun = regexp.MustCompile(`[.…]{4,}`)

// Netboot says whether a console line is a step of a netboot, and which:
// RouterBOOT's BOOTP and TFTP, CFE's ifconfig and boot -elf, U-Boot's
// DHCP and TFTP, iPXE's downloads, the Raspberry Pi bootloader's DHCP
// and TFTP in both its wordings. A firmware's own errors that end a boot
// ("kernel out of range", PXE-E errors) are Classify's FirmwareError.
func Netboot(line []byte) (NetbootStep, bool) {
	for _, t := range firmwareReadings(Printable(line)) {
		for _, r := range netRules {
			if m := r.re.FindStringSubmatch(t); m != nil {
				if loc := kernelStamp.FindStringIndex(t); loc != nil && loc[0] > 0 {
					t = t[:loc[0]] // the kernel's first line, cutting in
				}
				return NetbootStep{Kind: r.kind(m), Text: dotRun.ReplaceAllString(t, "...")}, true
			}
		}
	}
	return NetbootStep{}, false
}

// Loader splits a Firmware mark's name into the firmware and its version:
// "RouterBOOT 2.20" is RouterBOOT, 2.20; "RPi bootloader 2020-04-16" the
// Raspberry Pi bootloader of that date; "iPXE" has no version.
func (m Mark) Loader() (name, version string) {
	i := strings.LastIndexByte(m.Name, ' ')
	if i < 0 || !versionLike.MatchString(m.Name[i+1:]) {
		return m.Name, ""
	}
	return m.Name[:i], m.Name[i+1:]
}

var versionLike = regexp.MustCompile(`^v?\d`)
