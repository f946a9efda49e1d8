// Package benchpage is the bench page of `bootbench serve --http`: a
// read-only web page a person leaves open beside the bench. Per board it
// shows the stage of the run in progress, its clock, the last stored
// result with its headline figures, a live tail of the console and the
// board's history drawn by the HTML report (results/export).
//
// It is fed what serve's own log is fed: the harness's events, the
// consoles' lines and the stored runs. Everything it shows reaches the
// browser over one server-sent event stream per page; a client that does
// not keep up is dropped (its browser reconnects and starts from a fresh
// snapshot), so the page never slows a boot.
package benchpage

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/internal/redact"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/export"
	"github.com/bootbench/bootbench/results/store"
	"github.com/bootbench/bootbench/serialctl"
)

// ConsoleLines is how many console lines the page keeps per board: a
// boot's last screens, from the bootloader to the benchmark's output.
const ConsoleLines = 200

// maxLineRunes clips a console line: noise on a serial line can be one
// endless line.
const maxLineRunes = 400

// Waiting is the stage of a board with no run in progress: serve never
// switches power, so it knows only that the board has not asked to boot.
const Waiting = "waiting for a boot"

// Board is one served board as the page names it.
type Board struct {
	Name    string
	Profile string
}

// Page is the bench page's state and the streams that carry it.
type Page struct {
	store *store.Store

	mu     sync.Mutex
	boards map[string]*board
	names  []string
	subs   map[*subscriber]struct{}
	quit   chan struct{}
	closed bool

	// heartbeat is how often an idle stream gets a comment, so proxies
	// and browsers do not take it for dead.
	heartbeat time.Duration
	// writeTimeout ends a stream whose client stopped reading.
	writeTimeout time.Duration
	// maxClients bounds the open streams.
	maxClients int
}

// board is what the page shows of one board.
type board struct {
	State
	console []string // a ring of the last ConsoleLines lines
	next    int      // where the ring's next line goes, once full
}

// State is one board's card, as the page's script receives it.
type State struct {
	Name    string `json:"name"`
	Profile string `json:"profile"`
	// Stage is what the board is doing, in the run log's words
	// ("netboot", "dhcp", "kernel", "running speed"), or Waiting.
	Stage string `json:"stage"`
	// Kind is the event kind that set Stage ("bench", ...), "" when
	// waiting: the page colours the stage by it.
	Kind string `json:"kind"`
	// Step is the run log's last line about the board.
	Step  string        `json:"step"`
	Run   results.RunID `json:"run,omitempty"`
	Clock string        `json:"clock"`
	// ClockCheck is the run log's last word on the clock.
	ClockCheck string    `json:"clock_check,omitempty"`
	Since      time.Time `json:"since,omitzero"` // the run's start
	Last       *Result   `json:"last,omitempty"`
}

// Result is a stored run, as the page shows the last one.
type Result struct {
	Run    results.RunID `json:"run"`
	Status string        `json:"status"`
	// Reason is why the run gave no result to count: a failure's
	// reason, or what throttled it.
	Reason   string          `json:"reason,omitempty"`
	Bench    string          `json:"bench"`
	Clock    string          `json:"clock"`
	Finished time.Time       `json:"finished,omitzero"`
	Took     string          `json:"took,omitempty"`
	Metrics  int             `json:"metrics"`
	Headline []export.Figure `json:"headline,omitempty"`
}

// New is the page of the served boards; their last stored results are
// read from store, which also serves their history.
func New(ctx context.Context, store *store.Store, served []Board) (*Page, error) {
	p := &Page{store: store, boards: map[string]*board{}, subs: map[*subscriber]struct{}{}, quit: make(chan struct{}),
		heartbeat: 15 * time.Second, writeTimeout: 10 * time.Second, maxClients: 32}
	for _, b := range served {
		p.names = append(p.names, b.Name)
		p.boards[b.Name] = &board{State: State{Name: b.Name, Profile: b.Profile, Stage: Waiting}}
	}
	sort.Slice(p.names, func(i, j int) bool { return results.NaturalCompare(p.names[i], p.names[j]) < 0 })
	if store == nil {
		return p, nil
	}
	for _, name := range p.names {
		runs, err := store.Runs(ctx, results.Filter{Board: name})
		if err != nil {
			return nil, err
		}
		if last := latest(runs); last != nil {
			p.boards[name].Last = resultOf(last)
		}
	}
	return p, nil
}

func latest(runs []results.Run) *results.Run {
	var last *results.Run
	for i := range runs {
		if last == nil || runs[i].Started.After(last.Started) {
			last = &runs[i]
		}
	}
	return last
}

func resultOf(r *results.Run) *Result {
	res := &Result{Run: r.ID, Status: r.Status, Reason: r.Why(), Bench: r.Bench, Clock: r.ClockMHz.String(),
		Finished: r.Finished, Metrics: len(r.Metrics), Headline: export.Headline(r)}
	if !r.Started.IsZero() && r.Finished.After(r.Started) {
		res.Took = r.Finished.Sub(r.Started).Round(100 * time.Millisecond).String()
	}
	return res
}

// Event is a step of a run, as the run log gets it.
func (p *Page) Event(e harness.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.boards[e.Board]
	if b == nil {
		return
	}
	if b.Run != e.Run {
		b.Run, b.Since = e.Run, e.Time.Add(-e.Took)
	}
	b.Clock = e.Clock.String()
	b.Step = e.Msg
	if e.Stage == results.EventClock {
		b.ClockCheck = e.Msg
	}
	if stage, ok := stageOf(e); ok {
		b.Stage, b.Kind = stage, string(e.Stage)
	}
	p.publishState(b)
}

// stageOf is the stage an event shows, in the run log's words; ok is
// false for an event that is a step inside the stage the board is in
// (power, clock, console, route, throttle).
func stageOf(e harness.Event) (stage string, ok bool) {
	switch e.Stage {
	case results.StageBench.Event():
		return "running " + e.Bench, true
	case results.EventRun:
		return "starting", true
	case results.EventStored:
		return "stored", true
	case results.EventNotStored:
		return "not stored", true
	case results.EventDHCP, results.EventTFTP, results.EventHTTP:
		return string(e.Stage), true
	}
	for _, s := range results.Stages {
		if e.Stage == s.Event() {
			return string(s), true
		}
	}
	return "", false
}

// Console is a line read off a board's console.
func (p *Page) Console(boardName string, l serialctl.Line) {
	lines := readable(l.Text)
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.boards[boardName]
	if b == nil {
		return
	}
	for _, text := range lines {
		if r := []rune(text); len(r) > maxLineRunes {
			text = string(r[:maxLineRunes]) + "…"
		}
		if l.Note {
			text = "[bootbench] " + text
		}
		b.add(text)
		p.publish("console", consoleLine{Board: boardName, Line: text})
	}
}

// readable is what a person reads of one console line: the benchmark's
// own output where the line is a frame carrying it (a raw chunk, base64
// on the wire), the frame's type in brackets for the protocol's other
// frames, and any other line as it is. Firmware paints blank screens:
// they give nothing.
func readable(line []byte) []string {
	if !frame.IsFrame(line) {
		if text := serialctl.Printable(line); text != "" {
			return []string{text}
		}
		return nil
	}
	f, err := frame.Decode(line)
	if err != nil {
		return []string{"[damaged frame] " + serialctl.Printable(line)}
	}
	var raw frame.RawBody
	if f.Type != frame.Raw || json.Unmarshal(f.Body, &raw) != nil {
		return []string{"[" + string(f.Type) + "]"}
	}
	data, err := base64.StdEncoding.DecodeString(raw.Data)
	if err != nil {
		return []string{"[damaged frame] " + serialctl.Printable(line)}
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if text := serialctl.Printable([]byte(l)); text != "" {
			out = append(out, text)
		}
	}
	return out
}

type consoleLine struct {
	Board string `json:"board"`
	Line  string `json:"line"`
}

func (b *board) add(line string) {
	if len(b.console) < ConsoleLines {
		b.console = append(b.console, line)
		return
	}
	b.console[b.next] = line
	b.next = (b.next + 1) % ConsoleLines
}

// tail is the board's console lines, oldest first.
func (b *board) tail() []string {
	return append(append([]string{}, b.console[b.next:]...), b.console[:b.next]...)
}

// Done is a finished run, stored or (a *harness.NotStoredError) not: the
// board's last result, and the board waits for its next boot.
func (p *Page) Done(rec *results.Run, err error) {
	if rec == nil {
		return // nothing was stored
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.boards[rec.Board]
	if b == nil {
		return
	}
	b.Last = resultOf(rec)
	b.Stage, b.Kind, b.Run, b.Since = Waiting, "", "", time.Time{}
	b.Step = fmt.Sprintf("run %s stored: %s", rec.ID, rec.Status)
	var ns *harness.NotStoredError
	if errors.As(err, &ns) {
		b.Step = fmt.Sprintf("run %s not stored: %s; %s", rec.ID, rec.Status, redact.Text(strings.SplitN(ns.Err.Error(), "\n", 2)[0]))
	}
	p.publishState(b)
}

// snapshot is everything the page shows, for a stream's first message.
type snapshot struct {
	Now    time.Time       `json:"now"`
	Boards []boardSnapshot `json:"boards"`
}

type boardSnapshot struct {
	State
	Console []string `json:"console"`
}

// snapshotLocked is the page's state; p.mu is held.
func (p *Page) snapshotLocked() snapshot {
	s := snapshot{Now: time.Now()}
	for _, n := range p.names {
		b := p.boards[n]
		s.Boards = append(s.Boards, boardSnapshot{State: b.State, Console: b.tail()})
	}
	return s
}

// publishState sends a board's card to every stream; p.mu is held.
func (p *Page) publishState(b *board) {
	p.publish("board", b.State)
}

// publish sends one event to every stream; p.mu is held. A stream whose
// buffer is full is dropped, never waited for.
func (p *Page) publish(event string, v any) {
	if len(p.subs) == 0 {
		return
	}
	m, err := encode(event, v)
	if err != nil {
		return
	}
	for s := range p.subs {
		select {
		case s.ch <- m:
		default:
			p.dropLocked(s)
		}
	}
}

// encode is one server-sent event: its name and one line of JSON.
func encode(event string, v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", event, data)
	return []byte(b.String()), nil
}

// Close ends every stream once it has sent what it holds; the page then
// takes no more.
func (p *Page) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		close(p.quit)
	}
}
