// Package route is the host's side of the route benchmark: iperf3 (Debian's
// iperf3, -J) sends traffic from a client network through the board to a
// server network, at each packet size, TCP and UDP at a fixed offered rate,
// and the figures become metrics named by size and configuration:
//
//	tcp-throughput@<size>/<config>   bit/s that arrived
//	tcp-retransmits@<size>/<config>  segments sent again
//	udp-throughput@<size>/<config>   bit/s that arrived of the offered rate
//	udp-loss@<size>/<config>         % of the datagrams lost
//
// The configuration "direct" is the baseline with the board bypassed.
//
// A packet size is the payload each packet carries: UDP datagrams of that
// many bytes (iperf3 -l), and TCP segments of that many bytes, made by an
// MTU on the client's interface of size + 52 (IPv4 20, TCP 20, timestamps
// 12) on both hosts' interfaces: Linux refuses an MSS below 88 (iperf3
// -M), and an MTU also holds for a sender writing faster than the wire.
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

// HeaderBytes is what an MTU adds to a TCP payload: IPv4 and TCP headers
// and TCP's timestamp option.
const HeaderBytes = 52

// Plan is what one sweep sends.
type Plan struct {
	Sizes   []int
	Seconds int     // per test, whole (iperf3 -t)
	UDPRate float64 // offered rate of the UDP tests, bit/s
}

// Figure is one test's result.
type Figure struct {
	Size  int
	Test  parse.IPerf3Test
	Proto string // "tcp" or "udp"
}

// Metrics names a sweep's figures for config.
func Metrics(config string, figs []Figure) []results.Metric {
	var ms []results.Metric
	for _, f := range figs {
		at := fmt.Sprintf("@%d/%s", f.Size, config)
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

// Run sends plan's traffic from client to server: per size, a TCP test
// and a UDP test. The iperf3 server runs for this call only.
func Run(ctx context.Context, plan Plan, client, server Side) ([]Figure, error) {
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
	var figs []Figure
	for _, size := range plan.Sizes {
		for _, s := range []Side{client, server} {
			if err := setMTU(ctx, s, size+HeaderBytes); err != nil {
				return nil, err
			}
		}
		for _, proto := range []string{"tcp", "udp"} {
			t, err := iperf(ctx, plan, client, server, size, proto)
			if err != nil {
				return nil, err
			}
			figs = append(figs, Figure{Size: size, Test: t, Proto: proto})
		}
	}
	return figs, nil
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
func iperf(ctx context.Context, plan Plan, client, server Side, size int, proto string) (parse.IPerf3Test, error) {
	args := []string{"-c", server.Addr, "-J", "-t", strconv.Itoa(max(1, plan.Seconds))}
	if proto == "udp" {
		args = append(args, "-u", "-l", strconv.Itoa(size), "-b", strconv.FormatFloat(plan.UDPRate, 'f', 0, 64))
	}
	var lastErr error
	for try := 0; try < 10; try++ {
		// A test that does not end (its control connection stuck) is
		// a failed measurement, not a hung run.
		tctx, cancel := context.WithTimeout(ctx, time.Duration(max(1, plan.Seconds)+15)*time.Second)
		out, err := client.command(tctx, "iperf3", args...).Output()
		cancel()
		if ctx.Err() != nil {
			return parse.IPerf3Test{}, ctx.Err()
		}
		t, perr := parse.IPerf3JSON(out)
		if perr == nil && err == nil {
			return t, nil
		}
		lastErr = perr
		if lastErr == nil {
			lastErr = err
		}
		if !strings.Contains(lastErr.Error(), "Connection refused") && !strings.Contains(lastErr.Error(), "busy") {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	return parse.IPerf3Test{}, fmt.Errorf("iperf3 %s at %d bytes to %s: %w", strings.ToUpper(proto), size, server.Addr, lastErr)
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
