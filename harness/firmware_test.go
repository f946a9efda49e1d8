package harness

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/benchmark"
	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/results"
)

// fakeFirmware is a host side whose path forwards after failing times
// tries, and whose measurement is one figure per configuration.
type fakeFirmware struct {
	failing  int
	tries    int
	measured []string
}

func (f *fakeFirmware) Forwards(ctx context.Context) error {
	f.tries++
	if f.tries <= f.failing {
		return errors.New("no answer from 198.18.1.2 to 198.18.2.2")
	}
	return nil
}

func (f *fakeFirmware) Measure(ctx context.Context, config string) ([]results.Metric, error) {
	f.measured = append(f.measured, config)
	return []results.Metric{{Name: "tcp-throughput@1460/" + config, Unit: "bit/s", Value: 1e6}}, nil
}

func (f *fakeFirmware) Tool() (string, string) { return "iperf3", "3.12" }
func (f *fakeFirmware) String() string         { return "fake networks" }

// TestRunFirmware takes a board under its own firmware through its
// configurations: console steps, the operator's, and what fails them.
func TestRunFirmware(t *testing.T) {
	prompt := lines("firmware up", "fw# ")
	steps := []boards.RouteConfig{
		{Name: "plain", Steps: []boards.ConsoleStep{{Expect: "fw# ", Timeout: time.Second}, {Send: "nft flush ruleset"}}},
		{Name: "stateful", Steps: []boards.ConsoleStep{{Manual: "set the firewall to stateful"}}},
	}
	tests := []struct {
		name     string
		boot     script
		failing  int
		confirm  bool
		status   string
		reason   string
		measured string
	}{
		{"both configurations", prompt, 0, true, results.StatusOK, "", "direct,plain,stateful"},
		{"forwards after a while", prompt, 1, true, results.StatusOK, "", "direct,plain,stateful"},
		{"never forwards", prompt, 100, true, results.StatusFailed, "boot-timeout: the path through the board did not forward after power-on within 2s: no answer", ""},
		{"no prompt", lines("firmware up"), 0, true, results.StatusFailed, `boot-timeout: configuration plain: console step 1: "fw# " did not come within 1s`, "direct"},
		{"nobody at the terminal", prompt, 0, false, results.StatusFailed, "setup: fake1, configuration stateful: set the firewall to stateful: nobody confirmed it", "direct,plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ft := &fakeTarget{boots: []script{tt.boot}}
			o := fakeOptions(t, ft, boards.Profile{})
			o.Benchmark, o.Retries = benchmark.Route, 0
			o.Board.OwnFirmware, o.Board.RouteConfigs = true, steps
			fw := &fakeFirmware{failing: tt.failing}
			op := &fakeOperator{confirm: tt.confirm}
			o.Firmware, o.Operator = fw, op
			rec, err := Run(context.Background(), o.Job, o.Rig)
			if rec == nil {
				t.Fatalf("nothing stored: %v", err)
			}
			if rec.Status != tt.status || !strings.HasPrefix(rec.Reason, tt.reason) {
				t.Errorf("status %s, reason %q; want %s, %q", rec.Status, rec.Reason, tt.status, tt.reason)
			}
			if got := strings.Join(fw.measured, ","); got != tt.measured {
				t.Errorf("measured %q, want %q", got, tt.measured)
			}
			if tt.status == results.StatusOK && (len(rec.Metrics) != 3 || rec.Tool != "iperf3" || len(op.asked) != 1 || rec.ImageDigest != "") {
				t.Errorf("stored %+v, operator asked %q", rec, op.asked)
			}
			if ft.ons != 1 || ft.offs != 1 {
				t.Errorf("powered on %d, off %d times; want once each", ft.ons, ft.offs)
			}
		})
	}
}
