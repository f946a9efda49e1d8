package benchpage

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/store"
	"github.com/bootbench/bootbench/serialctl"
)

func TestListenAddr(t *testing.T) {
	for _, tt := range []struct {
		in, addr string
		loopback bool
		err      bool
	}{
		{"8080", "127.0.0.1:8080", true, false},
		{":8080", "127.0.0.1:8080", true, false},
		{"127.0.0.1:0", "127.0.0.1:0", true, false},
		{"127.0.0.5:8080", "127.0.0.5:8080", true, false},
		{"[::1]:8080", "[::1]:8080", true, false},
		{"localhost:8080", "localhost:8080", true, false},
		{"0.0.0.0:8080", "0.0.0.0:8080", false, false},
		{"[::]:8080", "[::]:8080", false, false},
		{"198.18.5.1:8080", "198.18.5.1:8080", false, false},
		{"bench-host:8080", "bench-host:8080", false, false},
		{"127.0.0.1", "", false, true},
		{"127.0.0.1:http", "", false, true},
		{"70000", "", false, true},
		{"[::1:8080", "", false, true},
	} {
		addr, loopback, err := ListenAddr(tt.in)
		if (err != nil) != tt.err || addr != tt.addr || loopback != tt.loopback {
			t.Errorf("ListenAddr(%q) = %q, %v, %v; want %q, %v, error %v", tt.in, addr, loopback, err, tt.addr, tt.loopback, tt.err)
		}
	}
}

func TestStageOf(t *testing.T) {
	for _, tt := range []struct {
		kind  results.EventKind
		stage string
	}{
		{results.EventRun, "starting"},
		{results.StageImage.Event(), "image"},
		{results.StageNetboot.Event(), "netboot"},
		{results.EventDHCP, "dhcp"},
		{results.EventTFTP, "tftp"},
		{results.EventHTTP, "http"},
		{results.StageFirmware.Event(), "firmware"},
		{results.StageKernel.Event(), "kernel"},
		{results.StageBench.Event(), "running openssl"},
		{results.EventStored, "stored"},
		{results.EventNotStored, "not stored"},
		{results.EventPower, ""},
		{results.EventClock, ""},
		{results.EventConsole, ""},
		{results.EventRoute, ""},
		// The board slowing down is said while it runs: a step, the
		// stage stays the benchmark's.
		{results.EventThrottle, ""},
	} {
		stage, ok := stageOf(harness.Event{Stage: tt.kind, Bench: "openssl"})
		if stage != tt.stage || ok != (tt.stage != "") {
			t.Errorf("%s: stage %q, %v; want %q", tt.kind, stage, ok, tt.stage)
		}
	}
}

func newPage(t *testing.T) (*Page, *store.Store) {
	t.Helper()
	store, err := store.Open(filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	p, err := New(context.Background(), store, []Board{{Name: "pc2", Profile: "pc-x86_64"}, {Name: "pc10", Profile: "rb450g"}})
	if err != nil {
		t.Fatal(err)
	}
	return p, store
}

func TestConsoleTail(t *testing.T) {
	p, _ := newPage(t)
	for i := range ConsoleLines + 50 {
		p.Console("pc2", serialctl.Line{Text: []byte(fmt.Sprintf("line %d\r", i))})
	}
	p.Console("nobody", serialctl.Line{Text: []byte("not served")})
	tail := p.boards["pc2"].tail()
	if len(tail) != ConsoleLines || tail[0] != "line 50" || tail[len(tail)-1] != fmt.Sprintf("line %d", ConsoleLines+49) {
		t.Errorf("tail of %d lines from %q to %q; want the last %d", len(tail), tail[0], tail[len(tail)-1], ConsoleLines)
	}
	p2, _ := newPage(t)
	p2.Console("pc2", serialctl.Line{Text: []byte("\x1b[2J\x1b[1;1H")}) // a cleared screen: nothing to show
	p2.Console("pc2", serialctl.Line{Text: []byte("console lost"), Note: true})
	p2.Console("pc2", serialctl.Line{Text: []byte(strings.Repeat("x", 1000))})
	tail = p2.boards["pc2"].tail()
	if len(tail) != 2 || tail[0] != "[bootbench] console lost" || len([]rune(tail[1])) != maxLineRunes+1 {
		t.Errorf("tail %q: want the note marked and the long line clipped", tail)
	}
}

// serveTest serves p until the test ends; the page is closed first, or
// its streams would hold the server open.
func serveTest(t *testing.T, p *Page) *httptest.Server {
	srv := httptest.NewServer(p.Handler())
	t.Cleanup(func() {
		p.Close()
		srv.Close()
	})
	return srv
}

// sse reads a page's stream.
type sse struct {
	t    *testing.T
	r    *bufio.Reader
	body io.Closer
}

func openStream(t *testing.T, url string) *sse {
	t.Helper()
	resp, err := http.Get(url + "/events")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	return &sse{t: t, r: bufio.NewReader(resp.Body), body: resp.Body}
}

// next is the stream's next event (comments included, as event ":"), or
// "" at its end.
func (s *sse) next() (event, data string) {
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return "", ""
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && (event != "" || data != ""):
			return event, data
		case strings.HasPrefix(line, ":"):
			return ":", line
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		}
	}
}

// expect reads events until one named event, and decodes it into v.
func (s *sse) expect(event string, v any) {
	s.t.Helper()
	for {
		e, data := s.next()
		if e == "" {
			s.t.Fatalf("the stream ended before a %q event", event)
		}
		if e == event {
			if err := json.Unmarshal([]byte(data), v); err != nil {
				s.t.Fatalf("%s: %v: %s", event, err, data)
			}
			return
		}
	}
}

func okRun(board string) *results.Run {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	return &results.Run{ID: results.NewRunID(), Board: board, Status: results.StatusOK, Bench: "speed", Rep: 1,
		Started: start, Finished: start.Add(42 * time.Second),
		Metrics: []results.Metric{{Name: "md5@1024", Unit: "B/s", Value: 226674710}, {Name: "sha256@1024", Unit: "B/s", Value: 24149630}, {Name: "md5@16", Unit: "B/s", Value: 15926020}}}
}

func TestStream(t *testing.T) {
	p, _ := newPage(t)
	p.Console("pc2", serialctl.Line{Text: []byte("before the page opened")})
	srv := serveTest(t, p)
	s := openStream(t, srv.URL)

	var snap snapshot
	s.expect("snapshot", &snap)
	if len(snap.Boards) != 2 || snap.Boards[0].Name != "pc2" || snap.Boards[1].Name != "pc10" || snap.Boards[0].Stage != Waiting {
		t.Fatalf("snapshot %+v: want pc2 then pc10, waiting", snap.Boards)
	}
	if c := snap.Boards[0].Console; len(c) != 1 || c[0] != "before the page opened" {
		t.Errorf("snapshot console %q", c)
	}

	start := time.Now()
	p.Event(harness.Event{Time: start.Add(3 * time.Second), Took: 3 * time.Second, Board: "pc2", Run: "r1", Stage: results.StageBench.Event(),
		Msg: "board up", Bench: "speed", Clock: boards.MHz(680)})
	var st State
	s.expect("board", &st)
	if st.Name != "pc2" || st.Stage != "running speed" || st.Kind != "bench" || st.Run != "r1" || st.Clock != "680 MHz" || !st.Since.Equal(start) {
		t.Errorf("running: %+v", st)
	}

	p.Console("pc2", serialctl.Line{Text: []byte("Doing md5 for 3s on 16 size blocks")})
	var line consoleLine
	s.expect("console", &line)
	if line.Board != "pc2" || line.Line != "Doing md5 for 3s on 16 size blocks" {
		t.Errorf("console: %+v", line)
	}

	rec := okRun("pc2")
	p.Done(rec, nil)
	st = State{}
	s.expect("board", &st)
	if st.Stage != Waiting || st.Run != "" || st.Last == nil || st.Last.Run != rec.ID || st.Last.Status != "ok" || st.Last.Took != "42s" {
		t.Fatalf("after the result: %+v %+v", st, st.Last)
	}
	// The report's order: sha256 before md5, md5@16 not a headline.
	if h := st.Last.Headline; len(h) != 2 || h[0].Metric != "sha256@1024" || h[1].Value != "227M bytes/s" {
		t.Errorf("headline %+v", h)
	}
}

// TestStreamEndsWithWhatItHolds: a page that is closed (serve stops)
// still gets what it was sent, the last result most of all.
func TestStreamEndsWithWhatItHolds(t *testing.T) {
	p, _ := newPage(t)
	srv := serveTest(t, p)
	s := openStream(t, srv.URL)
	var snap snapshot
	s.expect("snapshot", &snap)
	rec := okRun("pc10")
	p.Done(rec, nil)
	p.Close()
	var st State
	s.expect("board", &st)
	if st.Last == nil || st.Last.Run != rec.ID {
		t.Errorf("the last event: %+v", st)
	}
	if e, _ := s.next(); e != "" {
		t.Errorf("the stream goes on after Close: %q", e)
	}
	if resp, err := http.Get(srv.URL + "/events"); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a new stream after Close: %v %v", resp.Status, err)
	}
}

func TestHeartbeat(t *testing.T) {
	p, _ := newPage(t)
	p.heartbeat = 20 * time.Millisecond
	srv := serveTest(t, p)
	s := openStream(t, srv.URL)
	var snap snapshot
	s.expect("snapshot", &snap)
	if e, data := s.next(); e != ":" || data != ": heartbeat" {
		t.Errorf("an idle stream got %q %q, want a heartbeat comment", e, data)
	}
}

// TestSlowClientDropped: a stream that stops reading is dropped, and the
// page's feeders never wait for it.
func TestSlowClientDropped(t *testing.T) {
	p, _ := newPage(t)
	sub, _, ok := p.subscribe()
	if !ok {
		t.Fatal("no stream")
	}
	done := make(chan struct{})
	go func() {
		for i := range subscriberBuffer + 10 {
			p.Console("pc2", serialctl.Line{Text: []byte(fmt.Sprintf("line %d", i))})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("feeding the page waited for a stream that does not read")
	}
	select {
	case <-sub.gone:
	default:
		t.Fatal("the stream that fell behind was not dropped")
	}
	if n := len(p.subs); n != 0 {
		t.Errorf("%d streams left", n)
	}
}

func TestReadOnly(t *testing.T) {
	p, _ := newPage(t)
	srv := serveTest(t, p)
	for _, path := range []string{"/", "/events", "/history?board=pc2"} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
			req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader("power=off"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: %s, want 405", method, path, resp.Status)
			}
		}
	}
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `<script src="page.js"`) {
		t.Errorf("GET /: %s\n%s", resp.Status, body)
	}
	for _, asset := range []string{"/page.js", "/page.css"} {
		resp, err := http.Get(srv.URL + asset)
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("GET %s: %v %v", asset, resp.Status, err)
		}
		resp.Body.Close()
	}
}

func TestHistory(t *testing.T) {
	p, store := newPage(t)
	rec := okRun("pc2")
	if err := store.SaveRun(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	srv := serveTest(t, p)
	for _, tt := range []struct {
		board string
		code  int
		want  []string
	}{
		{"pc2", 200, []string{string(rec.ID), "<svg", "md5@1024"}},
		{"pc10", 200, []string{"No runs match."}},
		{"stranger", 404, nil},
		{"", 404, nil},
	} {
		resp, err := http.Get(srv.URL + "/history?board=" + tt.board)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.code {
			t.Errorf("history of %q: %s", tt.board, resp.Status)
		}
		for _, w := range tt.want {
			if !strings.Contains(string(body), w) {
				t.Errorf("history of %q has no %q", tt.board, w)
			}
		}
	}
}

// TestLastResultFromStore: a page opened before any boot shows each
// board's last stored run.
func TestLastResultFromStore(t *testing.T) {
	_, store := newPage(t)
	older, newer := okRun("pc2"), okRun("pc2")
	newer.Started = older.Started.Add(time.Hour)
	newer.Status, newer.Reason, newer.Metrics = results.StatusFailed, "no hello from the board", nil
	for _, r := range []*results.Run{newer, older} {
		if err := store.SaveRun(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	p, err := New(context.Background(), store, []Board{{Name: "pc2"}, {Name: "pc10"}})
	if err != nil {
		t.Fatal(err)
	}
	if last := p.boards["pc2"].Last; last == nil || last.Run != newer.ID || last.Reason != newer.Reason {
		t.Errorf("pc2's last result %+v, want %s", last, newer.ID)
	}
	if last := p.boards["pc10"].Last; last != nil {
		t.Errorf("pc10 has no runs, and a last result %+v", last)
	}
}

// TestLastResultSaysWhy: a run that gave no result to count shows its
// status and why, whether it was just stored or read from the store at
// start; a throttled one keeps its figures, as its status says they are
// real but not its clock's.
func TestLastResultSaysWhy(t *testing.T) {
	throttled := okRun("pc2")
	throttled.Status = results.StatusThrottled
	throttled.Throttle = &results.Throttle{Clock: &results.ClockDrop{AskedMHz: 800, LowestMHz: 600, AtMS: 5000}}
	failed := okRun("pc2")
	failed.Status, failed.Reason, failed.Metrics = results.StatusFailed, "no hello from the board", nil
	for _, tt := range []struct {
		run       *results.Run
		reason    string
		headlines int
	}{
		{throttled, "the clock fell to 600 MHz (800 MHz asked) 5.0 s into the benchmark", 2},
		{failed, "no hello from the board", 0},
	} {
		t.Run(tt.run.Status, func(t *testing.T) {
			p, store := newPage(t)
			p.Done(tt.run, nil)
			if err := store.SaveRun(context.Background(), tt.run); err != nil {
				t.Fatal(err)
			}
			reopened, err := New(context.Background(), store, []Board{{Name: "pc2"}})
			if err != nil {
				t.Fatal(err)
			}
			for how, last := range map[string]*Result{"stored": p.boards["pc2"].Last, "from the store": reopened.boards["pc2"].Last} {
				if last == nil || last.Status != tt.run.Status || last.Reason != tt.reason || len(last.Headline) != tt.headlines {
					t.Errorf("%s: last result %+v, want %s: %q with %d headline figures", how, last, tt.run.Status, tt.reason, tt.headlines)
				}
			}
		})
	}
}

// The console tail shows what the board printed, not the protocol's
// base64: a raw chunk's lines, the other frames by their type.
func TestReadable(t *testing.T) {
	enc := func(typ frame.Type, body any) []byte {
		t.Helper()
		l, err := frame.Encode("20261203-134244-3300f271", 1, typ, body)
		if err != nil {
			t.Fatal(err)
		}
		return []byte(l + "\r")
	}
	chunk := base64.StdEncoding.EncodeToString([]byte("Doing md5 for 3s on 16 size blocks: 1 md5's in 3.00s\nDoing sha1 for 3s"))
	damaged := enc(frame.Raw, frame.RawBody{N: 0, Data: chunk})
	damaged[len(damaged)-3] ^= 1 // the checksum's last digit
	for _, tc := range []struct {
		name string
		line []byte
		want []string
	}{
		{"plain line", []byte("Welcome to u-root!\r"), []string{"Welcome to u-root!"}},
		{"blank screen", []byte("\x1b[2J\x1b[1;1H"), nil},
		{"raw chunk", enc(frame.Raw, frame.RawBody{N: 0, Data: chunk}), []string{"Doing md5 for 3s on 16 size blocks: 1 md5's in 3.00s", "Doing sha1 for 3s"}},
		{"hello", enc(frame.Hello, frame.HelloBody{Arch: "amd64", Kernel: "6.1.0", Bench: "speed"}), []string{"[hello]"}},
		{"damaged", damaged, []string{"[damaged frame] " + strings.TrimSuffix(string(damaged), "\r")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := readable(tc.line); !slices.Equal(got, tc.want) {
				t.Errorf("readable(%q) = %q, want %q", tc.line, got, tc.want)
			}
		})
	}
}

// A page on loopback answers to this host's names only, whatever port the
// browser reached it on; another name (a rebound DNS name) is refused.
func TestLoopbackHosts(t *testing.T) {
	h := LoopbackHosts(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page") }))
	for _, tc := range []struct {
		host string
		code int
	}{
		{"127.0.0.1:8080", http.StatusOK},
		{"localhost:8080", http.StatusOK},
		{"LOCALHOST", http.StatusOK},
		{"[::1]:8080", http.StatusOK},
		{"127.0.0.2:8080", http.StatusOK},
		{"evil.example:8080", http.StatusMisdirectedRequest},
		{"198.18.5.1:8080", http.StatusMisdirectedRequest},
		{"", http.StatusMisdirectedRequest},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = tc.host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.code {
			t.Errorf("Host %q: %d, want %d", tc.host, w.Code, tc.code)
		}
	}
}
