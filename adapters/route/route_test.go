package route

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/needs"
	"github.com/bootbench/bootbench/results/parse"
)

// vethSides are two namespaces joined by a veth pair, without offloads
// as the direct baseline has them, so packets cross at the size under
// test: the client's side and the server's.
func vethSides(t *testing.T) (client, server Side) {
	t.Helper()
	needs.Root(t, "needs root for network namespaces")
	needs.Commands(t, "iperf3", "ethtool")
	a, b := "bootbench-routetest-a", "bootbench-routetest-b"
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	ip("netns", "add", a)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", a).Run() })
	ip("netns", "add", b)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", b).Run() })
	ip("link", "add", "rt0", "netns", a, "type", "veth", "peer", "name", "rt1", "netns", b)
	ip("-n", a, "addr", "add", "198.18.3.1/24", "dev", "rt0")
	ip("-n", b, "addr", "add", "198.18.3.2/24", "dev", "rt1")
	ip("-n", a, "link", "set", "rt0", "up")
	ip("-n", b, "link", "set", "rt1", "up")
	// As the direct baseline has them: no offloads, so packets cross at
	// the size under test.
	for _, l := range [][]string{{a, "rt0"}, {b, "rt1"}} {
		if out, err := exec.Command("ip", "netns", "exec", l[0], "ethtool", "-K", l[1], "tso", "off", "gso", "off", "gro", "off").CombinedOutput(); err != nil {
			t.Fatalf("ethtool: %v: %s", err, out)
		}
	}
	return Side{Netns: a, Iface: "rt0", Addr: "198.18.3.1"}, Side{Netns: b, Iface: "rt1", Addr: "198.18.3.2"}
}

// Run between two namespaces joined by a veth pair: a figure for every
// size, protocol and direction, with two streams and a 256 KiB window,
// each test between its marks, the client's MTU given back, and no
// iperf3 left.
func TestRun(t *testing.T) {
	client, server := vethSides(t)
	plan := Plan{Sizes: []int{64, 1460}, Seconds: 1, UDPRate: 10e6, Window: "256K", Streams: 2}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var marks []string
	mark := func(label string, begin bool) error {
		marks = append(marks, fmt.Sprint(label, " ", begin))
		return nil
	}
	figs, err := Run(ctx, plan, client, server, mark)
	if err != nil {
		t.Fatal(err)
	}
	// Eight one-second tests: a test that hangs to its end would take 10.
	if d := time.Since(start); d > 25*time.Second {
		t.Errorf("eight one-second tests took %s", d)
	}
	var wantMarks []string
	for _, size := range []string{"64", "1460"} {
		for _, test := range []string{"tcp", "tcp-reverse", "udp", "udp-reverse"} {
			wantMarks = append(wantMarks, size+"/"+test+" true", size+"/"+test+" false")
		}
	}
	if !slices.Equal(marks, wantMarks) {
		t.Errorf("marks %q, want %q", marks, wantMarks)
	}
	ms := Metrics("direct", figs)
	got := map[string]float64{}
	for _, m := range ms {
		got[m.Name] = m.Value
	}
	for _, name := range []string{"tcp-throughput@64/direct", "tcp-throughput@1460/direct", "udp-throughput@64/direct", "udp-throughput@1460/direct",
		"tcp-throughput-reverse@64/direct", "tcp-throughput-reverse@1460/direct", "udp-throughput-reverse@64/direct", "udp-throughput-reverse@1460/direct"} {
		if !(got[name] > 0) {
			t.Errorf("%s = %v, want a rate (all: %v)", name, got[name], got)
		}
	}
	// 10 Mbit/s offered, both streams together: what arrives is about
	// that, whatever the size and direction.
	for _, name := range []string{"udp-throughput@1460/direct", "udp-throughput-reverse@1460/direct"} {
		if v := got[name]; v < 5e6 || v > 11e6 {
			t.Errorf("%s = %v, want about 10e6", name, v)
		}
	}
	if _, ok := got["udp-loss@64/direct"]; !ok {
		t.Errorf("no udp-loss@64/direct")
	}
	for _, sd := range []Side{client, server} {
		out, _ := exec.Command("ip", "-n", sd.Netns, "link", "show", sd.Iface).CombinedOutput()
		if !strings.Contains(string(out), "mtu 1500") {
			t.Errorf("MTU not given back: %s", out)
		}
	}
	assertNoProcesses(t, server)
}

// assertNoProcesses: nothing of a run is left in the side's namespace.
func assertNoProcesses(t *testing.T, s Side) {
	t.Helper()
	if pids, _ := exec.Command("ip", "netns", "pids", s.Netns).Output(); len(strings.TrimSpace(string(pids))) > 0 {
		t.Errorf("processes left in the server namespace: %s", pids)
	}
}

// A path that goes silent in the middle of a test, as the RB450G twin's
// PCnet ports once did after a flood: iperf3's client waits for its
// control connection without end, so the test is stopped at its limit
// and says so, and nothing of it is left.
func TestRunStopsTestThatDoesNotEnd(t *testing.T) {
	client, server := vethSides(t)
	plan := Plan{Sizes: []int{64}, Seconds: 1, UDPRate: 10e6}
	mark := func(label string, begin bool) error {
		if label == "64/tcp" && begin {
			go func() {
				time.Sleep(500 * time.Millisecond)
				exec.Command("ip", "-n", server.Netns, "link", "set", server.Iface, "down").Run()
			}()
		}
		return nil
	}
	start := time.Now()
	_, err := Run(context.Background(), plan, client, server, mark)
	want := "iperf3 TCP at 64 bytes to 198.18.3.2: did not end within 16s and was stopped"
	if err == nil || err.Error() != want {
		t.Errorf("Run: %v, want %q", err, want)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("a test cut at 16 s took %s", d)
	}
	assertNoProcesses(t, server)
}

// TestIPerfArgs: the client's command line for each kind of test.
func TestIPerfArgs(t *testing.T) {
	for _, tt := range []struct {
		plan Plan
		f    Figure
		want string
	}{
		{Plan{Seconds: 2, UDPRate: 50e6}, Figure{Size: 1460, Proto: "tcp"}, "-c 198.18.2.2 -J -t 2"},
		{Plan{Seconds: 0, UDPRate: 50e6, Streams: 1}, Figure{Size: 64, Proto: "tcp", Reverse: true}, "-c 198.18.2.2 -J -t 1 -R"},
		{Plan{Seconds: 1, UDPRate: 50e6, Window: "256K"}, Figure{Size: 64, Proto: "tcp"}, "-c 198.18.2.2 -J -t 1 -w 256K"},
		// The window is TCP's; the offered rate is split among the streams.
		{Plan{Seconds: 1, UDPRate: 50e6, Window: "256K", Streams: 4}, Figure{Size: 64, Proto: "udp", Reverse: true}, "-c 198.18.2.2 -J -t 1 -P 4 -R -u -l 64 -b 12500000"},
		{Plan{Seconds: 3, UDPRate: 1e6, Streams: 2}, Figure{Size: 512, Proto: "tcp"}, "-c 198.18.2.2 -J -t 3 -P 2"},
	} {
		if got := strings.Join(iperfArgs(tt.plan, "198.18.2.2", tt.f), " "); got != tt.want {
			t.Errorf("iperfArgs(%+v, %+v) = %q, want %q", tt.plan, tt.f, got, tt.want)
		}
	}
}

// TestMetricNames: the forward tests keep the names stored runs have,
// the reverse ones add "-reverse" to the measure, and every test's CPU
// sample has a name of its own.
func TestMetricNames(t *testing.T) {
	var figs []Figure
	for _, f := range []Figure{{Proto: "tcp"}, {Proto: "tcp", Reverse: true}, {Proto: "udp"}, {Proto: "udp", Reverse: true}} {
		f.Size = 1460
		f.Test = parse.IPerf3Test{Received: 1e6, Retransmits: 3, LostPercent: 1}
		figs = append(figs, f)
	}
	var names []string
	for _, m := range Metrics("plain", figs) {
		names = append(names, m.Name)
	}
	want := []string{"tcp-throughput@1460/plain", "tcp-retransmits@1460/plain", "tcp-throughput-reverse@1460/plain", "tcp-retransmits-reverse@1460/plain",
		"udp-throughput@1460/plain", "udp-loss@1460/plain", "udp-throughput-reverse@1460/plain", "udp-loss-reverse@1460/plain"}
	if !slices.Equal(names, want) {
		t.Errorf("Metrics = %q, want %q", names, want)
	}
	for _, tt := range []struct{ label, want string }{
		{"1460/tcp", "cpu-busy@1460/stateful"},
		{"1460/tcp-reverse", "cpu-busy-reverse@1460/stateful"},
		{"64/udp", "udp-cpu-busy@64/stateful"},
		{"64/udp-reverse", "udp-cpu-busy-reverse@64/stateful"},
		{"64/sctp", ""}, {"x/tcp", ""}, {"1460", ""},
	} {
		if got, ok := CPUMetric(tt.label, "stateful"); got != tt.want || ok != (tt.want != "") {
			t.Errorf("CPUMetric(%q) = %q, %v; want %q", tt.label, got, ok, tt.want)
		}
	}
	for _, f := range figs {
		if name, ok := CPUMetric(f.Label(), "plain"); !ok {
			t.Errorf("no CPU metric for test %s (%q)", f.Label(), name)
		}
	}
}

// TestRetryable: only a test that failed before it measured is tried
// again (iperf3's own messages).
func TestRetryable(t *testing.T) {
	for _, tt := range []struct {
		msg  string
		want bool
	}{
		{"iperf3: error - unable to connect to server - server may have stopped running or use a different port, firewall issue, etc.: Connection refused", true},
		{"iperf3: error - the server is busy running a test. try again later", true},
		{"line 1: iperf3: unable to receive control message: Connection reset by peer", true},
		{"line 1: iperf3: unable to connect to server: Connection reset by peer", true},
		{"iperf3: error - unable to connect to server - server may have stopped running or use a different port, firewall issue, etc.: Connection reset by peer", true},
		{"iperf3: error - unable to read from stream socket: Connection reset by peer", false},
		{"iperf3: error - unable to connect to server: No route to host", false},
		{"iperf3 JSON has no end.sum_received and end.sum_sent (iperf3 before 3.7, or truncated output?)", false},
	} {
		if got := retryable(errors.New(tt.msg)); got != tt.want {
			t.Errorf("retryable(%q) = %v, want %v", tt.msg, got, tt.want)
		}
	}
}
