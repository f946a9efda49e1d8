package main

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// plug is a smart plug with an energy meter between a simulated bench's
// board and the mains: an HTTP server in the bench host's network speaking
// a real plug's API, whose relay runs the board's power switch (on.sh
// starts its QEMU, off.sh stops it) and whose meter reads the board's
// power. The power follows what the board does: 2 W for a board that is on
// but idle, up to 5 W with its CPU busy, the busy share being the QEMU
// process's CPU time over the wall time since the last reading (so a boot
// and a benchmark draw more than a board waiting on the network), 0.3 W
// once the board has powered itself off, and 0 with the relay open.
type plug struct {
	*httptest.Server
	board *simBench

	mu       sync.Mutex
	on       bool
	lastRead time.Time
	lastCPU  time.Duration
	readings int
}

// The model's figures, for the test's bounds.
const (
	plugIdleW    = 2.0
	plugBusyW    = 3.0 // added at 100 % CPU
	plugStandbyW = 0.3
)

// startPlug serves api (tasmota or shelly) in the bench host's network
// namespace, switching board.
func startPlug(t *testing.T, s *simBench, board *simBench, api func(*plug) http.Handler) *plug {
	t.Helper()
	var l net.Listener
	var err error
	inNamespace(t, s.ns, func() { l, err = net.Listen("tcp4", "127.0.0.1:0") })
	if err != nil {
		t.Fatal(err)
	}
	p := &plug{board: board}
	p.Server = httptest.NewUnstartedServer(api(p))
	p.Listener.Close()
	p.Listener = l
	p.Start()
	t.Cleanup(p.Close)
	return p
}

// switchTo runs the board's power switch script.
func (p *plug) switchTo(on bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	script := "off.sh"
	if on {
		script = "on.sh"
	}
	if out, err := exec.Command(filepath.Join(p.board.dir, script)).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", script, err, out)
	}
	p.on, p.lastRead, p.lastCPU = on, time.Now(), 0
	return nil
}

// watts is what the meter reads now.
func (p *plug) watts() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.readings++
	if !p.on {
		return 0
	}
	cpu, alive := qemuCPU(p.board)
	if !alive {
		return plugStandbyW
	}
	now := time.Now()
	busy := 0.0
	if wall := now.Sub(p.lastRead); wall > 0 {
		busy = math.Min(1, math.Max(0, float64(cpu-p.lastCPU)/float64(wall)))
	}
	p.lastRead, p.lastCPU = now, cpu
	return math.Round((plugIdleW+plugBusyW*busy)*10) / 10 // a plug's resolution
}

// qemuCPU is the CPU time the board's QEMU has used (user and system),
// from /proc; alive is false when it is not running.
func qemuCPU(b *simBench) (time.Duration, bool) {
	pid, err := os.ReadFile(filepath.Join(b.dir, "qemu.pid"))
	if err != nil {
		return 0, false
	}
	stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/stat")
	if err != nil {
		return 0, false
	}
	// Fields after the command's closing parenthesis: state is field 3,
	// utime and stime fields 14 and 15, in clock ticks (100 a second).
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(f) < 13 || f[0] == "Z" {
		return 0, false
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond, true
}

// tasmotaAPI is a Tasmota plug's web command API with a web password
// (https://tasmota.github.io/docs/Commands/): Power1 On/Off and Status 8.
func tasmotaAPI(p *plug) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/cm" {
			http.NotFound(w, r)
			return
		}
		if q.Get("user") != "admin" || q.Get("password") != "s3cret" {
			fmt.Fprint(w, `{"WARNING":"Need user=<username>&password=<password>"}`)
			return
		}
		switch q.Get("cmnd") {
		case "Power1 On", "Power1 Off":
			on := q.Get("cmnd") == "Power1 On"
			if err := p.switchTo(on); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			fmt.Fprintf(w, `{"POWER":%q}`, map[bool]string{true: "ON", false: "OFF"}[on])
		case "Status 8":
			watts := p.watts()
			fmt.Fprintf(w, `{"StatusSNS":{"Time":%q,"ENERGY":{"TotalStartTime":"2026-11-01T10:00:00","Total":1.234,"Yesterday":0.120,"Today":0.031,"Power":%.1f,"ApparentPower":%.1f,"ReactivePower":0.0,"Factor":1.00,"Voltage":231,"Current":%.3f}}}`,
				time.Now().Format("2006-01-02T15:04:05"), watts, watts, watts/231)
		default:
			fmt.Fprint(w, `{"Command":"Unknown"}`)
		}
	})
}

// shellyAPI is a Shelly Plus Plug S (Gen2): the relay through the /relay
// endpoint Gen2 keeps, the meter through RPC's Switch.GetStatus.
func shellyAPI(p *plug) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /relay/0", func(w http.ResponseWriter, r *http.Request) {
		turn := r.URL.Query().Get("turn")
		if turn != "on" && turn != "off" {
			http.Error(w, "Bad turn!", http.StatusBadRequest)
			return
		}
		if err := p.switchTo(turn == "on"); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, `{"ison":%t,"has_timer":false,"timer_started_at":0,"timer_duration":0,"timer_remaining":0,"source":"http"}`, turn == "on")
	})
	mux.HandleFunc("GET /rpc/Switch.GetStatus", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("id") != "0" {
			http.Error(w, `{"code":-105,"message":"Argument 'id', value 1 not found!"}`, http.StatusNotFound)
			return
		}
		p.mu.Lock()
		on := p.on
		p.mu.Unlock()
		watts := p.watts()
		fmt.Fprintf(w, `{"id":0,"source":"http","output":%t,"apower":%.1f,"voltage":229.4,"freq":50.0,"current":%.3f,"aenergy":{"total":12.345,"by_minute":[0.0,0.0,0.0],"minute_ts":%d},"temperature":{"tC":38.2,"tF":100.8}}`,
			on, watts, watts/229.4, time.Now().Unix())
	})
	return mux
}

// energyRun is what the JSON export says of a run's power.
type energyRun struct {
	ID      string `json:"id"`
	Board   string `json:"board"`
	Status  string `json:"status"`
	Started string `json:"started"`
	Metrics []struct {
		Name  string  `json:"name"`
		Unit  string  `json:"unit"`
		Value float64 `json:"value"`
	} `json:"metrics"`
	Finished string `json:"finished"`
	Energy   *struct {
		Meter   string `json:"meter"`
		Failed  int    `json:"failed_samples"`
		Samples []struct {
			Seconds, Watts float64
		} `json:"samples"`
		Spans []struct {
			Name      string  `json:"name"`
			From      float64 `json:"from_seconds"`
			To        float64 `json:"to_seconds"`
			MeanWatts float64 `json:"mean_watts"`
			Joules    float64 `json:"joules"`
			PerJoule  float64 `json:"per_joule"`
			Unit      string  `json:"unit"`
		} `json:"spans"`
	} `json:"energy"`
}

// TestE2EEnergy runs two boards of a simulated bench, one behind a
// Tasmota plug and one behind a Shelly, each with its meter: every run
// stores its samples and its idle and per-test power, compare and the HTML
// report show them, and the OpenWrt row is what it always was.
func TestE2EEnergy(t *testing.T) {
	requireSimBench(t)
	parallelE2E(t)
	s := newSwitchedBench(t, false)
	pc2 := s.addBoard(1, "52:54:00:bb:05:21")
	tasmota := startPlug(t, s, s, tasmotaAPI)
	shelly := startPlug(t, s, pc2, shellyAPI)
	inv := filepath.Join(s.dir, "bench.yaml")
	yaml := fmt.Sprintf(`# Two PCs on the bench switch, each on a smart plug with a meter.
bench: {interface: %s, address: %s}
boards:
  pc1:
    profile: pc-x86_64
    mac: "%s"
    address: %s
    console: %s
    power: {driver: tasmota, url: "%s", relay: 1}
  pc2:
    profile: pc-x86_64
    mac: "%s"
    address: 198.18.5.21
    console: %s
    power: {driver: shelly, url: "%s", relay: 0}
`, s.iface, simBenchNet, s.mac, simBoardIP, s.tty, strings.Replace(tasmota.URL, "http://", "http://admin:s3cret@", 1), pc2.mac, pc2.tty, shelly.URL)
	if err := os.WriteFile(inv, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "results.db")
	for _, board := range []string{"pc1", "pc2"} {
		r := s.run(db, "run", "--inventory", inv, "--board", board, "--algs", "aes-128-cbc", "--seconds", "1")
		t.Logf("%s's run:\n%s", board, r.stderr)
		if r.code != 0 {
			t.Fatalf("bootbench run --board %s: exit %d\n%s", board, r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "has no meter") || strings.Contains(r.stderr, "meter sample failed") {
			t.Errorf("%s's meter was not read:\n%s", board, r.stderr)
		}
	}
	s.assertBoardOff()
	pc2.assertBoardOff()
	if tasmota.readings < 10 || shelly.readings < 10 {
		t.Errorf("the plugs' meters were read %d and %d times, want one a second of each ~40 s run", tasmota.readings, shelly.readings)
	}

	runs := energyRuns(t, db)
	for _, r := range runs {
		raw := bootbench(t, db, "results", "show", r.ID, "--raw")
		checkStoredEnergy(t, r, raw.stdout)
	}
	if !strings.HasPrefix(runs[0].Energy.Meter, "tasmota http://127.0.0.1:") || strings.Contains(runs[0].Energy.Meter, "s3cret") ||
		!strings.HasPrefix(runs[1].Energy.Meter, "shelly http://127.0.0.1:") {
		t.Errorf("meters %q and %q: want the tasmota and the shelly, no password", runs[0].Energy.Meter, runs[1].Energy.Meter)
	}
	show := bootbench(t, db, "results", "show", runs[0].ID)
	// The test's line as stored: its length is its progress line's (at
	// least the 1 s asked for, more when the board's clock ran late).
	sp := runs[0].Energy.Spans[4]
	line := fmt.Sprintf(`(?m)^aes-128-cbc@1024 +%.2f +%.2f +%.2f +[0-9.]+ B/J$`, sp.MeanWatts, sp.Joules, sp.To-sp.From)
	if want := fmt.Sprintf("power    %s: %d samples", runs[0].Energy.Meter, len(runs[0].Energy.Samples)); !strings.Contains(show.stdout, want) ||
		!regexp.MustCompile(line).MatchString(show.stdout) {
		t.Errorf("results show lacks %q or the aes-128-cbc@1024 line %s:\n%s", want, line, show.stdout)
	}

	checkCompareEnergy(t, db, runs)
	checkHTMLEnergy(t, db)
	openwrt := bootbench(t, db, "results", "export", "--format", "openwrt")
	if openwrt.code != 0 || strings.Contains(openwrt.stdout, "W") || strings.Contains(openwrt.stdout, "J") {
		t.Errorf("openwrt export: exit %d, with power in it:\n%s%s", openwrt.code, openwrt.stdout, openwrt.stderr)
	}
}

// energyRuns are the store's runs as the JSON export gives them, pc1's
// first.
func energyRuns(t *testing.T, db string) []energyRun {
	t.Helper()
	runs := exportedRuns[energyRun](t, db)
	if len(runs) != 2 || runs[0].Board != "pc1" || runs[1].Board != "pc2" {
		t.Fatalf("stored runs: %+v", runs)
	}
	return runs
}

// stated are the tests' lengths as the suite's progress lines in output
// state them ("Doing aes-128-cbc for 1s on 1024 size blocks: 42 ... in
// 1.00s"), by metric.
func stated(output string) map[string]float64 {
	m := map[string]float64{}
	for _, l := range regexp.MustCompile(`(?m)^Doing (\S+) for 1s on (\d+) size blocks: \d+ .* in (\d+\.\d+)s$`).FindAllStringSubmatch(output, -1) {
		m[l[1]+"@"+l[2]], _ = strconv.ParseFloat(l[3], 64)
	}
	return m
}

// checkStoredEnergy: the run has about a sample a second from power-on to
// power-off, within what the plug can read; idle before the test and each
// block size's test after it, one after the other, each as long as its
// progress line in the run's output says (at least the 1 s asked for),
// joules that are watts times seconds, and bytes per joule the metric over
// the watts.
func checkStoredEnergy(t *testing.T, r energyRun, output string) {
	t.Helper()
	e := r.Energy
	if r.Status != "ok" || e == nil {
		t.Fatalf("run %s: status %s, energy %+v", r.ID, r.Status, e)
	}
	if len(e.Spans) != 7 || e.Spans[0].Name != "idle" || e.Spans[0].From < 0 || e.Spans[0].To-e.Spans[0].From < 5 {
		t.Fatalf("run %s: spans %+v, want idle from power-on through the boot to the first test, then 6 tests", r.ID, e.Spans)
	}
	started, _ := time.Parse(time.RFC3339Nano, r.Started)
	finished, _ := time.Parse(time.RFC3339Nano, r.Finished)
	took := finished.Sub(started).Seconds()
	on := took - e.Spans[0].From // power-on to the run's end
	if n := len(e.Samples); float64(n) < on*0.5 || float64(n) > on+2 || e.Failed != 0 {
		t.Errorf("run %s: %d samples (%d failed) in %.0f s powered, want about one a second", r.ID, n, e.Failed, on)
	}
	for _, s := range e.Samples {
		if s.Watts < plugStandbyW || s.Watts > plugIdleW+plugBusyW || s.Seconds < e.Spans[0].From || s.Seconds > took {
			t.Errorf("run %s: sample %+v outside the plug's range or the time the board was on", r.ID, s)
		}
	}
	value := map[string]float64{}
	for _, m := range r.Metrics {
		value[m.Name] = m.Value
	}
	lengths := stated(output)
	for i, sp := range e.Spans {
		// A span's mean is its joules over its seconds: a board busy
		// through the whole span reads the plug's top figure give or take
		// the division's last bit (5.000000000000001 W).
		if sp.MeanWatts < plugStandbyW*(1-1e-9) || sp.MeanWatts > (plugIdleW+plugBusyW)*(1+1e-9) || math.Abs(sp.Joules-sp.MeanWatts*(sp.To-sp.From)) > 1e-6*sp.Joules {
			t.Errorf("run %s: span %+v: watts out of range, or joules not watts × seconds", r.ID, sp)
		}
		if i == 0 {
			continue
		}
		// Each span ends at its line's arrival and starts its stated
		// length before: on a busy host one line may reach the host later
		// than the next, so a start can fall before the end of the span
		// before it, never before its start.
		if prev, d := e.Spans[i-1], lengths[sp.Name]; sp.From < prev.From || sp.To <= prev.To || d < 1 || math.Abs(sp.To-sp.From-d) > 1e-6 {
			t.Errorf("run %s: test %s from %.2f to %.2f s after %s ended at %.2f: want its %.2f s (its progress line's), after the one before", r.ID, sp.Name, sp.From, sp.To, prev.Name, prev.To, d)
		}
		if v, ok := value[sp.Name]; !ok || sp.Unit != "B/J" || math.Abs(sp.PerJoule-v/sp.MeanWatts) > 1e-6*sp.PerJoule {
			t.Errorf("run %s: span %+v: want the metric %s (%v B/s) over its watts in B/J", r.ID, sp, sp.Name, v)
		}
	}
	if sp := e.Spans[4]; sp.Name != "aes-128-cbc@1024" {
		t.Errorf("run %s: fourth test %s, want aes-128-cbc@1024 (the suite's order)", r.ID, sp.Name)
	}
}

// checkCompareEnergy: compare by board shows each side's idle power and
// the aes-128-cbc@1024 test's watts and bytes per joule, as stored.
func checkCompareEnergy(t *testing.T, db string, runs []energyRun) {
	t.Helper()
	c := bootbench(t, db, "results", "compare", "--by", "board", "--boards", "pc1,pc2")
	t.Logf("results compare:\n%s", c.stdout)
	if c.code != 0 {
		t.Fatalf("compare: exit %d\n%s%s", c.code, c.stdout, c.stderr)
	}
	span := func(r energyRun, name string) (w, perJoule float64) {
		for _, s := range r.Energy.Spans {
			if s.Name == name {
				return s.MeanWatts, s.PerJoule
			}
		}
		t.Fatalf("run %s has no span %s", r.ID, name)
		return 0, 0
	}
	idle1, _ := span(runs[0], "idle")
	idle2, _ := span(runs[1], "idle")
	w1, pj1 := span(runs[0], "aes-128-cbc@1024")
	w2, pj2 := span(runs[1], "aes-128-cbc@1024")
	idle := regexp.MustCompile(`power before the benchmark: baseline idle (\S+) W \(1 of 1 run metered\); candidate idle (\S+) W \(1 of 1 run metered\)`).FindStringSubmatch(c.stdout)
	row := regexp.MustCompile(`(?m)^aes-128-cbc@1024 +(\S+) +(\S+) +(\S+) +(\S+) +B/J +1\+1 +(\S+)$`).FindStringSubmatch(c.stdout)
	if idle == nil || row == nil {
		t.Fatalf("compare lacks the idle line or a power row for aes-128-cbc@1024:\n%s", c.stdout)
	}
	got := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
	// Watts are shown to two decimals (of the median rounded to four
	// significant digits, so 4.30512 shows as 4.30), per joule to six
	// significant digits.
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-5*math.Abs(b)+0.01 }
	if !near(got(idle[1]), idle1) || !near(got(idle[2]), idle2) {
		t.Errorf("compare's idle line %q: want %.3f W and %.3f W as stored", idle[0], idle1, idle2)
	}
	if !near(got(row[1]), w1) || !near(got(row[2]), w2) || !near(got(row[3]), pj1) || !near(got(row[4]), pj2) || !near(got(row[5]), pj2/pj1) {
		t.Errorf("compare's row %q: want %.2f W, %.2f W, %.0f B/J, %.0f B/J, ratio %.4f as stored", row[0], w1, w2, pj1, pj2, pj2/pj1)
	}
}

// checkHTMLEnergy: the report has each board's power section, kept as
// the test's artifact (go test -artifacts) to be looked at.
func checkHTMLEnergy(t *testing.T, db string) {
	t.Helper()
	out := filepath.Join(t.ArtifactDir(), "energy-report.html")
	h := bootbench(t, db, "results", "export", "--format", "html", "-o", out)
	page, err := os.ReadFile(out)
	if h.code != 0 || err != nil {
		t.Fatalf("html export: exit %d, %v\n%s", h.code, err, h.stderr)
	}
	t.Logf("the HTML report with power: %s", out)
	for _, want := range []string{"<b>power while running</b>", "1 of 1 run had a power meter (tasmota http://127.0.0.1:", "1 of 1 run had a power meter (shelly http://127.0.0.1:"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(string(page), "<code>aes-128-cbc@1024</code></td><td>B/J</td>"); n != 2 {
		t.Errorf("%d power rows for aes-128-cbc@1024, want one a board", n)
	}
}
