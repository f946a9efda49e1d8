package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bootbench/bootbench/adapters/route"
	"github.com/bootbench/bootbench/benchmark"
	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/contract/bootparam"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/internal/redact"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/export"
	"github.com/bootbench/bootbench/results/store"
	"github.com/bootbench/bootbench/rig"
)

const runHelp = "Netboots the board with bootbench's own DHCP, TFTP and HTTP, runs the benchmark with\n" +
	"nothing else running on it, reads the result off the serial console and stores it.\n" +
	"With several clocks and repetitions the settings are interleaved (A B A B ...)\n" +
	"so that drift does not look like a difference.\n\n" +
	"A board on a real bench comes from the inventory (bench.yaml: the bench NIC, and each\n" +
	"board's profile, MAC, address, serial console and power switch); the virtual qemu-*\n" +
	"boards need none. On a bench segment that has its own DHCP server, --proxy answers\n" +
	"only the boot and lets that server hand out the addresses."

func cmdRun(ctx context.Context, args []string) error {
	fs := newCommand("run", "run [--board NAME] [--inventory FILE] [--clock MHZ[,MHZ...]] [--reps N|auto] [flags]\n\n"+runHelp, "")
	rf := addRunFlags(fs.FlagSet, "1")
	if err := fs.parseArgs(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("run: unexpected argument %q", fs.Arg(0))
	}
	// A store name that can never work is refused before the image is
	// built.
	if err := store.CheckName(storePath(*rf.db)); err != nil {
		return storeErr(err)
	}
	job, err := rf.prepare(ctx, "run")
	if err != nil {
		return err
	}
	st, err := openSpooled(ctx, *rf.db, func(msg string) { rig.SetupNote(os.Stderr, "spool", "%s", msg) })
	if err != nil {
		return err
	}
	defer st.Close()
	rg, err := job.open(ctx, st.saver())
	if err != nil {
		return err
	}
	defer rg.Close()
	return runSettings(ctx, job.sweep(rg), rg.Rig, st)
}

// runFlags are the flags of the commands that run boards (run, ci).
type runFlags struct {
	fs                                                                       *flag.FlagSet
	board, inventory, clocks, bench, algs, kernel, transport, appendArgs, db *string
	routeSizes, routeConfigs, routeRate, routeWindow                         *string
	reps, targetCI                                                           *string
	proxy, allowOvervoltage                                                  *bool
	maxReps, retries, routeStreams                                           *int
	seconds                                                                  *float64
	bootTimeout, runTimeout                                                  *time.Duration
}

func addRunFlags(fs *flag.FlagSet, reps string) *runFlags {
	return &runFlags{
		fs:               fs,
		board:            fs.String("board", boards.Default, "board: one from the inventory, or a virtual qemu-* board (see 'bootbench boards list')"),
		inventory:        fs.String("inventory", "", "bench inventory (default $BOOTBENCH_INVENTORY, else $XDG_CONFIG_HOME/bootbench/bench.yaml when it exists)"),
		proxy:            fs.Bool("proxy", false, "serve as proxyDHCP: the bench segment's own DHCP server hands out addresses, bootbench only the boot"),
		clocks:           fs.String("clock", "", "clock settings in MHz, comma separated (default: the board's default)"),
		allowOvervoltage: fs.Bool("allow-overvoltage", false, "run a clock above the model's safe limit (a Raspberry Pi's highest without over_voltage) with the over_voltage its profile gives; never above the firmware's highest"),
		reps:             fs.String("reps", reps, "repetitions of each clock setting, or auto: until every metric's 95 % interval is within --target-ci, at most --max-reps"),
		targetCI:         fs.String("target-ci", boards.Percent(boards.DefaultTargetCI), "with --reps auto: how close every 95 % interval must come, ± this of its figure (the ratio between clocks, or one clock's median)"),
		maxReps:          fs.Int("max-reps", boards.DefaultMaxReps, "with --reps auto: the most repetitions of each clock setting"),
		bench:            fs.String("bench", benchmark.Speed, "benchmark: "+benchmark.Help()),
		routeSizes:       fs.String("route-sizes", "64,128,256,512,1024,1460", "route: packet sizes in bytes of payload, comma separated"),
		routeConfigs:     fs.String("route-configs", "", "route: configurations, in order (default "+strings.Join(bootparam.RouteConfigs, ",")+"; a board under its own firmware: its inventory's route_configs)"),
		routeRate:        fs.String("route-udp-rate", "50M", "route: the UDP tests' offered rate in bit/s (K, M, G suffixes), all streams together"),
		routeWindow:      fs.String("route-window", "", "route: the TCP tests' window, iperf3 -w SIZE in bytes (K, M, G suffixes: 256K); default the kernel's"),
		routeStreams:     fs.Int("route-streams", 1, "route: parallel streams in each test (iperf3 -P)"),
		seconds:          fs.Float64("seconds", 0.3, "seconds per algorithm and block size"),
		algs:             fs.String("algs", "", "algorithms, comma separated, as the benchmark names them (default: its default set; openssl: the OpenWrt table's)"),
		kernel:           fs.String("kernel", "", "kernel image (default: the inventory's, else the board's: a Debian kernel fetched into the cache, or bootbench's own built there; a Debian kernel here compares the two on a twin)"),
		transport:        fs.String("transport", string(plan.HTTP), "how iPXE loads kernel and image from bootbench: http or tftp"),
		appendArgs:       fs.String("append", "", "extra kernel command line parameters"),
		bootTimeout:      fs.Duration("boot-timeout", 0, "time allowed from power-on to the board's hello (default: the profile's)"),
		runTimeout:       fs.Duration("run-timeout", 0, "time allowed from hello to the result (default: the profile's)"),
		retries:          fs.Int("retries", 1, "boot again this many times when the board never reported or its frames went corrupt (every attempt is stored)"),
		db:               dbFlag(fs),
	}
}

// runJob is what the run flags asked for, checked.
type runJob struct {
	rf       *runFlags
	board    boards.Board
	inv      *boards.Inventory
	settings []boards.MHz
	reps     boards.Reps
	src      string
	routes   route.Plan // the route benchmark's
	configs  []string
	// probe is the bench segment's rival-DHCP probe, started by check so
	// that it runs while the image is checked (nil for a virtual board,
	// or with --proxy).
	probe *rig.Probe
}

// prepare checks the flags and finds the board, before anything is touched.
func (rf *runFlags) prepare(ctx context.Context, cmd string) (*runJob, error) {
	job, err := rf.resolve(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return job, job.check(ctx, cmd)
}

// roomyRAMMB is RAM in which every image bootbench builds fits (the
// largest, openssl with its libraries beside a Debian kernel, needs some
// 60 MiB): for a board model with as much, the RAM check would only build
// an image, half a minute on a cold cache, to tell nothing before the
// inventory hint.
const roomyRAMMB = 256

// resolve reads the run flags and finds the board: the cheap checks, which
// a command runs before its own (ci: the baseline) and before check.
func (rf *runFlags) resolve(ctx context.Context, cmd string) (*runJob, error) {
	switch {
	case *rf.retries < 0:
		return nil, usageErr("%s: --retries must be 0 or more", cmd)
	}
	if _, err := plan.ParseTransport(*rf.transport); err != nil {
		return nil, usageErr("%s: --transport must be http or tftp", cmd)
	}
	bm, err := benchmark.Lookup(*rf.bench)
	if err != nil {
		return nil, usageErr("%s: %v", cmd, err)
	}
	reps, err := rf.repsOf(cmd)
	if err != nil {
		return nil, err
	}
	if err := checkSeconds(cmd, *rf.seconds); err != nil {
		return nil, err
	}
	if err := checkAlgs(cmd, bm, splitList(*rf.algs)); err != nil {
		return nil, err
	}
	routes, configs, err := rf.routePlan(cmd)
	if err != nil {
		return nil, err
	}
	src, _ := initramfs.FindSource() // none: images come from the prebuilt set
	b, inv, err := loadBoard(ctx, *rf.board, *rf.inventory)
	if err != nil {
		if merr := rf.modelRefusal(ctx, cmd, src); merr != nil {
			return nil, merr
		}
		return nil, err
	}
	if err := rig.CheckProxy(b, *rf.proxy); err != nil {
		return nil, err
	}
	settings, err := clockSettings(b.Profile, *rf.clocks, *rf.allowOvervoltage)
	if err != nil {
		return nil, err
	}
	autoSettings := len(settings)
	if cmd == "ci" {
		autoSettings = 2 // its intervals are of a ratio to the baseline
	}
	if err := checkAutoReps(cmd, reps, autoSettings); err != nil {
		return nil, err
	}
	if err := b.Profile.UnsupportedFor(b, *rf.bench); err != nil {
		return nil, usageErr("%s: %v", cmd, err)
	}
	if b.OwnFirmware {
		if b, err = firmwareConfigs(b, configs, cmd); err != nil {
			return nil, err
		}
	} else if configs, err = netbootConfigs(configs, cmd); err != nil {
		return nil, err
	}
	if bm.HostNetworks {
		if err := routeRefusal(b, inv); err != nil {
			return nil, usageErr("%s: %v", cmd, err)
		}
	}
	return &runJob{rf: rf, board: b, inv: inv, settings: settings, reps: reps, src: src, routes: routes, configs: configs}, nil
}

// modelRefusal is for a board model named where a board belongs: what
// refuses the run on any board of the model (the benchmark, the clock, a
// RAM too small for the image), said before the inventory is asked for;
// nil when the model could run it, or --board names no model.
func (rf *runFlags) modelRefusal(ctx context.Context, cmd, src string) error {
	p, err := boards.Get(*rf.board)
	if err != nil || p.Virtual != nil {
		return nil
	}
	if err := p.UnsupportedFor(boards.Board{Profile: p}, *rf.bench); err != nil {
		return usageErr("%s: %v", cmd, err)
	}
	if _, err := clockSettings(p, *rf.clocks, *rf.allowOvervoltage); err != nil {
		return err
	}
	if p.RAMMB >= roomyRAMMB {
		return nil
	}
	// No image to check with (outside the tree, no prebuilt set): the
	// inventory hint is the answer, as for every other model.
	model := plan.Job{Board: boards.Board{Profile: p}, Benchmark: *rf.bench, Kernel: *rf.kernel, Source: src}
	if err := checkBoard(ctx, model); err != nil && !errors.Is(err, initramfs.ErrNoImage) {
		return err
	}
	return nil
}

// repsOf reads --reps, and with auto --target-ci and --max-reps, which go
// with auto only: given with a count they would silently do nothing.
func (rf *runFlags) repsOf(cmd string) (boards.Reps, error) {
	reps, err := boards.ParseReps(*rf.reps)
	if err != nil {
		if n, nerr := strconv.Atoi(strings.TrimSpace(*rf.reps)); nerr == nil && n < 1 {
			return reps, usageErr("%s: --reps must be at least 1 (or auto)", cmd)
		}
		return reps, usageErr("%s: --reps %q: give a count of repetitions, or auto", cmd, *rf.reps)
	}
	var given []string
	rf.fs.Visit(func(f *flag.Flag) {
		if f.Name == "target-ci" || f.Name == "max-reps" {
			given = append(given, "--"+f.Name)
		}
	})
	if !reps.Auto {
		switch len(given) {
		case 1:
			return reps, usageErr("%s: %s goes with --reps auto", cmd, given[0])
		case 2:
			return reps, usageErr("%s: %s go with --reps auto", cmd, strings.Join(given, " and "))
		}
		return reps, nil
	}
	if reps.Target, err = boards.ParsePercent(*rf.targetCI); err != nil {
		return reps, usageErr("%s: --target-ci: %v", cmd, err)
	}
	reps.Max = *rf.maxReps
	return reps, nil
}

// checkAutoReps refuses a --reps auto whose target or maximum cannot work
// for a sweep of that many clock settings (ci: a ratio to its baseline,
// as two).
func checkAutoReps(cmd string, reps boards.Reps, settings int) error {
	if err := reps.Check(boards.MinAutoRounds(settings)); err != nil {
		flag := "--max-reps"
		if !(reps.Target > 0 && reps.Target < 1) {
			flag = "--target-ci"
		}
		return usageErr("%s: %s: %v", cmd, flag, err)
	}
	return nil
}

// checkSeconds refuses a test length that is not more than 0: the board
// would take it as "the default" and the run be labelled with a length it
// did not ask for.
func checkSeconds(cmd string, seconds float64) error {
	if !(seconds > 0) || math.IsInf(seconds, 0) {
		return usageErr("%s: --seconds %g: give the seconds per test, more than 0 (like 0.3)", cmd, seconds)
	}
	return nil
}

// checkAlgs refuses, on the host, an algorithm the benchmark does not
// know, rather than after a boot (benchinit would refuse it on the board).
func checkAlgs(cmd string, bm benchmark.Benchmark, algs []string) error {
	if bm.Algorithms == nil {
		return nil
	}
	for _, a := range algs {
		if slices.Contains(bm.Algorithms, a) {
			continue
		}
		hint := ""
		if near := boards.Closest(a, bm.Algorithms); near != "" {
			hint = " (did you mean " + near + "?)"
		}
		return usageErr("%s: --algs: bench %s has no algorithm %q%s; it has: %s", cmd, bm.Name, a, hint, strings.Join(bm.Algorithms, " "))
	}
	return nil
}

// check refuses, before power-on, a model bootbench cannot run or an image
// too big for the board's RAM. It builds the image (from source, half a
// minute or more when the cache lacks it), so it comes after every cheap
// check.
func (j *runJob) check(ctx context.Context, cmd string) error {
	if j.board.OwnFirmware {
		return nil // nothing is built for it
	}
	job := plan.Job{Board: j.board, Benchmark: *j.rf.bench, Kernel: *j.rf.kernel, Source: j.src}
	// A board with no kernel at all would fail every run at its first
	// step: refuse it before building anything or touching the bench.
	if err := plan.New(job).CheckKernel(); err != nil {
		return usageErr("%s: board %s: %v", cmd, j.board.Name, err)
	}
	if !j.board.Virtual() && !*j.rf.proxy && j.inv != nil && j.probe == nil {
		j.probe = rig.StartProbe(ctx, cacheDir(), j.inv.Bench.Interface, true, func(msg string) { rig.SetupNote(os.Stderr, "network", "%s", msg) })
	}
	return checkBoard(ctx, job)
}

// routeRefusal says why board b cannot run the route benchmark, nil when
// it can: a virtual board whose extra NICs its kernel drives, or a board
// on a bench whose inventory cables two host interfaces to its two
// routed ports.
func routeRefusal(b boards.Board, inv *boards.Inventory) error {
	if !routeModel(b.Profile) && !b.OwnFirmware { // under its own firmware no image of ours runs
		return fmt.Errorf("board %s: the route benchmark runs on the virtual boards qemu-x86_64, qemu-x86_64-uefi and qemu-rb450g, and on boards of a real bench", b.Name)
	}
	if b.Virtual() {
		return nil
	}
	_, err := rig.RouteSpec(b, inv, route.Plan{})
	return err
}

// routeModel is a board model that can run the route benchmark: any real
// one (its inventory says how it is cabled), or a virtual board booted
// from the virtual bench's network (the route networks come with it),
// either a virtual PC, whose extra virtio NICs its kernel drives
// (Debian's with the modules the image then carries, bootbench's x86-64
// kernel built in), or a board with bootbench's own kernel (drivers,
// nf_tables and conntrack built in) whose profile names the extra NICs'
// model.
func routeModel(p boards.Profile) bool {
	v := p.Virtual
	if v == nil {
		return true
	}
	if p.Boot == boards.BootQEMUDirect {
		return false
	}
	return p.Arch == "amd64" && v.NIC == "virtio-net-pci" || p.Kernel.Build != "" && v.PortNIC != ""
}

// routePlan reads the route flags.
func (rf *runFlags) routePlan(cmd string) (route.Plan, []string, error) {
	plan := route.Plan{Seconds: max(1, int(math.Round(*rf.seconds)))}
	for _, s := range splitList(*rf.routeSizes) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 16 || n > 1460 {
			return plan, nil, usageErr("%s: --route-sizes: %q is not a payload size from 16 to 1460 bytes", cmd, s)
		}
		plan.Sizes = append(plan.Sizes, n)
	}
	if len(plan.Sizes) == 0 {
		return plan, nil, usageErr("%s: --route-sizes: no sizes", cmd)
	}
	rate, err := parseRate(*rf.routeRate)
	if err != nil {
		return plan, nil, usageErr("%s: --route-udp-rate: %v", cmd, err)
	}
	plan.UDPRate = rate
	if w := *rf.routeWindow; w != "" && !windowRE.MatchString(w) {
		return plan, nil, usageErr("%s: --route-window: %q is not a size in bytes with an optional K, M or G (like 256K)", cmd, w)
	}
	plan.Window = *rf.routeWindow
	if n := *rf.routeStreams; n < 1 || n > maxStreams {
		return plan, nil, usageErr("%s: --route-streams: %d is not from 1 to %d", cmd, n, maxStreams)
	}
	plan.Streams = *rf.routeStreams
	configs := splitList(*rf.routeConfigs)
	if *rf.routeConfigs != "" && len(configs) == 0 {
		return plan, nil, usageErr("%s: --route-configs: no configurations", cmd)
	}
	return plan, configs, nil
}

// netbootConfigs checks --route-configs against benchinit's
// configurations; none given is all of them.
func netbootConfigs(configs []string, cmd string) ([]string, error) {
	if len(configs) == 0 {
		return bootparam.RouteConfigs, nil
	}
	for _, c := range configs {
		if !slices.Contains(bootparam.RouteConfigs, c) {
			return nil, usageErr("%s: --route-configs: unknown configuration %q (%s)", cmd, c, strings.Join(bootparam.RouteConfigs, ", "))
		}
	}
	return configs, nil
}

// firmwareConfigs keeps, in --route-configs' order, the configurations of
// a board under its own firmware that were asked for; none given is all
// of its route_configs, in the inventory's order.
func firmwareConfigs(b boards.Board, configs []string, cmd string) (boards.Board, error) {
	if len(configs) == 0 {
		return b, nil
	}
	var names []string
	for _, c := range b.RouteConfigs {
		names = append(names, c.Name)
	}
	var picked []boards.RouteConfig
	for _, name := range configs {
		c, ok := b.RouteConfig(name)
		if !ok {
			return b, usageErr("%s: --route-configs: board %s has no configuration %q in its route_configs (%s)", cmd, b.Name, name, strings.Join(names, ", "))
		}
		picked = append(picked, c)
	}
	b.RouteConfigs = picked
	return b, nil
}

// windowRE is a window iperf3 -w takes: bytes, or K, M or G of them
// (binary), not 0.
var windowRE = regexp.MustCompile(`^[1-9][0-9]*[KMGkmg]?$`)

// maxStreams is iperf3's limit on -P.
const maxStreams = 128

// parseRate reads a rate in bit/s with an optional K, M or G (decimal).
func parseRate(s string) (float64, error) {
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "K"), strings.HasSuffix(s, "k"):
		mult, s = 1e3, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1e6, s[:len(s)-1]
	case strings.HasSuffix(s, "G"):
		mult, s = 1e9, s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a rate (like 50M)", s)
	}
	return v * mult, nil
}

// open readies the board's rig, its store and builders.
func (j *runJob) open(ctx context.Context, saver results.Saver) (*rig.Rig, error) {
	var routes *route.Plan
	if *j.rf.bench == benchmark.Route {
		routes = &j.routes
	}
	rg, err := rig.Open(ctx, j.board, j.inv, rig.Options{Cache: cacheDir(), Proxy: *j.rf.proxy, Routes: routes, Probe: j.probe, Progress: os.Stderr})
	if err != nil {
		return nil, err
	}
	rg.Store, rg.Builders = saver, builders(j.src)
	if rg.Router != nil && j.board.OwnFirmware {
		fw, err := route.NewFirmware(rg.Router)
		if err != nil {
			rg.Close()
			return nil, err
		}
		rg.Firmware = fw
	} else if rg.Router != nil {
		rg.Host = &route.Driver{Router: rg.Router, Configs: j.configs}
	}
	return rg, nil
}

// sweep is the runs the flags ask for, on the board as rg has it.
func (j *runJob) sweep(rg *rig.Rig) plan.Sweep {
	return plan.Sweep{Job: j.job(rg), Clocks: j.settings, Reps: j.reps}
}

// job is what the flags ask every run to measure, on the board as rg has
// it; the clock and rep are each run's.
func (j *runJob) job(rg *rig.Rig) plan.Job {
	rf := j.rf
	return plan.Job{
		Board: rg.Board, Benchmark: *rf.bench, Seconds: time.Duration(*rf.seconds * float64(time.Second)), Algs: splitList(*rf.algs),
		Kernel: *rf.kernel, Source: j.src, Append: *rf.appendArgs, Transport: plan.Transport(*rf.transport), AllowOvervoltage: *rf.allowOvervoltage,
		BootTimeout: *rf.bootTimeout, RunTimeout: *rf.runTimeout, Retries: *rf.retries, Route: j.routeSettings(),
	}
}

// routeSettings are what a route run stores of its settings; nil for
// another benchmark.
func (j *runJob) routeSettings() *results.RouteSettings {
	if *j.rf.bench != benchmark.Route {
		return nil
	}
	return &results.RouteSettings{Window: j.routes.Window, Streams: max(1, j.routes.Streams), UDPRate: j.routes.UDPRate, Seconds: j.routes.Seconds}
}

// clockSettings reads --clock against what the board model offers and
// its limits: above its safe clock only with --allow-overvoltage.
func clockSettings(p boards.Profile, flag string, allowOvervoltage bool) ([]boards.MHz, error) {
	if flag == "" {
		return []boards.MHz{p.DefaultClock}, nil
	}
	settings, err := boards.ParseClocks(flag)
	if err != nil {
		return nil, usageErr("run: --clock: %v", err)
	}
	for _, mhz := range settings {
		if err := p.CheckClock(mhz); err != nil {
			return nil, usageErr("run: %v", err)
		}
		if err := p.CheckOvervoltage(mhz, allowOvervoltage); err != nil {
			return nil, usageErr("run: %v", err)
		}
	}
	return settings, nil
}

// runSettings runs the sweep, its clock settings interleaved, and prints
// each result as it is stored; with --reps auto it goes on until every
// interval is within the target, or to the most, and then says where the
// intervals stand. A run the store cannot take is kept in its spool, and
// said so in a line; one nothing can keep is printed whole.
func runSettings(ctx context.Context, sw plan.Sweep, rg harness.Rig, st *spooledStore) error {
	var out runTally
	watch := newAutoWatch(sw, os.Stderr)
	one := !sw.Reps.Auto && sw.Rounds()*sw.Width() == 1
	err := runPlan(ctx, sw, rg, watch.enough, func(rec *results.Run, rep int, err error) error {
		out.add(ctx, rec, rep, err, one, st)
		watch.add(rec)
		return nil
	})
	if err != nil {
		return interrupted(err, st.name)
	}
	if out.stored > 0 {
		fmt.Printf("\nstored in %s\n", st.name)
	}
	watch.report(os.Stdout)
	return out.verdict(out.ran, st)
}

// runTally is what became of a command's runs.
type runTally struct {
	ran, stored  int
	failed, lost []results.RunID
	kept         []results.RunID
	// single is the one line a command of one run ends with, when its
	// run failed or was not stored; said at the end, not as it happens.
	single error
}

// add prints one run as it ends and counts it. A failed run's reason is
// said on stderr as it happens, except for a command of one run (one),
// which ends with that line.
func (t *runTally) add(ctx context.Context, rec *results.Run, rep int, err error, one bool, st *spooledStore) {
	t.ran++
	_, lost, _ := unstored(err)
	outcome := harness.Outcome(err)
	if outcome == nil && lost == nil {
		printRun(rec, rep)
	}
	if outcome != nil {
		t.failed = append(t.failed, rec.ID)
		if one {
			t.single = fmt.Errorf("run %s failed: %w", rec.ID, outcome)
		} else {
			stderrNote(fmt.Sprintf("run %s failed: %s", rec.ID, redact.Text(outcome.Error())))
		}
	}
	t.addUnstored(ctx, rec, err, st, one && outcome == nil)
}

// addUnstored counts whether the store took rec. A run kept in the spool
// is said in a line on stderr as it happens (unless last: the command's
// one run ends with that line); one nothing could keep is printed whole
// on stdout first. After a run the store took, what this command kept
// in the spool is delivered: the store is back.
func (t *runTally) addUnstored(ctx context.Context, rec *results.Run, err error, st *spooledStore, last bool) {
	kept, lost, notStored := unstored(err)
	switch {
	case kept != nil:
		t.kept = append(t.kept, rec.ID)
		if line := keptLine(kept, st.path); last {
			t.single = errors.New(line)
		} else {
			stderrNote(line)
		}
	case lost != nil:
		t.lost = append(t.lost, rec.ID)
		printLost(os.Stdout, rec)
		stderrNote(lostLine(lost))
		if last {
			t.single = &exitError{code: 1, err: errSaid}
		}
	case !notStored:
		t.stored++
		if len(t.kept) > 0 {
			st.deliver(ctx, func(msg string) { rig.SetupNote(os.Stderr, "spool", "%s", msg) })
		}
	}
}

// errSaid ends a command whose error has been said already.
var errSaid = errors.New("said above")

// verdict is how a command of total runs ends: the runs that failed
// first, then those nothing could keep, then those waiting in the spool.
func (t *runTally) verdict(total int, st *spooledStore) error {
	switch {
	case t.single != nil:
		return t.single
	case len(t.failed) > 0:
		return fmt.Errorf("%d of %d runs failed (see 'bootbench results show %s')", len(t.failed), total, t.failed[0])
	}
	return t.unstoredVerdict(total, st)
}

// unstoredVerdict is how a command ends whose runs the store did not all
// take: exit status 1, as a run that could not be stored always ended
// one, with what to do.
func (t *runTally) unstoredVerdict(total int, st *spooledStore) error {
	switch {
	case len(t.lost) > 0:
		return fmt.Errorf("%d of %d runs could not be stored or kept: their figures are printed above, copy them now", len(t.lost), total)
	case len(t.kept) > 0:
		return fmt.Errorf("%d of %d runs kept in the spool %s, not stored in %s: the next command that writes to it delivers them, or '%s'",
			len(t.kept), total, st.spool.Dir, st.name, pushHint(st.path))
	}
	return nil
}

// runPlan runs the sweep's runs in turn (A B A B ...: drift does not look
// like a difference), and hands each stored run to done; with --reps auto
// it asks enough after each round whether to go on. It stops at the
// first error done returns, on an interruption, at a setup failure (exit
// status 2: nothing ran, or a bench refused the segment after power-on;
// nothing is stored), or when a run could not be stored at all.
func runPlan(ctx context.Context, sw plan.Sweep, rg harness.Rig, enough func(rounds int) bool, done func(rec *results.Run, rep int, err error) error) error {
	for j := range sw.Runs(enough) {
		rec, err := harness.Run(ctx, j, rg)
		if errors.Is(err, harness.ErrInterrupted) {
			return err
		}
		if rec == nil && harness.Kind(err) == harness.FailSetup {
			// Every setting would fail alike, and nothing ran (or,
			// refused after power-on, nothing may be kept).
			what := "nothing was run or stored"
			if errors.Is(err, harness.ErrRefusedMidRun) || errors.Is(err, harness.ErrFirmwareRefused) {
				what = "nothing of the run was stored"
			}
			return &exitError{code: 2, err: fmt.Errorf("%w; %s", err, what)}
		}
		if rec == nil {
			return err
		}
		if err := done(rec, j.Rep, err); err != nil {
			return err
		}
	}
	return nil
}

// interrupted turns an interruption into exit status 130.
func interrupted(err error, dbPath string) error {
	if errors.Is(err, harness.ErrInterrupted) {
		return &exitError{code: 130, err: fmt.Errorf("interrupted; everything the run started is stopped (store: %s)", dbPath)}
	}
	return err
}

func printRun(rec *results.Run, rep int) { printRunTo(os.Stdout, rec, rep) }

func printRunTo(w io.Writer, rec *results.Run, rep int) {
	fmt.Fprintf(w, "\n%s  %s  %s  rep %d  %s %s\n", rec.ID, rec.Board, rec.ClockMHz, rep, rec.Tool, rec.ToolVersion)
	if rec.Throttle != nil {
		fmt.Fprintf(w, "throttled: %s\n", rec.Throttle)
	}
	export.WriteMetrics(w, rec)
}
