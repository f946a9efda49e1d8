package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bootbench/bootbench/internal/testkit/needs"
	"github.com/bootbench/bootbench/internal/testkit/userenv"
)

// chromiumPath is Debian's chromium, the browser the page is tested in.
const chromiumPath = "/usr/bin/chromium"

func requireChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err == nil {
		return
	}
	needs.Unmet(t, "the bench page's test needs Debian's chromium (make deps installs it)")
}

// browserOn starts a headless Chromium on the bench host (network
// namespace ns): the browser of a person at that host, who reaches a page
// that listens on loopback. chromedp talks to it over a pipe, so nothing
// of the test needs the namespace's network.
func browserOn(t *testing.T, ns string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		// Without these Chromium reaches for the network on its own
		// (updates, sync, QUIC probes), which is closed here.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			cmd.Args = append([]string{"nsenter", "--net=/run/netns/" + ns, "--"}, cmd.Args...)
			cmd.Path, _ = exec.LookPath("nsenter")
			cmd.Env = userenv.Environ()
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		}),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return ctx
}

// pageView is what the test reads off the page: the board's card as
// the browser shows it.
type pageView struct {
	Stage     string   `json:"stage"`
	Stages    []string `json:"stages"` // every stage the card has shown, in order
	Lines     int      `json:"lines"`  // console lines the card has received
	Console   string   `json:"console"`
	ResultRun string   `json:"resultRun"`
	Status    string   `json:"status"`
	Result    string   `json:"result"`
	Link      string   `json:"link"`
	// HistoryRuns are the runs the history's report lists, Charts the
	// charts it draws.
	HistoryRuns []string `json:"historyRuns"`
	Charts      int      `json:"charts"`
}

// watchCard records, in the page, every stage the card shows: a stage
// may last less than the test's reads are apart.
const watchCard = `(() => {
  const card = document.querySelector('[data-board="pc1"]');
  const stage = card.querySelector('.stage');
  window.seenStages = [stage.textContent];
  new MutationObserver(() => {
    const s = stage.textContent;
    if (s !== window.seenStages[window.seenStages.length - 1]) window.seenStages.push(s);
  }).observe(stage, {childList: true, characterData: true, subtree: true});
  return true;
})()`

const readCard = `(() => {
  const card = document.querySelector('[data-board="pc1"]');
  const result = card.querySelector('.result');
  const con = card.querySelector('.console');
  const report = card.querySelector('.report').contentDocument;
  const runs = report ? [...report.querySelectorAll('tbody code')].map((c) => c.textContent) : [];
  return {
    historyRuns: runs,
    charts: report ? report.querySelectorAll('svg').length : 0,
    stage: card.querySelector('.stage').textContent,
    stages: window.seenStages || [],
    lines: Number(con.dataset.lines || 0),
    console: con.textContent.slice(-2000),
    resultRun: result.dataset.run || "",
    status: result.dataset.status || "",
    result: result.textContent,
    link: document.getElementById('link').textContent,
  };
})()`

func readPage(t *testing.T, ctx context.Context) pageView {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[pageView](readCard))
	if err != nil {
		t.Fatalf("read the page: %v", err)
	}
	return v
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	// Kept as the test's artifact (go test -artifacts), as the energy
	// test keeps its report.
	path := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the bench page: %s", path)
}

// TestE2EBenchPage: serve --http with a board on a simulated bench; a
// headless Chromium on the bench host opens the page, sees the board's
// stage reach "running", its console tail grow, then its stored result
// and the history's report drawing it.
func TestE2EBenchPage(t *testing.T) {
	requireSimBench(t)
	requireChromium(t)
	s := newSimBench(t, false)
	inv := serveInventory(s, map[string]*simBench{"pc1": s}, map[string]string{"pc1": simBoardIP})
	db := filepath.Join(t.TempDir(), "results.db")

	// The bench host's own namespace: its loopback is free, port and all.
	const addr = "127.0.0.1:8080"
	serve, out, errb := startServe(t, s, db, "--inventory", inv, "--log", "text", "--http", addr)
	if !strings.Contains(out.String(), "bench page: http://"+addr+"/") {
		t.Fatalf("serve did not say where the page is:\n%s", out.String())
	}
	ctx := browserOn(t, s.ns)
	load, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err := chromedp.Do(load, chromedp.Navigate("http://"+addr+"/"), chromedp.WaitVisible(`[data-board="pc1"] .stage`))
	if err == nil {
		_, err = chromedp.Run(load, chromedp.Evaluate[bool](watchCard))
	}
	if err != nil {
		t.Fatalf("open the page: %v\n%s", err, out.String())
	}
	if v := readPage(t, ctx); v.Stage != "waiting for a boot" || !strings.Contains(v.Link, "live") {
		t.Fatalf("before the board is on the page shows %+v", v)
	}

	powerOn(t, s)
	v := watchPage(t, ctx, out, errb)
	runs := storedRuns(t, db)
	if len(runs) != 1 || runs[0].Status != "ok" || v.ResultRun != runs[0].ID {
		t.Fatalf("the page shows result %s (%s), the store holds %+v", v.ResultRun, v.Status, runs)
	}
	for _, figure := range []string{"md5@1024", "sha256@1024"} {
		if !strings.Contains(v.Result, figure) {
			t.Errorf("the result shows no %s headline figure: %q", figure, v.Result)
		}
	}
	waitPage(t, ctx, "the history to draw the run", func(v pageView) bool {
		return seen(v.HistoryRuns, runs[0].ID) && v.Charts > 0
	})
	screenshot(t, ctx, "bench-page-result.png")

	serve.Process.Signal(syscall.SIGINT)
	if err := serve.Wait(); err != nil {
		t.Fatalf("serve after Ctrl-C: %v\n%s", err, errb.String())
	}
	// The page stays as serve left it: the last result, and a link that
	// says serve is gone.
	waitPage(t, ctx, "the page to say serve is gone", func(v pageView) bool { return strings.Contains(v.Link, "not connected") })
	if v := readPage(t, ctx); v.ResultRun != runs[0].ID {
		t.Errorf("after serve stopped the page shows result %q, want %s", v.ResultRun, runs[0].ID)
	}
	s.assertBoardOff()
	assertNothingLeft(t, out.String())
}

// watchPage follows the board's card from power-on to the stored result,
// and returns it then.
func watchPage(t *testing.T, ctx context.Context, out, errb *lockedBuffer) pageView {
	t.Helper()
	var first pageView // the first read with console lines of this boot
	var grew, shotRunning bool
	deadline := time.Now().Add(4 * time.Minute)
	for {
		v := readPage(t, ctx)
		switch {
		case first.Lines == 0 && v.Lines > 0:
			first = v
		case first.Lines > 0 && v.Lines > first.Lines && v.ResultRun == "":
			grew = true
		}
		if strings.HasPrefix(v.Stage, "running ") && !shotRunning {
			screenshot(t, ctx, "bench-page-running.png")
			shotRunning = true
		}
		if v.ResultRun != "" {
			t.Logf("stages the page showed: %q", v.Stages)
			if !seen(v.Stages, "running speed") {
				t.Errorf("the page never showed the board running its benchmark: stages %q", v.Stages)
			}
			if !seen(v.Stages, "kernel") {
				t.Errorf("the page never showed the kernel booting: stages %q", v.Stages)
			}
			if !grew {
				t.Errorf("the console tail did not grow between two reads during the boot (first %d lines, last %d)", first.Lines, v.Lines)
			}
			// The board's frames as a person reads them: hello by its
			// type, the suite's output decoded, no base64.
			for _, want := range []string{"[hello]", "Doing md5 for"} {
				if !strings.Contains(v.Console, want) {
					t.Errorf("the console tail has no %q:\n%s", want, v.Console)
				}
			}
			if strings.Contains(v.Console, "@BB2") {
				t.Errorf("the console tail shows the protocol's frames as they are on the wire:\n%s", v.Console)
			}
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("no result on the page within 4 minutes; it shows %+v\nserve:\n%s\n%s", v, out.String(), errb.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func seen(stages []string, want string) bool {
	for _, s := range stages {
		if s == want {
			return true
		}
	}
	return false
}

// waitPage waits (a minute at most) until the page shows what cond wants.
func waitPage(t *testing.T, ctx context.Context, what string, cond func(pageView) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		v := readPage(t, ctx)
		if cond(v) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s; the page shows %+v", what, v)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestE2EServePageRemote: with --http-allow-remote serve listens where it
// was told and warns that other hosts can reach the page.
func TestE2EServePageRemote(t *testing.T) {
	requireSimBench(t)
	s := newSimBench(t, false)
	inv := serveInventory(s, map[string]*simBench{"pc1": s}, map[string]string{"pc1": simBoardIP})
	db := filepath.Join(t.TempDir(), "results.db")
	serve, out, errb := startServe(t, s, db, "--inventory", inv, "--log", "json", "--http", "0.0.0.0:8080", "--http-allow-remote")
	var warned, told bool
	for _, line := range strings.Split(out.String(), "\n") {
		var ev struct{ Event, Detail string }
		json.Unmarshal([]byte(line), &ev)
		warned = warned || ev.Event == "note" && strings.HasPrefix(ev.Detail, "warning: the bench page listens on 0.0.0.0:8080")
		told = told || ev.Event == "note" && ev.Detail == "bench page: http://0.0.0.0:8080/"
	}
	if !warned || !told {
		t.Errorf("no warning that the page is open to other hosts:\n%s", out.String())
	}
	// The page answers on the bench segment's address too.
	got := sh(t, "ip", "netns", "exec", s.ns, "curl", "-sS", "--max-time", "10", fmt.Sprintf("http://%s:8080/", strings.Split(simBenchNet, "/")[0]))
	if !strings.Contains(got, "<title>bootbench bench</title>") {
		t.Errorf("the page at the bench address: %q", got)
	}
	// Ctrl-C once serve is up (while it probes the segment, serve ends
	// with the probe's cancelled context).
	waitFor(t, time.Minute, "the segment's probe", func() bool { return strings.Contains(out.String(), "no other DHCP server answered") }, out, errb)
	serve.Process.Signal(syscall.SIGINT)
	if err := serve.Wait(); err != nil {
		t.Errorf("serve after Ctrl-C: %v\n%s", err, errb.String())
	}
}
