// Package harness runs one benchmark on one board, from power-on to stored
// result: it builds the image, serves the netboot, boots the board, reads
// its console, and files the outcome, whatever it is, in the results store.
// Everything a run starts (servers, namespace, QEMU) ends before Run returns.
package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/internal/bootparam"
	"github.com/bootbench/bootbench/internal/vbench"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/parse"
	"github.com/bootbench/bootbench/serialctl"
)

// Options say what to run.
type Options struct {
	Board    boards.Profile
	ClockMHz boards.MHz    // 0: the board's default
	Bench    string        // "speed"
	Seconds  time.Duration // per test; 0: the suite's default
	Algs     []string
	Rep      int

	Kernel   string // kernel image; "" fetches the board's Debian kernel
	Source   string // bootbench module source, to build the image
	CacheDir string // images, kernels, run directories
	Append   string // extra kernel command line parameters
	// Transport is how iPXE fetches the kernel and image: "http" (default,
	// several times faster) or "tftp". The script itself always comes by
	// TFTP, the way the DHCP boot file does.
	Transport string

	BootTimeout time.Duration // 0: the profile's
	RunTimeout  time.Duration // 0: the profile's

	Store    *results.Store
	Progress io.Writer // one line per stage; nil for silence
}

// ErrInterrupted is returned when the caller cancelled the run.
var ErrInterrupted = errors.New("run interrupted")

// Run performs one run and stores it. The returned run is what was stored;
// err says why it did not succeed (the run's Reason holds the same text).
// A nil run with an error means nothing could be stored.
func Run(ctx context.Context, o Options) (*results.Run, error) {
	p := o.Board
	if p.Virtual == nil {
		return nil, fmt.Errorf("board %s: only virtual boards can be run so far", p.Name)
	}
	if o.ClockMHz == 0 {
		o.ClockMHz = p.DefaultClock
	}
	if o.Transport == "" {
		o.Transport = "http"
	}
	if o.Transport != "http" && o.Transport != "tftp" {
		return nil, fmt.Errorf("unknown transport %q (http or tftp)", o.Transport)
	}
	if o.Bench == "" {
		o.Bench = "speed"
	}
	if o.BootTimeout == 0 {
		o.BootTimeout = p.BootTimeout
	}
	if o.RunTimeout == 0 {
		o.RunTimeout = p.RunTimeout
	}
	icount := -1
	if p.ClockMethod == "qemu-icount" {
		s, err := boards.IcountShift(o.ClockMHz)
		if err != nil {
			return nil, fmt.Errorf("board %s: %w", p.Name, err)
		}
		icount = s
	}
	mac, _ := net.ParseMAC(p.Virtual.MAC)

	r := &run{o: o, start: time.Now(), rec: &results.Run{
		ID: results.NewRunID(), Board: p.Name, ClockMHz: int(o.ClockMHz), Rep: o.Rep, Bench: o.Bench, Started: time.Now(),
	}}
	clock := "its default clock"
	if o.ClockMHz > 0 {
		clock = fmt.Sprintf("%d MHz", o.ClockMHz)
	}
	r.say("run", "%s on %s at %s, bench %s", r.rec.ID, p.Name, clock, o.Bench)
	err := r.boot(ctx, mac, icount)
	return r.finish(ctx, err)
}

type run struct {
	o     Options
	start time.Time
	rec   *results.Run
	out   []byte // the benchmark's verified output

	mu        sync.Mutex
	stageFrom time.Time
	stage     string
	shown     int // bytes of benchmark output already echoed
}

// showProgress echoes the benchmark's own complete output lines as they
// arrive, so a long run is visibly alive.
func (r *run) showProgress(out []byte) {
	for {
		i := strings.IndexByte(string(out[r.shown:]), '\n')
		if i < 0 {
			return
		}
		line := strings.TrimSpace(string(out[r.shown : r.shown+i]))
		r.shown += i + 1
		if line != "" {
			r.say("bench", "| %s", clip(line, 110))
		}
	}
}

func (r *run) say(stage, format string, args ...any) {
	if r.o.Progress == nil {
		return
	}
	fmt.Fprintf(r.o.Progress, "[%6.1fs] %-8s %s\n", time.Since(r.start).Seconds(), stage, fmt.Sprintf(format, args...))
}

// enter closes the current stage's timing and opens the next.
func (r *run) enter(stage string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.stage != "" {
		r.rec.Stages = append(r.rec.Stages, results.Stage{Name: r.stage, Duration: now.Sub(r.stageFrom)})
	}
	r.stage, r.stageFrom = stage, now
}

func (r *run) boot(ctx context.Context, mac net.HardwareAddr, icount int) error {
	o, p := r.o, r.o.Board

	r.enter("image")
	img, err := initramfs.Build(ctx, initramfs.Spec{Arch: p.Arch, GOARM: p.GOARM, GOMIPS: p.GOMIPS, Bench: o.Bench, Source: o.Source}, filepath.Join(o.CacheDir, "images"))
	if err != nil {
		return err
	}
	r.rec.ImageDigest = "sha256:" + img.Digest
	how := fmt.Sprintf("built in %.1fs", img.Took.Seconds())
	if img.Cached {
		how = "cached"
	}
	r.say("image", "%s initramfs %s (%s gzipped), %s", p.Arch, mib(img.Size), mib(img.GzipSize), how)

	kernel := o.Kernel
	if kernel == "" {
		k := p.Kernel
		if kernel, err = vbench.Kernel(ctx, o.CacheDir, o.Source, k.DebianArch, k.Flavour); err != nil {
			return err
		}
	}
	r.rec.Kernel = filepath.Base(kernel)

	dir, err := os.MkdirTemp(o.CacheDir, "run-"+string(r.rec.ID)+"-")
	if err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	defer os.RemoveAll(dir)
	for _, ns := range sweepStale(o.CacheDir) {
		r.say("network", "removed namespace %s left by a bootbench that was killed", ns)
	}
	nsName := vbench.NamePrefix + r.rec.ID.Short()
	if err := writeOwner(dir, nsName); err != nil {
		return fmt.Errorf("run directory: %w", err)
	}

	params := bootparam.Params{Run: string(r.rec.ID), Bench: o.Bench, Seconds: o.Seconds, Algs: o.Algs}
	cmdline := strings.TrimSpace(fmt.Sprintf("console=%s,%d panic=-1 quiet loglevel=1 %s %s", p.Console, p.Baud, params, o.Append))
	m := vbench.Machine{
		Binary: p.Virtual.QEMU, Args: p.Virtual.Args, NIC: p.Virtual.NIC, MAC: mac,
		Memory: p.RAMMB, Icount: icount, SeaBIOSSerial: p.Virtual.SeaBIOSSerial, UBootEnv: p.Virtual.UBootEnv,
	}
	var n *vbench.Net
	events := make(chan netboot.Event, 64)

	switch p.Boot {
	case "qemu-direct":
		// No firmware and no network: QEMU loads the kernel itself, as a
		// bootloader that takes one file from flash would.
		if err := r.stageDirect(&m, kernel, img.Path, dir, cmdline); err != nil {
			return err
		}
	case "ipxe", "uboot-dhcp":
		tftpRoot := filepath.Join(dir, "tftp")
		if err := os.Mkdir(tftpRoot, 0o755); err != nil {
			return err
		}
		r.enter("network")
		if n, err = vbench.NewNet(ctx, nsName); err != nil {
			return err
		}
		defer n.Close()
		bootFile, err := stageNetboot(p.Boot, o.Transport, n.HostIP, r.rec.ID, kernel, img.Path, tftpRoot, cmdline)
		if err != nil {
			return err
		}
		report := func(e netboot.Event) {
			select {
			case events <- e:
			default: // progress is best effort; never stall a server
			}
		}
		plan := netboot.StaticPlan{Server: n.HostIP, Mask: n.Mask, Hosts: map[string]netboot.Host{
			mac.String(): {IP: n.BoardIP, BootFile: bootFile, IPXEScript: bootFile},
		}}
		stopServers, err := startServers(n, tftpRoot, plan, report)
		if err != nil {
			return err
		}
		defer stopServers()
		r.say("network", "namespace %s, tap %s, DHCP+TFTP+HTTP on %s", n.Name, n.Tap, n.HostIP)
	default:
		return fmt.Errorf("board %s: boot method %q is not supported for virtual boards (ipxe, uboot-dhcp, qemu-direct)", p.Name, p.Boot)
	}

	q, err := vbench.Start(ctx, n, m, dir)
	if err != nil {
		return err
	}
	defer q.Kill()
	con, err := serialctl.Open(q.PTY, p.Baud)
	if err != nil {
		return err
	}
	defer func() {
		con.Close()
		r.rec.Transcript = con.Transcript()
	}()
	if err := q.Continue(); err != nil {
		return err
	}
	clock := "real-time clock"
	if icount >= 0 {
		clock = fmt.Sprintf("-icount shift=%d", icount)
	}
	if m.Kernel != "" {
		r.enter("kernel")
		r.say("power", "%s started (%s), console %s, booting %s directly", m.Binary, clock, q.PTY, r.rec.Kernel)
	} else {
		r.enter("firmware")
		r.say("power", "%s started (%s), console %s", m.Binary, clock, q.PTY)
	}
	return r.watch(ctx, q, con, events)
}

// watch follows the boot on the console and the servers until the board
// reports its result, fails, or runs out of time.
func (r *run) watch(ctx context.Context, q *vbench.QEMU, con *serialctl.Console, events <-chan netboot.Event) error {
	col := serialctl.NewCollector(string(r.rec.ID))
	deadline := time.NewTimer(r.o.BootTimeout)
	defer deadline.Stop()
	waiting := "hello"
	var last string
	lines := con.Lines()
	// QEMU stays up after the guest powers off (so no frame is lost with
	// the pty); ask it now and then whether the board is still on.
	poll := time.NewTicker(2 * time.Second)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return ErrInterrupted
		case <-deadline.C:
			return fmt.Errorf("no %s from the board within %s (last console line: %q)", waiting, r.timeout(waiting), clip(last, 120))
		case <-poll.C:
			if q.PoweredOff() {
				return r.afterPowerOff(ctx, col, lines, last, waiting)
			}
		case <-q.Exited():
			return r.afterPowerOff(ctx, col, lines, last, waiting)
		case e := <-events:
			r.netEvent(e)
		case l, ok := <-lines:
			if !ok {
				lines = nil
				continue
			}
			if p := serialctl.Printable(l.Text); p != "" {
				last = p
			}
			if strings.Contains(last, "Linux version") || strings.HasPrefix(last, "Booting the kernel") {
				r.say("kernel", "%s", clip(last, 100))
			}
			ev, err := col.Feed(l.Text)
			switch {
			case err != nil:
				return err
			case ev == serialctl.Hello:
				h := col.Result().Hello
				r.rec.Hello = col.Result().HelloRaw
				r.enter("bench")
				r.say("bench", "board up: %s, kernel %s, cpu %q, BogoMIPS %s; running %s", h.Arch, h.Kernel, h.CPU, h.BogoMIPS, h.Bench)
				waiting = "result"
				deadline.Reset(r.o.RunTimeout)
			case ev == serialctl.Progress:
				r.showProgress(col.Output())
			case ev == serialctl.Done, ev == serialctl.Failed:
				return r.result(col, ev, nil)
			}
		}
	}
}

// afterPowerOff reads what the console still holds once the board is off,
// then judges. A pty whose other end is gone does not always report it, so
// the last bytes get a moment rather than a wait for an end.
func (r *run) afterPowerOff(ctx context.Context, col *serialctl.Collector, lines <-chan serialctl.Line, last, waiting string) error {
	grace := time.After(time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return fmt.Errorf("the board powered off before its %s (last console line: %q)", waiting, clip(last, 120))
			}
			if p := serialctl.Printable(l.Text); p != "" {
				last = p
			}
			if ev, err := col.Feed(l.Text); err != nil || ev == serialctl.Done || ev == serialctl.Failed {
				return r.result(col, ev, err)
			}
		case <-grace:
			return fmt.Errorf("the board powered off before its %s (last console line: %q)", waiting, clip(last, 120))
		case <-ctx.Done():
			return ErrInterrupted
		}
	}
}

func (r *run) timeout(waiting string) time.Duration {
	if waiting == "result" {
		return r.o.RunTimeout
	}
	return r.o.BootTimeout
}

func (r *run) result(col *serialctl.Collector, ev serialctl.Event, err error) error {
	r.out = col.Output()
	if err != nil {
		return err
	}
	if ev == serialctl.Failed {
		return fmt.Errorf("board failed: %s", col.Reason)
	}
	res := col.Result()
	r.out = res.Output
	if res.Exit != 0 {
		return fmt.Errorf("benchmark exited with status %d", res.Exit)
	}
	return nil
}

func (r *run) netEvent(e netboot.Event) {
	switch e.Kind {
	case "dhcp-offer", "bootp-reply":
		r.enter("netboot")
		r.say("dhcp", "%s to %s: %s, boot file %s", e.Kind, e.MAC, e.IP, e.File)
	case "dhcp-ack", "dhcp-nak":
		r.say("dhcp", "%s to %s: %s", e.Kind, e.MAC, e.IP)
	case "tftp-done", "http-done":
		r.say(strings.TrimSuffix(e.Kind, "-done"), "%s %s in %.2fs (%s/s)", e.File, mib(e.Bytes), e.Duration.Seconds(), mib(int64(float64(e.Bytes)/max(e.Duration.Seconds(), 1e-3))))
		if e.File == "initramfs.cpio" || strings.HasSuffix(e.File, "/initramfs.cpio") {
			r.enter("kernel")
			r.say("kernel", "booting %s", r.rec.Kernel)
		}
	case "tftp-error", "http-error", "dhcp-error":
		r.say("netboot", "%s %s: %v", e.Kind, e.File, e.Err)
	}
}

// finish classifies the outcome, parses the output and stores the run.
func (r *run) finish(ctx context.Context, err error) (*results.Run, error) {
	r.enter("")
	rec := r.rec
	rec.Finished = time.Now()
	rec.RawOutput = r.out
	if err == nil {
		out, perr := parse.Auto(r.out)
		if perr != nil {
			err = fmt.Errorf("benchmark output not understood: %w", perr)
		} else {
			rec.Tool, rec.ToolVersion = results.SplitToolVersion(out.Tool, out.Version)
			for _, m := range out.Metrics {
				rec.Metrics = append(rec.Metrics, results.Metric{Name: m.Name, Unit: m.Unit, Value: m.Value})
			}
		}
	}
	switch {
	case err == nil:
		rec.Status = results.StatusOK
	case errors.Is(err, ErrInterrupted) || ctx.Err() != nil:
		rec.Status, err = results.StatusInterrupted, ErrInterrupted
	case errors.Is(err, serialctl.ErrCorrupt):
		rec.Status = results.StatusCorrupt
	default:
		rec.Status = results.StatusFailed
	}
	if err != nil {
		rec.Reason = firstLine(err.Error())
		rec.Metrics = nil // a failed run's partial output is kept raw, never as figures
	}
	if r.o.Store == nil {
		return rec, err
	}
	if serr := r.o.Store.SaveRun(context.WithoutCancel(ctx), rec); serr != nil {
		if err == nil {
			err = serr
		}
		return nil, fmt.Errorf("%w (and storing the run failed: %v)", err, serr)
	}
	r.say("stored", "run %s: %s, %d metrics", rec.ID, rec.Status, len(rec.Metrics))
	return rec, err
}

// IPXEScript is what iPXE runs: load our kernel and image from the server
// by transport ("http" or "tftp"), with the run's parameters on the kernel
// command line.
func IPXEScript(transport string, server net.IP, runID, cmdline string) string {
	base := transport + "://" + server.String() + "/"
	return "#!ipxe\n" +
		"echo bootbench: run " + runID + " loading from " + server.String() + " by " + transport + "\n" +
		"kernel " + base + "vmlinuz " + cmdline + "\n" +
		"initrd " + base + "initramfs.cpio\n" +
		"boot\n"
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func mib(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
