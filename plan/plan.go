// Package plan decides what one run boots, in one place: the kernel, the
// image (an initramfs.Spec), how the image is wrapped for the board's
// loader, and the kernel command line. New is pure; Builders turn a plan
// into files. The RAM check before a run and the run itself read the same
// plan and the same files, so the check judges the bytes that boot.
//
//	job := plan.Job{Board: b, Benchmark: "speed", Clock: 680}
//	if err := job.Settle(); err != nil { ... }
//	p := plan.New(job)
//	built, err := builders.Make(ctx, p) // kernel file, image, payload
//	err = built.Fit(b.Profile.RAMMB)    // before anything is powered
package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/bootbench/bootbench/benchmark"
	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/contract/bootparam"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/results"
)

// Job is what a run measures: which board, which benchmark, at which
// clock, for how long. What it is measured with (the target, the bench
// network, the store, the builders) is the rig's.
type Job struct {
	Board     boards.Board
	Benchmark string     // a benchmark's name (benchmark.Names); "" is speed
	Clock     boards.MHz // 0: the board's default
	// AllowOvervoltage lets a clock above the model's safe limit run,
	// with the over_voltage its profile gives (config-txt boards).
	AllowOvervoltage bool
	Rep              int
	// Seconds per test and the algorithms of the suite; 0 and nil are
	// the benchmark's defaults.
	Seconds time.Duration
	Algs    []string
	// Route are the route benchmark's settings, stored with each run;
	// nil for other benchmarks.
	Route *results.RouteSettings

	// Kernel is the kernel file; "" takes the board's (inventory), else
	// the profile's Debian kernel.
	Kernel string
	Source string // bootbench module source, to build the image
	Append string // extra kernel command line parameters
	// Transport is how iPXE fetches the kernel and image; "" is HTTP.
	Transport Transport

	BootTimeout time.Duration // 0: the profile's
	RunTimeout  time.Duration // 0: the profile's
	// Retries is how many times a run that never got going, or whose
	// frames went corrupt, is booted again. Every attempt is stored.
	Retries int
}

// Transport is how iPXE fetches the kernel and image from bootbench.
type Transport string

const (
	// HTTP is the default: several times faster than TFTP's lock step.
	HTTP Transport = "http"
	// TFTP is for an iPXE built without HTTP.
	TFTP Transport = "tftp"
)

// ParseTransport reads a transport's name; "" is the default, HTTP.
func ParseTransport(s string) (Transport, error) {
	switch t := Transport(s); t {
	case "":
		return HTTP, nil
	case HTTP, TFTP:
		return t, nil
	}
	return "", fmt.Errorf("unknown transport %q (http or tftp)", s)
}

// Settle checks the job against its board and puts in the defaults.
func (j *Job) Settle() error {
	p := j.Board.Profile
	if err := p.CheckClock(j.Clock); err != nil {
		return err
	}
	if err := p.CheckOvervoltage(j.Clock, j.AllowOvervoltage); err != nil {
		return err
	}
	if j.Clock == 0 {
		j.Clock = p.DefaultClock
	}
	t, err := ParseTransport(string(j.Transport))
	if err != nil {
		return err
	}
	j.Transport = t
	if j.Benchmark == "" {
		j.Benchmark = benchmark.Speed
	}
	if _, err := benchmark.Lookup(j.Benchmark); err != nil {
		return err
	}
	if j.BootTimeout == 0 {
		j.BootTimeout = p.BootTimeout
	}
	if j.RunTimeout == 0 {
		j.RunTimeout = p.RunTimeout
	}
	return nil
}

// Plan is what a run boots.
type Plan struct {
	// Kernel is the kernel file; "" means the profile's: Debian's,
	// fetched, or one built from Debian's source (neither Named when there
	// is none either).
	Kernel string
	Debian boards.DebianKernel
	// Image is the initramfs; its Add gets the files Modules names once
	// the kernel is known.
	Image initramfs.Spec
	// Modules are modules of the kernel the image carries (by name, with
	// what they depend on).
	Modules []string
	Wrap    Wrapping
	// Params are the bootbench.* parameters, without the run id and the
	// routed ports, which are known only when the board boots.
	Params bootparam.Params
	// RaspberryPi is what a Raspberry Pi's firmware loads and reads
	// besides the kernel and image; nil for other boards.
	RaspberryPi *RaspberryPi
	// console (with the profile's kernel parameters), clock and extra are
	// the rest of the command line.
	console, clock, extra string
}

// RaspberryPi is a Raspberry Pi boot's share of the plan: the firmware
// and device tree it loads (the profile's), and the clock settings its
// config.txt carries for the run.
type RaspberryPi struct {
	Firmware   []string // raspi-firmware files, in the order the ROM asks for them
	DeviceTree string   // in Debian's kernel package: "broadcom/bcm2711-rpi-4-b.dtb"
	// Kernel is the profile's Debian kernel, whose package holds the
	// device tree when the board boots a kernel of its own.
	Kernel boards.DebianKernel
	// ArmFreq is arm_freq=, the run's clock; 0 leaves the firmware's.
	ArmFreq boards.MHz
	// OverVoltage is over_voltage=, what the profile gives a clock above
	// its safe limit; 0 leaves the line out.
	OverVoltage int
}

// Wrapping is how the image reaches the board's RAM.
type Wrapping struct {
	// Payload is the form of the initramfs the loader puts in RAM:
	// "cpio", "cpio.gz" or "cpio.xz" (initramfs.Compress's formats).
	Payload string
	// ELF puts kernel and payload in one ELF file, for loaders that
	// take one (RouterBOOT, CFE, QEMU's -kernel for a MIPS board).
	ELF bool
}

// New is the plan of job, whose Settle has been called.
func New(job Job) Plan {
	b, p := job.Board, job.Board.Profile
	pl := Plan{
		Kernel: job.Kernel,
		Image:  initramfs.Spec{Arch: p.Arch, GOARM: p.GOARM, GOMIPS: p.GOMIPS, Bench: job.Benchmark, Source: job.Source},
		Wrap:   wrapping(p),
		Params: bootparam.Params{Bench: job.Benchmark, Seconds: job.Seconds, Algs: job.Algs},
		extra:  job.Append,
	}
	// bootbench's own kernels (Build) have no modules: what the
	// benchmark needs of them is built in.
	if bm, err := benchmark.Lookup(job.Benchmark); err == nil && (job.Kernel != "" || b.Kernel != "" || p.Kernel.Build == "") {
		pl.Modules = append(append([]string(nil), bm.Image.KernelModules...), p.KernelModules...)
	}
	if pl.Kernel == "" {
		pl.Kernel = b.Kernel
	}
	if pl.Kernel == "" {
		pl.Debian = p.Kernel
	}
	baud := b.Baud
	if baud == 0 {
		baud = p.Baud
	}
	pl.console = fmt.Sprintf("console=%s,%d panic=-1 quiet loglevel=1", p.Console, baud)
	if p.KernelParams != "" {
		pl.console += " " + p.KernelParams
	}
	switch {
	case job.Clock == 0:
	case p.ClockMethod == boards.ClockCPUFreq, p.ClockMethod == boards.ClockConfigTxt:
		// A Raspberry Pi's firmware sets the clock config.txt names;
		// benchinit pins cpufreq at it too, so the hello reports it.
		pl.Params.ClockMHz = int(job.Clock)
	case p.ClockMethod == boards.ClockCmdline:
		pl.clock = strings.ReplaceAll(p.ClockCmdline, "{mhz}", fmt.Sprint(int(job.Clock)))
	}
	if rp := p.RaspberryPi; rp != nil {
		pl.RaspberryPi = &RaspberryPi{Firmware: rp.Firmware, DeviceTree: rp.DeviceTree, Kernel: p.Kernel}
		if p.ClockMethod == boards.ClockConfigTxt && job.Clock != 0 {
			pl.RaspberryPi.ArmFreq, pl.RaspberryPi.OverVoltage = job.Clock, p.OverVoltage(job.Clock)
		}
	}
	return pl
}

// wrapping is how the board's loader takes the image: RouterBOOT and CFE
// load one ELF holding the kernel and the gzipped image; QEMU's -kernel
// takes the ELF with the plain cpio; the other loaders fetch the image as
// a file of the profile's format.
func wrapping(p boards.Profile) Wrapping {
	switch {
	case p.ImageFormat == boards.FormatELF && p.Boot == boards.BootQEMUDirect:
		return Wrapping{Payload: "cpio", ELF: true}
	case p.ImageFormat == boards.FormatELF:
		return Wrapping{Payload: "cpio.gz", ELF: true}
	case p.ImageFormat == boards.FormatCPIOGz:
		return Wrapping{Payload: "cpio.gz"}
	case p.ImageFormat == boards.FormatCPIOXz, p.ImageFormat == boards.FormatUImage:
		return Wrapping{Payload: "cpio.xz"}
	}
	return Wrapping{Payload: "cpio"}
}

// Cmdline is the kernel command line of run: the console, a panic that
// reboots (so a dead board is seen as one), the run's parameters, the
// clock where the command line carries it, and the user's additions.
// ports are the route benchmark's routed ports (nil for the others).
func (p Plan) Cmdline(run string, ports []bootparam.Port) string {
	params := p.Params
	params.Run, params.Ports = run, ports
	parts := []string{p.console}
	if p.clock != "" {
		parts = append(parts, p.clock)
	}
	parts = append(parts, params.String(), p.extra)
	return strings.TrimSpace(strings.Join(parts, " "))
}
