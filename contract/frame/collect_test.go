package frame_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/internal/testkit/frametest"
)

func TestCollector(t *testing.T) {
	const out = "version: bootbench-speed 0.1.0\nmd5 1.00k\n"
	good := frametest.Board("r1", out, "version: bootbench-speed 0.1.0\n", "md5 1.00k\n")
	flipped := func(l string) string { b := []byte(l); b[len(frame.Prefix)+12] ^= 0x20; return string(b) }
	tests := []struct {
		name    string
		lines   []string
		want    frame.Event // last event
		corrupt bool
	}{
		{"verified run among kernel noise", append([]string{"[    0.000000] Linux version 6.1.0", "random junk"}, good...), frame.EventDone, false},
		{"bad crc in a chunk", []string{good[0], flipped(good[1]), good[2], good[3]}, frame.EventTranscript, true},
		{"lost chunk", []string{good[0], good[1], good[3]}, frame.EventTranscript, true},
		{"stale frames from an old boot are ignored", append(frametest.Board("old", "x"), good...), frame.EventDone, false},
		{"digest mismatch", frametest.Board("r1", "other output", "version: bootbench-speed 0.1.0\n", "md5 1.00k\n"), frame.EventTranscript, true},
		{"truncated frame", []string{good[0], good[1][:len(good[1])-4]}, frame.EventTranscript, true},
		{"chunk out of order", []string{good[0], encode(t, "r1", 1, frame.Raw, frame.RawBody{N: 1, Data: "eA=="})}, frame.EventTranscript, true},
		{"body of the wrong shape", []string{encode(t, "r1", 0, frame.Hello, []int{1})}, frame.EventTranscript, true},
		{"unknown type", []string{encode(t, "r1", 0, "bogus", struct{}{})}, frame.EventTranscript, true},
		// Without a hello there is no clock check; a second would
		// replace the report the first gave.
		{"done with no hello", renumber(t, good[1:], 0), frame.EventTranscript, true},
		{"second hello", append([]string{good[0], encode(t, "r1", 1, frame.Hello, frame.HelloBody{Arch: "mipsle"})}, renumber(t, good[1:], 2)...), frame.EventTranscript, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := frame.NewCollector("r1")
			var last frame.Event
			var err error
			for _, l := range tt.lines {
				last, err = c.Feed([]byte(l))
				if err != nil {
					break
				}
			}
			if tt.corrupt {
				if !errors.Is(err, frame.ErrCorrupt) {
					t.Fatalf("err = %v, want ErrCorrupt", err)
				}
				// Once corrupt, nothing makes the run whole again.
				for _, l := range good {
					if ev, _ := c.Feed([]byte(l)); ev == frame.EventDone {
						t.Fatal("a corrupt run completed")
					}
				}
				return
			}
			if err != nil || last != tt.want {
				t.Fatalf("last event %v err %v, want %v", last, err, tt.want)
			}
			if got := string(c.Result().Output); got != out {
				t.Errorf("output %q, want %q", got, out)
			}
			if c.Result().Hello.Arch != "amd64" {
				t.Errorf("hello %+v", c.Result().Hello)
			}
		})
	}
}

// renumber re-encodes frame lines of run r1 from sequence number seq on.
func renumber(t *testing.T, lines []string, seq int) []string {
	t.Helper()
	var out []string
	for i, l := range lines {
		f, err := frame.Decode([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, encode(t, "r1", seq+i, f.Type, f.Body))
	}
	return out
}

// encode is the frame line of body, which must encode.
func encode(t *testing.T, run string, seq int, typ frame.Type, body any) string {
	t.Helper()
	l, err := frame.Encode(run, seq, typ, body)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A board that was not told its run can only say so in a fail frame
// without a run id, and that frame is the booted run's.
func TestCollectorFailWithoutRun(t *testing.T) {
	tests := []struct {
		name string
		line string
		want frame.Event
	}{
		{"fail without run", encode(t, "", 0, frame.Fail, frame.FailBody{Reason: "no bootbench.run= on the kernel command line"}), frame.EventFailed},
		{"fail of another run", encode(t, "old", 0, frame.Fail, frame.FailBody{Reason: "old"}), frame.EventStale},
		{"hello without run", encode(t, "", 0, frame.Hello, frame.HelloBody{Arch: "amd64"}), frame.EventStale},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := frame.NewCollector("r1")
			ev, err := c.Feed([]byte(tt.line))
			if err != nil || ev != tt.want {
				t.Fatalf("event %v err %v, want %v", ev, err, tt.want)
			}
			if tt.want == frame.EventFailed && !strings.Contains(c.Reason, "bootbench.run") {
				t.Errorf("reason %q", c.Reason)
			}
		})
	}
}

// The route benchmark's ready and counters frames come between hello and
// done, each an event of its own, kept in order for the record.
func TestCollectorRoute(t *testing.T) {
	lines := []struct {
		line string
		want frame.Event
	}{
		{encode(t, "r1", 0, frame.Hello, frame.HelloBody{Arch: "amd64", Bench: "route"}), frame.EventHello},
		{encode(t, "r1", 1, frame.Ready, frame.ReadyBody{Config: "plain"}), frame.EventReady},
		{encode(t, "r1", 2, frame.Counters, frame.CountersBody{Config: "plain", Forwarded: 10}), frame.EventCounters},
		{encode(t, "r1", 3, frame.Ready, frame.ReadyBody{Config: "conntrack", Rules: []string{"ct state new counter"}, Conntrack: true}), frame.EventReady},
		{encode(t, "r1", 4, frame.Counters, frame.CountersBody{Config: "conntrack", Forwarded: 12, ConntrackEntries: 2}), frame.EventCounters},
		{encode(t, "r1", 5, frame.Done, frame.DoneBody{SHA256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}), frame.EventDone},
	}
	c := frame.NewCollector("r1")
	for i, l := range lines {
		ev, err := c.Feed([]byte(l.line))
		if err != nil || ev != l.want {
			t.Fatalf("line %d: event %v err %v, want %v", i, ev, err, l.want)
		}
	}
	res := c.Result()
	if len(res.Ready) != 2 || res.Ready[1].Config != "conntrack" || !res.Ready[1].Conntrack || len(res.Counters) != 2 || res.Counters[1].ConntrackEntries != 2 {
		t.Errorf("route reports: %+v %+v", res.Ready, res.Counters)
	}
}

// The throttling watch: zones named once, then samples that read each
// zone, in time order, after the board's hello.
func TestCollectorWatch(t *testing.T) {
	hello := encode(t, "r1", 0, frame.Hello, frame.HelloBody{Arch: "arm64", ClockRequestedMHz: 800})
	zones := []frame.ThermalZone{{Type: "cpu-thermal", Trips: []frame.TripPoint{{Type: "passive", TempMC: 85000}, {Type: "critical", TempMC: 105000}}}}
	first := frame.WatchBody{Zones: zones, Samples: []frame.WatchSample{{AtMS: 0, CurKHz: []int{800000}, TempMC: []int{51000}}, {AtMS: 1000, CurKHz: []int{800000}, TempMC: []int{62000}}}}
	tests := []struct {
		name  string
		lines []string
		err   string // "" for a watch the host takes
	}{
		{"zones, then samples", []string{hello, encode(t, "r1", 1, frame.Watch, first),
			encode(t, "r1", 2, frame.Watch, frame.WatchBody{Samples: []frame.WatchSample{{AtMS: 9000, CurKHz: []int{600000}, TempMC: []int{86000}}}})}, ""},
		{"a board without zones", []string{hello, encode(t, "r1", 1, frame.Watch, frame.WatchBody{Samples: []frame.WatchSample{{AtMS: 0, CurKHz: []int{800000}}}})}, ""},
		{"before hello", []string{encode(t, "r1", 0, frame.Watch, first)}, "no hello before it"},
		{"zones named twice", []string{hello, encode(t, "r1", 1, frame.Watch, first), encode(t, "r1", 2, frame.Watch, first)}, "named again"},
		{"a sample missing a zone", []string{hello, encode(t, "r1", 1, frame.Watch, frame.WatchBody{Zones: zones, Samples: []frame.WatchSample{{AtMS: 0, CurKHz: []int{800000}}}})}, "reads 0 zones of 1"},
		{"back in time", []string{hello, encode(t, "r1", 1, frame.Watch, first),
			encode(t, "r1", 2, frame.Watch, frame.WatchBody{Samples: []frame.WatchSample{{AtMS: 500, TempMC: []int{60000}}}})}, "at 500 ms after one at 1000 ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := frame.NewCollector("r1")
			var err error
			var ev frame.Event
			for _, l := range tt.lines {
				if ev, err = c.Feed([]byte(l)); err != nil {
					break
				}
			}
			if tt.err != "" {
				if !errors.Is(err, frame.ErrCorrupt) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want a corrupt run saying %q", err, tt.err)
				}
				return
			}
			if err != nil || ev != frame.EventWatch {
				t.Fatalf("event %v err %v, want a watch", ev, err)
			}
			res := c.Result()
			n := 0
			for _, l := range tt.lines[1:] {
				f, _ := frame.Decode([]byte(l))
				var b frame.WatchBody
				json.Unmarshal(f.Body, &b)
				n += len(b.Samples)
			}
			if len(res.Samples) != n || (len(res.Zones) > 0 && res.Zones[0].Trips[0].TempMC != 85000) {
				t.Errorf("kept %d samples of %d, zones %+v", len(res.Samples), n, res.Zones)
			}
		})
	}
}
