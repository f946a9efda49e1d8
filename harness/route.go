package harness

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/bootbench/bootbench/internal/bootparam"
	"github.com/bootbench/bootbench/internal/frame"
	"github.com/bootbench/bootbench/internal/route"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/serialctl"
)

// A Router is the route benchmark's host side: the networks on either
// side of the board. The virtual bench's is internal/vbench.RouteNet.
type Router interface {
	// Ports are the board's two routed ports, client side first.
	Ports() []bootparam.Port
	// Sweep sends the traffic of every packet size through the board,
	// or with direct past it.
	Sweep(ctx context.Context, direct bool) ([]route.Figure, error)
	String() string
}

// routeStep is a finished measurement: of a configuration, or of the
// direct baseline.
type routeStep struct {
	config string
	figs   []route.Figure
	err    error
}

// routeDriver takes the board through the configurations: on hello it
// measures the direct baseline, then asks the board for each
// configuration in turn, measures when the board is ready, and finally
// tells it it is done. One measurement runs at a time, on a goroutine,
// so the console is read meanwhile.
type routeDriver struct {
	r       *run
	con     *serialctl.Console
	configs []string
	next    int    // index of the next configuration to ask for
	waiting string // the configuration asked for and not yet ready

	steps   chan routeStep
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	metrics []results.Metric
	version string // iperf3's
}

func newRouteDriver(r *run, con *serialctl.Console) *routeDriver {
	configs := r.o.RouteConfigs
	if len(configs) == 0 {
		configs = bootparam.RouteConfigs
	}
	return &routeDriver{r: r, con: con, configs: configs, steps: make(chan routeStep, 1)}
}

// measure starts one sweep on its goroutine.
func (d *routeDriver) measure(ctx context.Context, config string) {
	mctx, cancel := context.WithCancel(ctx)
	d.cancel = cancel
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		figs, err := d.r.o.Router.Sweep(mctx, config == route.Direct)
		d.steps <- routeStep{config: config, figs: figs, err: err}
	}()
}

// stop ends a sweep still running and waits for it.
func (d *routeDriver) stop() {
	if d.cancel != nil {
		d.cancel()
	}
	d.wg.Wait()
}

// hello starts the run: the baseline first, while the board waits.
func (d *routeDriver) hello(ctx context.Context) {
	d.r.say("route", "direct baseline: %s", d.r.o.Router)
	d.measure(ctx, route.Direct)
}

// ready is the board routing in a configuration: measure it.
func (d *routeDriver) ready(ctx context.Context, b frame.ReadyBody) error {
	if b.Config != d.waiting {
		return failf(FailBoard, false, "the board reported configuration %q ready, %q was asked for", b.Config, d.waiting)
	}
	d.waiting = ""
	ct := "no conntrack"
	if b.Conntrack {
		ct = "conntrack"
	}
	d.r.say("route", "%s: board ready, %d rules, %s", b.Config, len(b.Rules), ct)
	d.measure(ctx, b.Config)
	return nil
}

// done is a finished sweep: keep its figures and ask for the next
// configuration, or tell the board it is done.
func (d *routeDriver) done(s routeStep) error {
	d.cancel()
	d.wg.Wait()
	if s.err != nil {
		return failf(FailExit, false, "route %s: %v", s.config, s.err)
	}
	ms := route.Metrics(s.config, s.figs)
	d.metrics = append(d.metrics, ms...)
	for _, f := range s.figs {
		if f.Proto == "tcp" {
			d.r.say("route", "%s: tcp %d B: %.1f Mbit/s", s.config, f.Size, f.Test.Received/1e6)
		}
		d.version = f.Test.Version
	}
	cmd := "done"
	if d.next < len(d.configs) {
		cmd, d.waiting = d.configs[d.next], d.configs[d.next]
		d.next++
	}
	if _, err := d.con.Write([]byte("bootbench route " + cmd + "\n")); err != nil {
		return fail(FailSetup, fmt.Errorf("route: tell the board %q over the console: %w", cmd, err))
	}
	return nil
}

// result is the run's metrics: the host's figures and the board's
// counters, each configuration's checked to be there.
func (d *routeDriver) result(res serialctl.Result) ([]results.Metric, error) {
	ms := slices.Clone(d.metrics)
	for _, c := range d.configs {
		i := slices.IndexFunc(res.Counters, func(b frame.CountersBody) bool { return b.Config == c })
		if i < 0 {
			return nil, fmt.Errorf("the board sent no counters for configuration %s", c)
		}
		b := res.Counters[i]
		ms = append(ms,
			results.Metric{Name: "route-forwarded/" + c, Unit: "count", Value: float64(b.Forwarded)},
			results.Metric{Name: "route-dropped/" + c, Unit: "count", Value: float64(b.Dropped)},
			results.Metric{Name: "conntrack-entries/" + c, Unit: "count", Value: float64(b.ConntrackEntries)})
	}
	return ms, nil
}
