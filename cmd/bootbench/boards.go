package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/bootbench/bootbench/benchmark"
	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/initramfs"
)

// boardsHelp is what 'bootbench boards --help' prints.
const boardsHelp = `Usage: bootbench boards list | show NAME | prepare BOARD...

  bootbench boards list              the board models bootbench knows: arch, boot, clocks, how tested
  bootbench boards show NAME         one model in full: what runs on it, its clocks, what stands in for it
  bootbench boards prepare BOARD...  fetch and build what the boards boot, ahead of their runs

Run 'bootbench boards SUBCOMMAND --help' for a subcommand's flags.
`

func cmdBoards(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return listBoards()
	}
	if sub, ok := groupHelp(args, boardsHelp); ok {
		if sub == nil {
			return errHelpShown
		}
		return cmdBoards(ctx, sub)
	}
	switch args[0] {
	case "list":
		fs := newCommand("boards list", "boards list", "Lists the board models: virtual boards, and the real boards' profiles.")
		if err := fs.parse(args[1:]); err != nil {
			return err
		}
		return listBoards()
	case "show":
		fs := newCommand("boards show", "boards show NAME", "Shows a board model: what it is, how it boots, its clocks, what runs on it and\n"+
			"what has been tested where.")
		if err := fs.parseArgs(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return usageErr("boards show: name one board (see 'bootbench boards list')")
		}
		return showBoardNamed(fs.Arg(0))
	case "prepare":
		return cmdPrepare(ctx, args[1:])
	}
	return usageErr("boards: unknown subcommand %q: say list, show NAME or prepare BOARD... (see 'bootbench boards --help')", args[0])
}

func listBoards() error {
	ps, err := boards.All()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BOARD\tARCH\tBOOT\tCLOCKS (MHz)\tTESTED\tDESCRIPTION")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Arch, p.Boot, clocksShort(p), testedShort(p), p.Description)
	}
	return tw.Flush()
}

func showBoardNamed(name string) error {
	p, err := boards.Get(name)
	if err != nil {
		return usageErr("%v", err)
	}
	showBoard(os.Stdout, p)
	return nil
}

func showBoard(w io.Writer, p boards.Profile) {
	fmt.Fprintf(w, "name          %s\ndescription   %s\narch          %s\nram           %d MiB\nboot          %s\nimage format  %s\nconsole       %s at %d baud\n",
		p.Name, p.Description, archLine(p), p.RAMMB, p.Boot, p.ImageFormat, p.Console, p.Baud)
	switch {
	case p.ClockMethod == "" && p.FixedClock != 0:
		fmt.Fprintf(w, "clocks        one clock, %s, no setting\n", p.FixedClock)
	case p.ClockMethod == "":
		fmt.Fprintf(w, "clocks        one clock, no setting\n")
	case len(p.Clocks) == 0 && p.ClockLimits != nil:
		l := p.ClockLimits
		fmt.Fprintf(w, "clocks        %s (default %d, applied by %s)", boards.Clocks{l.Min, l.Safe}.Joined(" to "), p.DefaultClock, p.ClockMethod)
		if l.Max > l.Safe {
			fmt.Fprintf(w, "; up to %s with --allow-overvoltage (over_voltage=%d)", l.Max.Figure(), l.OverVoltage)
		}
		fmt.Fprintln(w)
	case len(p.Clocks) == 0:
		fmt.Fprintf(w, "clocks        any setting, applied by %s\n", p.ClockMethod)
	default:
		fmt.Fprintf(w, "clocks        %s (default %d, applied by %s)\n", p.Clocks.Joined(","), p.DefaultClock, p.ClockMethod)
	}
	fmt.Fprintf(w, "timeouts      boot %s, run %s\n", p.BootTimeout, p.RunTimeout)
	if rp := p.RaspberryPi; rp != nil {
		fmt.Fprintf(w, "firmware      %s from Debian's raspi-firmware (non-free-firmware), device tree %s from the kernel's package; served under the board's serial\n", strings.Join(rp.Firmware, ", "), rp.DeviceTree)
	}
	if v := p.Virtual; v != nil {
		nic := "NIC " + v.NIC
		if v.ROM != "" {
			nic = "boot ROM " + v.ROM // the ROM is the board's network until the kernel starts
			if v.NIC != "" {
				nic += ", NIC " + v.NIC
			}
		}
		fmt.Fprintf(w, "virtual       %s %v, %s, MAC %s\n", v.QEMU, v.Args, nic, v.MAC)
	}
	if k := p.Kernel; k.Build != "" {
		fmt.Fprintf(w, "kernel        bootbench's %s, built from Debian's linux-source into the cache\n", k.Build)
	} else if k.Flavour != "" {
		fmt.Fprintf(w, "kernel        Debian linux-image-*-%s (%s)\n", k.Flavour, k.DebianArch)
	} else if p.Virtual == nil {
		fmt.Fprintf(w, "kernel        none shipped: the bench inventory names one (kernel:)\n")
	}
	if p.NotSupported != "" {
		fmt.Fprintf(w, "NOT SUPPORTED %s\n", p.NotSupported)
		for _, s := range p.Works {
			fmt.Fprintf(w, "works         %s\n", s)
		}
		printFirmware(w, p)
		if len(p.Tested.Virtual) == 0 {
			fmt.Fprintf(w, "tested        import, compare and export by the tests, with recorded openssl outputs; nothing runs on the board\n")
			return
		}
		fmt.Fprintf(w, "tested        nothing runs on the board; what stands in for parts of its path:\n")
		printStandIns(w, p)
		return
	}
	for _, name := range benchmark.Names() {
		fmt.Fprintf(w, "%-13s %s\n", "bench "+name, benchLine(p, name))
	}
	if p.RAMMB > 0 {
		fmt.Fprintf(w, "ram check     run refuses, before power-on, an image that cannot boot in %d MiB (the numbers say why)\n", p.RAMMB)
	}
	switch {
	case p.Virtual != nil:
		fmt.Fprintf(w, "tested        a virtual board: the end-to-end tests boot it\n")
	case len(p.Tested.Hardware) > 0:
		for _, h := range p.Tested.Hardware {
			fmt.Fprintf(w, "tested        on hardware: %s\n", h)
		}
	default:
		fmt.Fprintf(w, "tested        ONLY ON VIRTUAL BOARDS: no run on a real %s yet; what stands in for it:\n", p.Name)
	}
	printStandIns(w, p)
}

// printFirmware says what runs on p under its own firmware, and how, with
// the profile's example inventory entry.
func printFirmware(w io.Writer, p boards.Profile) {
	f := p.Firmware
	if f == nil {
		return
	}
	fmt.Fprintf(w, "firmware      bench %s runs under %s, the board's own firmware: an inventory board with image: none\n", strings.Join(f.Benchmarks, ", "), f.Name)
	fmt.Fprintf(w, "              is not netbooted; bootbench powers it on (or asks), waits until the path through it\n")
	fmt.Fprintf(w, "              forwards, types each configuration's console steps (or asks the operator) and measures\n")
	fmt.Fprintf(w, "              from the bench's route interfaces (bench.route). In bench.yaml's boards:\n")
	for _, l := range strings.Split(strings.TrimRight(f.Example, "\n"), "\n") {
		fmt.Fprintf(w, "                %s\n", l)
	}
	fmt.Fprintf(w, "              tested end to end on a stand-in: a virtual PC whose firmware is a shell with nftables, not %s\n", f.Name)
}

// benchLine says whether benchmark name runs on p, and how.
func benchLine(p boards.Profile, name string) string {
	switch name {
	case benchmark.Speed:
		return "supported: the built-in suite, in the image's benchinit"
	case benchmark.OpenSSL:
		return opensslLine(initramfs.Spec{Arch: p.Arch, GOARM: p.GOARM, GOMIPS: p.GOMIPS})
	case benchmark.DD:
		return "supported: in the image's benchinit, a file written to and read back from a tmpfs in 16 KiB blocks (64 MiB, or a quarter of the free RAM)"
	case benchmark.Route:
		switch {
		case p.Virtual == nil && p.Unsupported() != nil:
			return "not netbooted (see above); under its own firmware (image: none in the inventory, see README) it runs"
		case !routeModel(p):
			return "not yet on this board: the route benchmark runs on the virtual boards qemu-x86_64, qemu-x86_64-uefi and qemu-rb450g"
		case p.Virtual != nil:
			nic := p.Virtual.NIC
			if p.Virtual.PortNIC != "" {
				nic = p.Virtual.PortNIC
			}
			return "supported: the board routes between the virtual bench's two host networks, on two extra " + nic + " NICs"
		}
		return "supported on a bench whose inventory cables two host NICs to the board's routed ports (bench: route:, and the board's route_ports:); its kernel must drive those ports. Or under the board's own firmware: image: none (see README)"
	}
	if bm, _ := benchmark.Lookup(name); bm.Image.BuiltIn {
		return "supported: in the image's benchinit"
	}
	return "with a command of its own (image build --bench-cmd)"
}

// opensslLine says where bench openssl's openssl comes from for spec's
// target, or why there is none.
func opensslLine(spec initramfs.Spec) string {
	if spec.Arch == runtime.GOARCH {
		return "supported: this host's openssl and its libraries"
	}
	if triplet, ok := initramfs.CrossOpenSSL(spec); ok {
		return "supported: cross-built from Debian 12's openssl 3.0 source with Debian's " + triplet + " compiler, static, once into the cache (Debian has no " + spec.Arch + " openssl package)"
	}
	deb, err := initramfs.DebianArch(spec)
	if err != nil {
		return "NOT SUPPORTED as is: " + err.Error()
	}
	return "supported: Debian 12's openssl 3.0 for " + deb + ", fetched into the cache"
}

// printStandIns lists the virtual boards that run parts of p's path.
func printStandIns(w io.Writer, p boards.Profile) {
	for _, v := range p.Tested.Virtual {
		fmt.Fprintf(w, "              %s: %s\n", v.Board, v.Covers)
	}
}

func archLine(p boards.Profile) string {
	switch {
	case p.GOMIPS != "":
		return p.Arch + " (GOMIPS=" + p.GOMIPS + ")"
	case p.GOARM != "":
		return p.Arch + " (GOARM=" + p.GOARM + ")"
	}
	return p.Arch
}

func testedShort(p boards.Profile) string {
	switch {
	case p.NotSupported != "":
		return "not supported"
	case p.Virtual != nil:
		return "virtual board"
	case p.OnlyVirtual():
		return "virtual only"
	}
	return "hardware"
}

// clocksShort is boards list's CLOCKS column: what boards show says of
// the model's clocks, in a word: its settings, its range (to the safe
// limit, as show's first figure), any, or its one clock.
func clocksShort(p boards.Profile) string {
	switch {
	case p.ClockMethod == "" && p.FixedClock != 0:
		return fmt.Sprintf("%d (one)", p.FixedClock)
	case p.ClockMethod == "":
		return "one"
	case len(p.Clocks) == 0 && p.ClockLimits != nil:
		return fmt.Sprintf("%d-%d", p.ClockLimits.Min, p.ClockLimits.Safe)
	case len(p.Clocks) == 0:
		return "any"
	}
	return p.Clocks.Digits()
}
