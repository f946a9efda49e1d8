// Package route is the host's side of the route benchmark: iperf3 (Debian's
// iperf3, -J) sends traffic from a client network through the board to a
// server network, at each packet size, TCP and UDP at a fixed offered rate,
// each test forward (client to server: LAN to WAN) and reverse (iperf3 -R,
// the server sends: WAN to LAN), and the figures become metrics named by
// size and configuration:
//
//	tcp-throughput@<size>/<config>   bit/s that arrived
//	tcp-retransmits@<size>/<config>  segments sent again
//	udp-throughput@<size>/<config>   bit/s that arrived of the offered rate
//	udp-loss@<size>/<config>         % of the datagrams lost
//
// and the same with "-reverse" after the measure for the reverse tests
// (tcp-throughput-reverse@1460/plain): the forward names are the ones
// metrics stored before the reverse tests existed carry. The
// configuration "direct" is the baseline with the board bypassed.
//
// A packet size is the payload each packet carries: UDP datagrams of that
// many bytes (iperf3 -l), and TCP segments of that many bytes, made by an
// MTU on the client's interface of size + 40 (IPv4 20, TCP 20) on both
// hosts' interfaces: Linux refuses an MSS below 88 (iperf3 -M), and an
// MTU also holds for a sender writing faster than the wire. The two
// hosts' TCP sends no timestamps (a sysctl of their namespaces), so that
// a full Ethernet segment's 1460 bytes fit a 1500-byte wire: with
// timestamps its MTU would be 1512, which a real router's port, or
// QEMU's PCnet, drops.
// Both ends, because a veth pair drops what exceeds the receiving end's
// MTU: a server left at 1500 loses its own segments to a small client.
package route

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/parse"
)

// DefaultSizes are the packet sizes of the seed reports, from 64 bytes to
// a full Ethernet segment's TCP payload.
var DefaultSizes = []int{64, 128, 256, 512, 1024, 1460}

// Direct is the configuration name of the baseline without the board.
const Direct = "direct"

// HeaderBytes is what an MTU adds to a TCP payload: IPv4 and TCP headers,
// no options (timestamps are off: see noTimestamps).
const HeaderBytes = 40

// Plan is what one sweep sends.
type Plan struct {
	Sizes   []int
	Seconds int     // per test, whole (iperf3 -t)
	UDPRate float64 // offered rate of the UDP tests, bit/s, all streams together
	// Window is the TCP tests' window (socket buffer, iperf3 -w: "256K");
	// "" leaves the kernel's.
	Window string
	// Streams is how many parallel streams a test sends (iperf3 -P);
	// 0 is one.
	Streams int
	// MaxPayload, when not 0, is the most a packet carries whatever the
	// size: a tunnel's (see Path.Run). The figures keep the size's name.
	MaxPayload int
}

// payload is what a packet of a test at size carries under plan.
func (plan Plan) payload(size int) int {
	if plan.MaxPayload > 0 {
		return min(size, plan.MaxPayload)
	}
	return size
}

// Figure is one test's result.
type Figure struct {
	Size    int
	Test    parse.IPerf3Test
	Proto   string // "tcp" or "udp"
	Reverse bool   // the server sent (iperf3 -R)
}

// Label names the test a figure is of, the way the board's CPU samples
// name it: "1460/tcp", "64/udp-reverse".
func (f Figure) Label() string {
	return strconv.Itoa(f.Size) + "/" + f.Proto + f.suffix()
}

// suffix is what the reverse tests' metric names add to the measure.
func (f Figure) suffix() string {
	if f.Reverse {
		return "-reverse"
	}
	return ""
}

// Metrics names a sweep's figures for config.
func Metrics(config string, figs []Figure) []results.Metric {
	var ms []results.Metric
	for _, f := range figs {
		at := fmt.Sprintf("%s@%d/%s", f.suffix(), f.Size, config)
		switch f.Proto {
		case "tcp":
			ms = append(ms, results.Metric{Name: "tcp-throughput" + at, Unit: parse.UnitBitsPerSec, Value: f.Test.Received})
			if f.Test.Retransmits >= 0 {
				ms = append(ms, results.Metric{Name: "tcp-retransmits" + at, Unit: "count", Value: float64(f.Test.Retransmits)})
			}
		case "udp":
			ms = append(ms,
				results.Metric{Name: "udp-throughput" + at, Unit: parse.UnitBitsPerSec, Value: f.Test.Received},
				results.Metric{Name: "udp-loss" + at, Unit: "%", Value: f.Test.LostPercent})
		}
	}
	return ms
}

// CPUMetric names the board's CPU busy fraction over the test labelled
// label (Figure.Label) in config: cpu-busy@<size>/<config> for the TCP
// test (the one that loads the board as much as it can carry),
// udp-cpu-busy@... for the UDP test at its fixed offered rate, each with
// "-reverse" after it for the reverse test. ok is false for a label no
// test has.
func CPUMetric(label, config string) (name string, ok bool) {
	size, test, ok := strings.Cut(label, "/")
	if _, err := strconv.Atoi(size); !ok || err != nil {
		return "", false
	}
	proto, reverse := strings.CutSuffix(test, "-reverse")
	suffix := ""
	if reverse {
		suffix = "-reverse"
	}
	switch proto {
	case "tcp":
		return "cpu-busy" + suffix + "@" + size + "/" + config, true
	case "udp":
		return "udp-cpu-busy" + suffix + "@" + size + "/" + config, true
	}
	return "", false
}

// Mark is told, by a test's label (Figure.Label), when each test of a
// sweep begins and when it has ended: the driver has the board sample its
// CPU over the test. nil marks nothing.
type Mark func(label string, begin bool) error

// Side is one host network of the bench: where a command runs (the
// network namespace's name, "" for this one), its interface toward the
// board and its address there.
type Side struct {
	Netns string
	Iface string
	Addr  string
}

func (s Side) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	if s.Netns != "" {
		args = append([]string{"netns", "exec", s.Netns, name}, args...)
		name = "ip"
	}
	cmd := exec.CommandContext(ctx, name, args...)
	// Killed with us: an iperf3 must not outlive a bootbench killed
	// with SIGKILL.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// Run sends plan's traffic between client and server: per size, a TCP
// test and a UDP test, each forward and reverse, told to mark as each
// begins and ends. The iperf3 server runs for this call only.
func Run(ctx context.Context, plan Plan, client, server Side, mark Mark) ([]Figure, error) {
	if _, err := exec.LookPath("iperf3"); err != nil {
		return nil, fmt.Errorf("the route benchmark needs iperf3 on this host (Debian package iperf3): %w", err)
	}
	stop, err := startServer(ctx, server)
	if err != nil {
		return nil, err
	}
	defer stop()
	defer func() {
		for _, s := range []Side{client, server} {
			setMTU(context.WithoutCancel(ctx), s, 1500)
		}
	}()
	for _, s := range []Side{client, server} {
		if err := noTimestamps(ctx, s); err != nil {
			return nil, err
		}
	}
	var figs []Figure
	for _, size := range plan.Sizes {
		for _, s := range []Side{client, server} {
			if err := setMTU(ctx, s, plan.payload(size)+HeaderBytes); err != nil {
				return nil, err
			}
		}
		for _, proto := range []string{"tcp", "udp"} {
			for _, reverse := range []bool{false, true} {
				f := Figure{Size: size, Proto: proto, Reverse: reverse}
				var err error
				if f.Test, err = marked(mark, f.Label(), func() (parse.IPerf3Test, error) {
					return iperf(ctx, plan, client, server, f)
				}); err != nil {
					return nil, err
				}
				figs = append(figs, f)
			}
		}
	}
	return figs, nil
}

// marked runs one test between its two marks.
func marked(mark Mark, label string, test func() (parse.IPerf3Test, error)) (parse.IPerf3Test, error) {
	if mark == nil {
		return test()
	}
	if err := mark(label, true); err != nil {
		return parse.IPerf3Test{}, err
	}
	t, err := test()
	if err != nil {
		return t, err
	}
	return t, mark(label, false)
}

// noTimestamps turns TCP timestamps off in the side's namespace, one the
// route networks made for the run (a side in the host's own is left as it
// is), so a segment's headers are HeaderBytes.
func noTimestamps(ctx context.Context, s Side) error {
	if s.Netns == "" {
		return nil
	}
	out, err := s.command(ctx, "sh", "-c", "echo 0 > /proc/sys/net/ipv4/tcp_timestamps").CombinedOutput()
	if err != nil {
		return fmt.Errorf("turn TCP timestamps off in namespace %s: %w: %s", s.Netns, err, bytes.TrimSpace(out))
	}
	return nil
}

// setMTU sets an interface's MTU, so TCP sends segments of the size under
// test (the MSS it announces and uses follows the MTU).
func setMTU(ctx context.Context, s Side, mtu int) error {
	out, err := s.command(ctx, "ip", "link", "set", "dev", s.Iface, "mtu", strconv.Itoa(mtu)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("set MTU %d on %s: %w: %s", mtu, s.Iface, err, bytes.TrimSpace(out))
	}
	return nil
}

// iperf runs one test and reads its figures. A server not yet listening
// refuses the first connection: the test is tried again for a moment.
func iperf(ctx context.Context, plan Plan, client, server Side, f Figure) (parse.IPerf3Test, error) {
	args := iperfArgs(plan, server.Addr, f)
	var lastErr error
	for try := 0; try < 10; try++ {
		// A test that does not end (its control connection stuck) is
		// a failed measurement, not a hung run.
		limit := time.Duration(max(1, plan.Seconds)+15) * time.Second
		tctx, cancel := context.WithTimeout(ctx, limit)
		out, err := client.command(tctx, "iperf3", args...).Output()
		cut := err != nil && tctx.Err() != nil
		cancel()
		if ctx.Err() != nil {
			return parse.IPerf3Test{}, ctx.Err()
		}
		if cut {
			// Killed by the limit, iperf3 printed nothing: say what
			// happened, not that its output was empty.
			lastErr = fmt.Errorf("did not end within %s and was stopped", limit)
			break
		}
		t, perr := parse.IPerf3JSON(out)
		if perr == nil && err == nil {
			return t, nil
		}
		lastErr = perr
		if lastErr == nil {
			lastErr = err
		}
		if !retryable(lastErr) {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	dir := ""
	if f.Reverse {
		dir = " reverse"
	}
	return parse.IPerf3Test{}, fmt.Errorf("iperf3 %s%s at %d bytes to %s: %w", strings.ToUpper(f.Proto), dir, f.Size, server.Addr, lastErr)
}

// retryable is a test that failed before it measured anything: a server
// not yet listening refuses the connection, one still ending the last test
// says it is busy, or resets the new test's control connection (seen after
// a reverse test, through the stateful firewall). iperf3's server closes
// its listening socket after each test and opens a new one: a connection
// that reached the old one's queue is reset ("unable to connect to server:
// Connection reset by peer", seen on the MIPS twin), one that came between
// the two is refused.
func retryable(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Connection refused") || strings.Contains(msg, "busy") ||
		strings.Contains(msg, "control message") ||
		strings.Contains(msg, "unable to connect to server") && strings.Contains(msg, "Connection reset")
}

// iperfArgs is the client's command line for the test f is to hold. UDP's
// offered rate is per stream in iperf3 (-b), so it is split among them.
func iperfArgs(plan Plan, server string, f Figure) []string {
	args := []string{"-c", server, "-J", "-t", strconv.Itoa(max(1, plan.Seconds))}
	streams := max(1, plan.Streams)
	if streams > 1 {
		args = append(args, "-P", strconv.Itoa(streams))
	}
	if f.Reverse {
		args = append(args, "-R")
	}
	switch {
	case f.Proto == "udp":
		args = append(args, "-u", "-l", strconv.Itoa(plan.payload(f.Size)), "-b", strconv.FormatFloat(plan.UDPRate/float64(streams), 'f', 0, 64))
	case plan.Window != "":
		args = append(args, "-w", plan.Window)
	}
	return args
}

// startServer starts iperf3's server on s and returns what stops it.
func startServer(ctx context.Context, s Side) (stop func(), err error) {
	cmd := s.command(context.WithoutCancel(ctx), "iperf3", "-s", "-B", s.Addr)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start iperf3 server: %w", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	stop = func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	select {
	case <-done:
		return nil, fmt.Errorf("iperf3 server on %s exited at start: %s", s.Addr, bytes.TrimSpace(errb.Bytes()))
	case <-time.After(200 * time.Millisecond):
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	}
	return stop, nil
}
