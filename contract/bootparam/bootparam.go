// Package bootparam is the contract between the host and benchinit: the
// bootbench.* parameters the host puts on the kernel command line and the
// board reads back, and the description of an external benchmark that the
// image builder leaves in the image. Both sides use this one package so
// the names cannot drift apart.
package bootparam

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"
)

// Params are what the board is told to do.
type Params struct {
	Run     string        // bootbench.run
	Bench   string        // bootbench.bench, default "speed"
	Seconds time.Duration // bootbench.seconds, per test; 0 = the benchmark's default
	Algs    []string      // bootbench.algs, comma separated
	// Reps is bootbench.reps: how many times the benchmark runs in one
	// boot, default 1. Repeating in one boot saves a netboot per sample.
	Reps int
	// ClockMHz is bootbench.clock: the CPU clock to set through cpufreq
	// before running; 0 leaves the clock alone.
	ClockMHz int
	// Timeout is bootbench.timeout, in seconds on the command line: the
	// longest one repetition may take before the board gives up on it;
	// 0 = no limit.
	Timeout time.Duration
	// Ports is bootbench.ports: the board's routed ports for the route
	// benchmark, each a MAC and the address to give it
	// ("52:54:00:bb:01:01@198.18.1.1/24,...").
	Ports []Port
}

// The route benchmark's configurations, which the host asks the board
// for by name: with and without connection tracking, with and without a
// firewall, as people bench their routers, and through a VPN tunnel that
// the board terminates.
const (
	ConfigPlain     = "plain"     // no conntrack, no firewall: forwarding alone
	ConfigFirewall  = "firewall"  // no conntrack, a stateless filter
	ConfigConntrack = "conntrack" // connections tracked, nothing filtered
	ConfigStateful  = "stateful"  // conntrack and a stateful firewall
	ConfigWireGuard = "wireguard" // the client's traffic through a WireGuard tunnel to the board
)

// RouteConfigs lists them in the order the host runs them by default.
var RouteConfigs = []string{ConfigPlain, ConfigFirewall, ConfigConntrack, ConfigStateful, ConfigWireGuard}

// Port is one routed port: the NIC with this MAC gets this address.
type Port struct {
	// MAC is the port's MAC address, lowercase and colon separated, or,
	// for a board whose inventory names its ports, the interface name
	// its kernel gives it ("eth1").
	MAC  string
	Addr string // address with prefix length, "198.18.1.1/24"
}

// DefaultSeconds is what {seconds} in a BenchSpec's argv becomes when
// bootbench.seconds is absent: openssl speed's own default, which the
// built-in suite shares.
const DefaultSeconds = 3

// Parse reads the bootbench.* parameters out of a kernel command line.
// Unknown or malformed values are ignored so that a typo leaves a board
// running the defaults and reporting them, rather than hanging at boot.
func Parse(cmdline string) Params {
	p := Params{Bench: "speed", Reps: 1}
	for _, f := range strings.Fields(cmdline) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		switch k {
		case "bootbench.run":
			p.Run = v
		case "bootbench.bench":
			p.Bench = v
		case "bootbench.seconds":
			if d, ok := seconds(v); ok {
				p.Seconds = d
			}
		case "bootbench.algs":
			p.Algs = strings.Split(v, ",")
		case "bootbench.reps":
			if n, err := strconv.Atoi(v); err == nil && n >= 1 {
				p.Reps = n
			}
		case "bootbench.clock":
			if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				p.ClockMHz = n
			}
		case "bootbench.timeout":
			if d, ok := seconds(v); ok {
				p.Timeout = d
			}
		case "bootbench.ports":
			p.Ports = parsePorts(v)
		}
	}
	return p
}

// parsePorts reads "mac@addr/len,..."; a malformed entry drops them all,
// so a board never routes with half its ports.
func parsePorts(v string) []Port {
	var ports []Port
	for _, e := range strings.Split(v, ",") {
		mac, addr, ok := strings.Cut(e, "@")
		if !ok || mac == "" || !strings.Contains(addr, "/") {
			return nil
		}
		if _, err := net.ParseMAC(mac); err == nil {
			mac = strings.ToLower(mac) // a name's case is the kernel's
		}
		ports = append(ports, Port{MAC: mac, Addr: addr})
	}
	return ports
}

// seconds parses a positive number of seconds, fractions allowed.
func seconds(v string) (time.Duration, bool) {
	s, err := strconv.ParseFloat(v, 64)
	// The upper bound keeps the conversion from overflowing: a century is
	// as good as no limit.
	if err != nil || !(s > 0) || s > 100*365*24*3600 {
		return 0, false
	}
	return time.Duration(s * float64(time.Second)), true
}

// String renders p as kernel command line parameters. Defaults are left
// out, so Parse(p.String()) gives p back for any p Parse could return.
func (p Params) String() string {
	s := []string{"bootbench.run=" + p.Run}
	if p.Bench != "" {
		s = append(s, "bootbench.bench="+p.Bench)
	}
	if p.Seconds > 0 {
		s = append(s, fmt.Sprintf("bootbench.seconds=%g", p.Seconds.Seconds()))
	}
	if len(p.Algs) > 0 {
		s = append(s, "bootbench.algs="+strings.Join(p.Algs, ","))
	}
	if p.Reps > 1 {
		s = append(s, "bootbench.reps="+strconv.Itoa(p.Reps))
	}
	if p.ClockMHz > 0 {
		s = append(s, "bootbench.clock="+strconv.Itoa(p.ClockMHz))
	}
	if p.Timeout > 0 {
		s = append(s, fmt.Sprintf("bootbench.timeout=%g", p.Timeout.Seconds()))
	}
	if len(p.Ports) > 0 {
		ports := make([]string, len(p.Ports))
		for i, pt := range p.Ports {
			ports[i] = pt.MAC + "@" + pt.Addr
		}
		s = append(s, "bootbench.ports="+strings.Join(ports, ","))
	}
	return strings.Join(s, " ")
}

// WholeSeconds is bootbench.seconds as the whole number of seconds an
// external benchmark's {seconds} gets: rounded, at least 1 (most tools
// take integer seconds, and 0 would mean "forever" or "default" to some),
// DefaultSeconds when absent.
func (p Params) WholeSeconds() int {
	if p.Seconds <= 0 {
		return DefaultSeconds
	}
	return max(1, int(math.Round(p.Seconds.Seconds())))
}

// BenchSpecPath is where an image that carries an external benchmark
// describes it.
const BenchSpecPath = "/etc/bootbench/bench.json"

// SecondsToken in a BenchSpec's argv stands for the run's
// bootbench.seconds, so the host chooses the duration per run without
// rebuilding the image.
const SecondsToken = "{seconds}"

// AlgsToken, an argument of its own in a BenchSpec's argv, stands for the
// run's bootbench.algs, one argument each, or the spec's DefaultAlgs when
// the run names none: a run asks an external benchmark for some of its
// algorithms (--algs) as it asks the built-in suite.
const AlgsToken = "{algs}"

// BenchSpec describes an external benchmark in the image, as JSON at
// BenchSpecPath: {"name":"openssl","argv":["/bin/openssl","speed",...]}.
type BenchSpec struct {
	// Name is what bootbench.bench must say for the board to run it, so
	// an image never runs a benchmark the host did not ask for.
	Name string `json:"name"`
	// Argv is the command, absolute path first (the board has no shell
	// and no PATH search worth relying on). Arguments may hold
	// SecondsToken, and one may be AlgsToken.
	Argv []string `json:"argv"`
	// DefaultAlgs stand for AlgsToken when the run names no algorithms.
	DefaultAlgs []string `json:"default_algs,omitempty"`
}

// ParseBenchSpec reads a BenchSpec and checks it can be run.
func ParseBenchSpec(data []byte) (BenchSpec, error) {
	var s BenchSpec
	if err := json.Unmarshal(data, &s); err != nil {
		return BenchSpec{}, fmt.Errorf("bench spec: %w", err)
	}
	if err := s.Validate(); err != nil {
		return BenchSpec{}, err
	}
	return s, nil
}

// Validate reports what makes s unusable: the image builder calls it
// before writing the file, the board after reading it.
func (s BenchSpec) Validate() error {
	switch {
	case s.Name == "":
		return errors.New("bench spec: no name")
	case s.Name == "speed":
		return errors.New(`bench spec: "speed" is the built-in suite's name`)
	case strings.ContainsAny(s.Name, " \t\n"):
		// It must fit in one kernel command line parameter.
		return fmt.Errorf("bench spec: name %q has white space", s.Name)
	case len(s.Argv) == 0 || s.Argv[0] == "":
		return fmt.Errorf("bench spec %q: no command", s.Name)
	case !strings.HasPrefix(s.Argv[0], "/"):
		return fmt.Errorf("bench spec %q: command %q is not an absolute path", s.Name, s.Argv[0])
	}
	return nil
}

// Command is s.Argv with SecondsToken replaced, wherever it occurs in an
// argument ("-t", "{seconds}" or "--time={seconds}"), by p.WholeSeconds(),
// and an AlgsToken argument by p.Algs (or s.DefaultAlgs), one each.
func (s BenchSpec) Command(p Params) []string {
	secs := strconv.Itoa(p.WholeSeconds())
	algs := p.Algs
	if len(algs) == 0 {
		algs = s.DefaultAlgs
	}
	argv := make([]string, 0, len(s.Argv)+len(algs))
	for _, a := range s.Argv {
		if a == AlgsToken {
			argv = append(argv, algs...)
			continue
		}
		argv = append(argv, strings.ReplaceAll(a, SecondsToken, secs))
	}
	return argv
}
