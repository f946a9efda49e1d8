package route

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"sync"

	"github.com/bootbench/bootbench/contract/bootparam"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/results"
)

// A Router is the host's networks on either side of the board. The
// virtual bench's is vbench.RouteNet.
type Router interface {
	// Ports are the board's two routed ports, client side first.
	Ports() []bootparam.Port
	// Sweep sends the traffic of every packet size along path: through
	// the board, or past it over the direct link (path.Direct), with
	// path.Run on the sides it chose, telling mark as each test begins
	// and ends.
	Sweep(ctx context.Context, path Path, mark Mark) ([]Figure, error)
	String() string
}

// Driver is the route benchmark's host side in a run (a
// harness.HostDriver): it takes the board through Configs (default: all
// of bootparam.RouteConfigs) and measures each through Router.
type Driver struct {
	Router  Router
	Configs []string
}

// Ports implements harness.HostDriver.
func (d *Driver) Ports() []bootparam.Port { return d.Router.Ports() }

func (d *Driver) String() string { return d.Router.String() }

// Start implements harness.HostDriver.
func (d *Driver) Start(con io.Writer, say harness.Say) harness.HostRun {
	configs := d.Configs
	if len(configs) == 0 {
		configs = bootparam.RouteConfigs
	}
	dr := &drive{router: d.Router, con: con, say: say, configs: configs, steps: make(chan harness.Step, 1)}
	dr.baselines = []string{Direct}
	if slices.Contains(configs, WireGuard) {
		dr.baselines = append(dr.baselines, DirectWireGuard)
		dr.tunnel, dr.tunnelErr = NewTunnel()
	}
	return dr
}

// drive takes the board through the configurations: on hello it
// measures the direct baselines, then asks the board for each
// configuration in turn, measures when the board is ready, and finally
// tells it it is done. One measurement runs at a time, on a goroutine,
// so the console is read meanwhile.
type drive struct {
	router  Router
	con     io.Writer
	say     harness.Say
	configs []string
	// baselines are the direct baselines still to measure: "direct",
	// and "direct-wireguard" for the wireguard configuration.
	baselines []string
	tunnel    *Tunnel // the wireguard configurations' keys, made for the run
	tunnelErr error
	next      int    // index of the next configuration to ask for
	waiting   string // the configuration asked for and not yet ready

	steps   chan harness.Step
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	metrics []results.Metric
	version string // iperf3's
}

func (d *drive) Steps() <-chan harness.Step { return d.steps }

// measure starts one sweep on its goroutine.
func (d *drive) measure(ctx context.Context, config string) {
	mctx, cancel := context.WithCancel(ctx)
	d.cancel = cancel
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		path, err := d.path(config)
		var figs []Figure
		if err == nil {
			var mark Mark
			if !path.Direct {
				mark = d.markCPU
			}
			figs, err = d.router.Sweep(mctx, path, mark)
		}
		d.steps <- func() error { return d.done(ctx, config, figs, err) }
	}()
}

// path is the way config's traffic takes.
func (d *drive) path(config string) (Path, error) {
	p := Path{Config: config, Direct: config == Direct || config == DirectWireGuard}
	if config != WireGuard && config != DirectWireGuard {
		return p, nil
	}
	if d.tunnelErr != nil {
		return p, d.tunnelErr
	}
	p.Tunnel = d.tunnel
	for i, pt := range d.router.Ports() {
		a, err := netip.ParsePrefix(pt.Addr)
		if err != nil || i > 1 {
			return p, fmt.Errorf("the board's port %s: address %q", pt.MAC, pt.Addr)
		}
		p.Board[i] = a.Addr()
	}
	return p, nil
}

// markCPU tells the board a test begins or has ended, so that it samples
// its CPU over the test (benchinit's "bootbench route cpu begin|end
// <label>"). Only the sweep's goroutine writes to the console meanwhile:
// the next configuration is asked for once it is done.
func (d *drive) markCPU(label string, begin bool) error {
	what := "end"
	if begin {
		what = "begin"
	}
	if _, err := fmt.Fprintf(d.con, "bootbench route cpu %s %s\n", what, label); err != nil {
		return &harness.Failure{Kind: harness.FailSetup, Err: fmt.Errorf("route: tell the board test %s %ss over the console: %w", label, what, err)}
	}
	return nil
}

// Stop ends a sweep still running and waits for it.
func (d *drive) Stop() {
	if d.cancel != nil {
		d.cancel()
	}
	d.wg.Wait()
}

// Hello starts the run: the baselines first, while the board waits.
func (d *drive) Hello(ctx context.Context) {
	d.say(results.EventRoute, "direct baseline: %s", d.router)
	d.measureBaseline(ctx)
}

// measureBaseline measures the next baseline.
func (d *drive) measureBaseline(ctx context.Context) {
	b := d.baselines[0]
	d.baselines = d.baselines[1:]
	d.measure(ctx, b)
}

// Board takes the board's frames: ready is the board routing in a
// configuration, to measure; counters are what it counted in one.
func (d *drive) Board(ctx context.Context, ev frame.Event, res frame.Result) error {
	switch ev {
	case frame.EventReady:
		return d.ready(ctx, res.Ready[len(res.Ready)-1])
	case frame.EventCounters:
		c := res.Counters[len(res.Counters)-1]
		d.say(results.EventRoute, "%s: board forwarded %d, dropped %d, conntrack entries %d", c.Config, c.Forwarded, c.Dropped, c.ConntrackEntries)
	}
	return nil
}

func (d *drive) ready(ctx context.Context, b frame.ReadyBody) error {
	if b.Config != d.waiting {
		return &harness.Failure{Kind: harness.FailBoard, Err: fmt.Errorf("the board reported configuration %q ready, %q was asked for", b.Config, d.waiting)}
	}
	d.waiting = ""
	ct := "no conntrack"
	if b.Conntrack {
		ct = "conntrack"
	}
	d.say(results.EventRoute, "%s: board ready, %d rules, %s", b.Config, len(b.Rules), ct)
	d.measure(ctx, b.Config)
	return nil
}

// done is a finished sweep: keep its figures and ask for the next
// configuration, or tell the board it is done.
func (d *drive) done(ctx context.Context, config string, figs []Figure, err error) error {
	d.cancel()
	d.wg.Wait()
	if err != nil {
		return &harness.Failure{Kind: harness.FailExit, Err: fmt.Errorf("route %s: %v", config, err)}
	}
	d.metrics = append(d.metrics, Metrics(config, figs)...)
	for _, f := range figs {
		if f.Proto == "tcp" {
			d.say(results.EventRoute, "%s: tcp %d B: %.1f Mbit/s", config, f.Size, f.Test.Received/1e6)
		}
		d.version = f.Test.Version
	}
	if len(d.baselines) > 0 {
		d.measureBaseline(ctx)
		return nil
	}
	cmd := "done"
	if d.next < len(d.configs) {
		cmd, d.waiting = d.configs[d.next], d.configs[d.next]
		d.next++
		if cmd == WireGuard {
			// The board's keys and the tunnel's addresses go with the
			// command, not on the kernel command line, which is short
			// on some boards.
			cmd += " " + d.tunnel.BoardCommand()
		}
	}
	if _, err := d.con.Write([]byte("bootbench route " + cmd + "\n")); err != nil {
		return &harness.Failure{Kind: harness.FailSetup, Err: fmt.Errorf("route: tell the board %q over the console: %w", cmd, err)}
	}
	return nil
}

// Result is the run's metrics: the host's figures and the board's
// counters, each configuration's checked to be there.
func (d *drive) Result(res frame.Result) ([]results.Metric, string, string, error) {
	ms := slices.Clone(d.metrics)
	for _, c := range d.configs {
		i := slices.IndexFunc(res.Counters, func(b frame.CountersBody) bool { return b.Config == c })
		if i < 0 {
			return nil, "", "", fmt.Errorf("the board sent no counters for configuration %s", c)
		}
		b := res.Counters[i]
		ms = append(ms,
			results.Metric{Name: "route-forwarded/" + c, Unit: "count", Value: float64(b.Forwarded)},
			results.Metric{Name: "route-dropped/" + c, Unit: "count", Value: float64(b.Dropped)},
			results.Metric{Name: "conntrack-entries/" + c, Unit: "count", Value: float64(b.ConntrackEntries)})
		cpu, err := cpuMetrics(b)
		if err != nil {
			return nil, "", "", err
		}
		ms = append(ms, cpu...)
	}
	return ms, "iperf3", d.version, nil
}

// cpuMetrics are the board's CPU busy fractions over the tests of one
// configuration, from the clock ticks it counted over each.
func cpuMetrics(b frame.CountersBody) ([]results.Metric, error) {
	var ms []results.Metric
	for _, c := range b.CPU {
		name, ok := CPUMetric(c.Test, b.Config)
		if !ok {
			return nil, fmt.Errorf("the board sampled its CPU over test %q of %s, which no test is", c.Test, b.Config)
		}
		if c.Total == 0 || c.Busy > c.Total {
			return nil, fmt.Errorf("the board's CPU over test %s of %s: %d busy of %d clock ticks", c.Test, b.Config, c.Busy, c.Total)
		}
		ms = append(ms, results.Metric{Name: name, Unit: "fraction", Value: float64(c.Busy) / float64(c.Total)})
	}
	return ms, nil
}

// Firmware is the route benchmark's host side for a board under its own
// firmware (a harness.FirmwareHost): no frames come back from it, so the
// figures are the host's iperf3 ones, without the board's counters or
// CPU load. Its Router must be a Prober, to tell when the board forwards.
type Firmware struct {
	Router  Router
	version string // iperf3's
}

// NewFirmware checks that r can tell when the board forwards.
func NewFirmware(r Router) (*Firmware, error) {
	if _, ok := r.(Prober); !ok {
		return nil, fmt.Errorf("route networks %s cannot probe the path through a board", r)
	}
	return &Firmware{Router: r}, nil
}

// Forwards implements harness.FirmwareHost.
func (f *Firmware) Forwards(ctx context.Context) error {
	return f.Router.(Prober).Probe(ctx)
}

// Measure implements harness.FirmwareHost.
func (f *Firmware) Measure(ctx context.Context, config string) ([]results.Metric, error) {
	figs, err := f.Router.Sweep(ctx, Path{Config: config, Direct: config == Direct}, nil)
	if err != nil {
		return nil, err
	}
	for _, fig := range figs {
		f.version = fig.Test.Version
	}
	return Metrics(config, figs), nil
}

// Tool implements harness.FirmwareHost.
func (f *Firmware) Tool() (string, string) { return "iperf3", f.version }

func (f *Firmware) String() string { return f.Router.String() }

var _ harness.FirmwareHost = (*Firmware)(nil)
