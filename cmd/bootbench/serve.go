package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/rig"
)

const serveSynopsis = "serve [--inventory FILE] [--db PATH] [--proxy] [--once BOARD] [--log text|json] [--http ADDR]\n\n" +
	"The bench daemon: serves every board of the inventory at once and keeps their consoles\n" +
	"open. Plug a board in or power-cycle it: when it asks to boot, it gets its image with a\n" +
	"new run id, its console is watched, and the result is stored. Each board runs its\n" +
	"inventory job (bench, clock, seconds, algs; default the speed suite at its default\n" +
	"clock), one boot after another; several boards run at once.\n\n" +
	"On a terminal, one status line per board; otherwise a line per event (--log json for\n" +
	"JSON lines). A MAC not in the inventory gets no answer and a ready-to-paste entry.\n" +
	"Ctrl-C stops answering, lets running benchmarks finish and stores them; a second\n" +
	"Ctrl-C stops at once (runs stored as interrupted). --once BOARD serves that board until\n" +
	"it has stored one result, then exits 0 (ok) or 1.\n\n" +
	"--http 8080 serves the bench page at http://127.0.0.1:8080/: per board its stage, clock,\n" +
	"last result, a live console tail and its history, read-only. It listens on this host\n" +
	"only unless --http names another address and --http-allow-remote is given."

func cmdServe(ctx context.Context, args []string) error {
	fs := newCommand("serve", serveSynopsis, "")
	inventory := fs.String("inventory", "", "bench inventory (default $BOOTBENCH_INVENTORY, else $XDG_CONFIG_HOME/bootbench/bench.yaml when it exists)")
	proxy := fs.Bool("proxy", false, "serve as proxyDHCP: the bench segment's own DHCP server hands out addresses")
	once := fs.String("once", "", "serve only this board, until it has stored one result")
	logFormat := fs.String("log", "", "text or json: one line per event (default: status lines on a terminal, text otherwise)")
	pageFl := addPageFlags(fs)
	fs.storeFlag()
	if err := fs.parse(args); err != nil {
		return err
	}
	pageAddr, err := checkServeOutputs(*logFormat, pageFl)
	if err != nil {
		return err
	}
	inv, served, err := servedBoards(ctx, *inventory, *once)
	if err != nil {
		return err
	}
	src, _ := initramfs.FindSource() // none: images come from the prebuilt set, as for run
	show := newServeDisplay(os.Stdout, *logFormat, served)
	defer show.close()
	st, err := openSpooled(ctx, *fs.db, show.note)
	if err != nil {
		return err
	}
	defer st.Close()
	dbPath := st.name
	page, err := startPage(ctx, pageAddr, st.Store, served, show)
	if err != nil {
		return err
	}
	defer page.close()
	hard, stop, cancelStop, endSignals := serveSignals(ctx, show)
	defer endSignals()

	bench, closeBench, err := rig.OpenBench(ctx, cacheDir(), inv, *proxy, nil, show.note)
	if err != nil {
		return err
	}
	defer closeBench()
	var onceErr error
	job := plan.Job{Source: src, Transport: plan.HTTP}
	autos := newServedAutos(job, served)
	o := harness.ServeOptions{
		Bench: bench, Boards: served,
		Rig: harness.Rig{Builders: builders(src), Store: st.saver(), Events: func(e harness.Event) {
			show.event(e)
			page.event(e)
		}},
		Job:     job,
		Console: page.consoleTap(),
		Done: func(rec *results.Run, err error) {
			show.done(rec, err)
			page.done(rec, err)
			if said := autos.served(rec); said != "" {
				show.note(said)
			}
			if said := st.sayUnstored(rec, err, show.note); said != nil {
				err = said
			}
			if *once != "" {
				onceErr = err
				cancelStop()
			}
		},
		Unknown:     func(u harness.UnknownBoard) { show.note(unknownHint(u, inv)) },
		UnknownMore: func(n int, every time.Duration) { show.note(unknownMoreNote(n, every, inv)) },
	}
	show.note(fmt.Sprintf("serving %d board(s) by %s; results go to %s", len(served), bench, dbPath))
	stopDelivery := st.deliverEvery(hard, spoolEvery, show.note)
	err = harness.Serve(hard, stop, o)
	stopDelivery()
	if err != nil {
		return err
	}
	return serveExit(hard.Err() != nil, *once, onceErr, dbPath)
}

// checkServeOutputs checks --log and the bench page's flags, and returns
// the page's address ("" for none).
func checkServeOutputs(logFormat string, pageFl pageFlags) (string, error) {
	if logFormat != "" && logFormat != "text" && logFormat != "json" {
		return "", usageErr("serve: --log %q: text or json", logFormat)
	}
	return pageFl.check()
}

// unknownMoreNote says how many more unknown boards asked to boot than
// got a hint.
func unknownMoreNote(n int, every time.Duration, inv *boards.Inventory) string {
	return fmt.Sprintf("%d more MACs not in %s asked to boot in the last %s (hints are shown for the first few; none gets an answer)", n, inv.Path, every)
}

// servedAutos are the served boards whose job has reps: auto, each
// followed as run follows its sweep.
type servedAutos struct {
	mu      sync.Mutex
	byBoard map[string]*autoWatch
}

func newServedAutos(job plan.Job, served []harness.Served) *servedAutos {
	a := &servedAutos{byBoard: map[string]*autoWatch{}}
	for _, sv := range served {
		if w := newAutoWatch(harness.SweepOf(job, sv), io.Discard); w != nil {
			a.byBoard[sv.Board.Name] = w
		}
	}
	return a
}

// served takes a stored run; what it returns is to be said.
func (a *servedAutos) served(rec *results.Run) string {
	if rec == nil {
		return ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.byBoard[rec.Board].served(rec)
}

// serveExit is how serve's end reads to the shell: 130 when Ctrl-C
// ended it, and with --once the verdict of the one run it waited for.
func serveExit(interrupted bool, once string, onceErr error, dbPath string) error {
	if interrupted && once == "" {
		return &exitError{code: 130, err: fmt.Errorf("interrupted; runs in progress were stored as interrupted (store: %s)", dbPath)}
	}
	if once != "" && onceErr != nil {
		return fmt.Errorf("serve --once %s: %w", once, onceErr)
	}
	return nil
}

// serveSignals makes serve's own signal handling: the first Ctrl-C (or
// SIGTERM) ends stop, so no more boots are answered, the second ends hard,
// which stops the runs in progress. end releases the signals.
func serveSignals(ctx context.Context, show *serveDisplay) (hard, stop context.Context, cancelStop func(), end func()) {
	hard, cancelHard := context.WithCancel(context.WithoutCancel(ctx))
	stop, cancelStop = context.WithCancel(hard)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for n := 0; ; n++ {
			select {
			case <-sigs:
			case <-hard.Done():
				return
			}
			if n == 0 {
				show.note("stopping: no more boots are answered; boards not past their netboot stop now, runs in progress finish (Ctrl-C again to stop them now)")
				cancelStop()
			} else {
				show.note("stopping now: runs in progress are stored as interrupted")
				cancelHard()
				return
			}
		}
	}()
	return hard, stop, cancelStop, func() {
		signal.Stop(sigs)
		cancelStop()
		cancelHard()
	}
}

// servedBoards are the inventory's boards (or the one --once names), each
// with its console.
func servedBoards(ctx context.Context, inventoryFlag, once string) (*boards.Inventory, []harness.Served, error) {
	path := boards.InventoryPath(inventoryFlag)
	if path == "" {
		return nil, nil, usageErr("serve: no inventory: serve runs the boards of a real bench (--inventory FILE, or $BOOTBENCH_INVENTORY); virtual boards are run with 'bootbench run'")
	}
	inv, err := boards.LoadInventory(ctx, path)
	if err != nil {
		return nil, nil, inventoryErr(err)
	}
	var served []harness.Served
	for _, b := range inv.Boards {
		if once != "" && b.Name != once {
			continue
		}
		if b.OwnFirmware {
			if once != "" {
				return nil, nil, usageErr("serve --once: board %s keeps its own firmware (image: none): serve answers netboots; run it with 'bootbench run --board %s --bench route'", b.Name, b.Name)
			}
			continue // it never netboots: nothing to answer
		}
		served = append(served, harness.Served{Board: b, Target: &harness.Wired{Port: b.Console, Baud: b.Baud}, Job: b.Job})
	}
	if len(served) == 0 {
		return nil, nil, usageErr("serve --once: no board %q in %s", once, path)
	}
	return inv, served, nil
}

// unknownHint is what to paste into bench.yaml for a board that asked to
// boot and is not there.
func unknownHint(u harness.UnknownBoard, inv *boards.Inventory) string {
	profile := "pc-x86_64"
	switch {
	case strings.HasPrefix(u.VendorClass, "Mips_boot"):
		profile = "rb450g # a MikroTik RouterBOARD: see 'bootbench boards list'"
	case strings.HasPrefix(u.VendorClass, "U-Boot"):
		profile = "qemu-arm64 # a U-Boot board: pick its model in 'bootbench boards list'"
	case boards.RaspberryPiMAC(u.MAC):
		profile = "rpi4b # a Raspberry Pi (or rpi3b-plus); add serial: the 8 hex digits of the folder its boot ROM asks for"
	}
	what := strings.TrimSpace(strings.Join([]string{u.VendorClass, u.ClientArch}, ", "))
	if what == "" || what == "," {
		what = "no vendor class"
	}
	return fmt.Sprintf("%s asked to boot and is not in %s (%s); it gets no answer. To serve it, add:\n"+
		"  board%d:\n    profile: %s\n    mac: \"%s\"\n    address: %s\n    console: /dev/serial/by-id/...   # its serial adapter\n    power: {driver: manual}",
		u.MAC, inv.Path, what, len(inv.Boards)+1, profile, u.MAC, freeAddress(inv))
}

// freeAddress is the first address of the bench subnet no board has.
func freeAddress(inv *boards.Inventory) netip.Addr {
	used := map[netip.Addr]bool{inv.Bench.Address.Addr(): true}
	for _, b := range inv.Boards {
		used[b.Address] = true
	}
	a := inv.Bench.Address.Masked().Addr().Next()
	for used[a] && inv.Bench.Address.Contains(a.Next()) {
		a = a.Next()
	}
	return a
}

// serveDisplay shows what serve does: one status line per board, redrawn,
// on a terminal; else a line per event (text or JSON).
type serveDisplay struct {
	mu     sync.Mutex
	w      io.Writer
	format string // "status", "text" or "json"
	names  []string
	status map[string]*boardStatus
	drawn  int // status lines on screen
	ticker *time.Ticker
	quit   chan struct{}
}

type boardStatus struct {
	run   results.RunID
	stage string
	since time.Time
	last  string
}

func newServeDisplay(w io.Writer, format string, served []harness.Served) *serveDisplay {
	d := &serveDisplay{w: w, format: format, status: map[string]*boardStatus{}, quit: make(chan struct{})}
	if d.format == "" {
		d.format = "text"
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			d.format = "status"
		}
	}
	for _, s := range served {
		d.names = append(d.names, s.Board.Name)
		d.status[s.Board.Name] = &boardStatus{stage: "waiting for a boot", last: "-"}
	}
	sort.Strings(d.names)
	if d.format == "status" {
		d.ticker = time.NewTicker(time.Second)
		go func() {
			for {
				select {
				case <-d.ticker.C:
					d.mu.Lock()
					d.redraw()
					d.mu.Unlock()
				case <-d.quit:
					return
				}
			}
		}()
	}
	return d
}

func (d *serveDisplay) close() {
	if d.ticker != nil {
		d.ticker.Stop()
		close(d.quit)
	}
}

// event is a run's progress.
func (d *serveDisplay) event(e harness.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if st := d.status[e.Board]; st != nil {
		if st.run != e.Run {
			st.run, st.since = e.Run, e.Time
		}
		st.stage = string(e.Stage)
	}
	switch d.format {
	case "json":
		json.NewEncoder(d.w).Encode(map[string]any{"time": e.Time.UTC().Format(time.RFC3339Nano), "board": e.Board, "run": e.Run, "event": e.Stage, "detail": e.Msg})
	case "text":
		fmt.Fprintf(d.w, "%s %-10s %-8s %s\n", e.Time.Format("15:04:05"), e.Board, e.Stage, e.Msg)
	default:
		d.redraw()
	}
}

// done is a stored run.
func (d *serveDisplay) done(rec *results.Run, err error) {
	if rec == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	last := fmt.Sprintf("%s %s, %d metrics", rec.ID, rec.Status, len(rec.Metrics))
	if why := rec.Why(); why != "" {
		last += ": " + why
	}
	if kept, lost, ok := unstored(err); ok {
		switch {
		case kept != nil:
			last += " (not stored: kept in the spool)"
		case lost != nil:
			last += " (NOT STORED: figures printed above)"
		}
	}
	if st := d.status[rec.Board]; st != nil {
		st.stage, st.last, st.run = "waiting for a boot", last, ""
	}
	switch d.format {
	case "json":
		json.NewEncoder(d.w).Encode(map[string]any{"time": time.Now().UTC().Format(time.RFC3339Nano), "board": rec.Board, "run": rec.ID, "event": "result", "status": rec.Status, "metrics": len(rec.Metrics), "reason": rec.Why()})
	case "text":
		fmt.Fprintf(d.w, "%s %-10s %-8s %s\n", time.Now().Format("15:04:05"), rec.Board, "result", last)
	default:
		d.redraw()
	}
}

// note is a message about the bench rather than one board.
func (d *serveDisplay) note(msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch d.format {
	case "json":
		json.NewEncoder(d.w).Encode(map[string]any{"time": time.Now().UTC().Format(time.RFC3339Nano), "event": "note", "detail": msg})
	case "status":
		d.clear()
		fmt.Fprintln(d.w, msg)
		d.redraw()
	default:
		fmt.Fprintf(d.w, "%s %s\n", time.Now().Format("15:04:05"), msg)
	}
}

// redraw rewrites the status lines in place.
func (d *serveDisplay) redraw() {
	if d.format != "status" {
		return
	}
	d.clear()
	for _, n := range d.names {
		st := d.status[n]
		elapsed := ""
		if st.run != "" {
			elapsed = fmt.Sprintf("%5.0fs", time.Since(st.since).Seconds())
		}
		fmt.Fprintf(d.w, "%-12s %-20s %6s  last: %s\n", n, st.stage, elapsed, clipText(st.last, 80))
	}
	d.drawn = len(d.names)
}

func (d *serveDisplay) clear() {
	for ; d.drawn > 0; d.drawn-- {
		fmt.Fprint(d.w, "\x1b[1A\x1b[2K")
	}
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
