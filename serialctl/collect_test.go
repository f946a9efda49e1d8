package serialctl

import (
	"errors"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/internal/frame"
	"github.com/bootbench/bootbench/internal/frame/frametest"
)

func board(t *testing.T, run, output string, chunks ...string) []string {
	t.Helper()
	return frametest.Board(run, output, chunks...)
}

func TestCollector(t *testing.T) {
	const out = "version: bootbench-speed 0.1.0\nmd5 1.00k\n"
	good := board(t, "r1", out, "version: bootbench-speed 0.1.0\n", "md5 1.00k\n")
	flipped := func(l string) string { b := []byte(l); b[len(frame.Prefix)+8] ^= 0x20; return string(b) }
	tests := []struct {
		name    string
		lines   []string
		want    Event // last event
		corrupt bool
	}{
		{"verified run among kernel noise", append([]string{"[    0.000000] Linux version 6.1.0", "random junk"}, good...), Done, false},
		{"bad crc in a chunk", []string{good[0], flipped(good[1]), good[2], good[3]}, Transcript, true},
		{"lost chunk", []string{good[0], good[1], good[3]}, Transcript, true},
		{"stale frames from an old boot are ignored", append(board(t, "old", "x"), good...), Done, false},
		{"digest mismatch", append([]string{}, board(t, "r1", "other output", "version: bootbench-speed 0.1.0\n", "md5 1.00k\n")...), Transcript, true},
		{"truncated frame", []string{good[0], good[1][:len(good[1])-4]}, Transcript, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCollector("r1")
			var last Event
			var err error
			for _, l := range tt.lines {
				last, err = c.Feed([]byte(l))
				if err != nil {
					break
				}
			}
			if tt.corrupt {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("err = %v, want ErrCorrupt", err)
				}
				// Once corrupt, nothing makes the run whole again.
				for _, l := range good {
					if ev, _ := c.Feed([]byte(l)); ev == Done {
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

func TestCollectorFail(t *testing.T) {
	l, _ := frame.Encode(0, frame.Fail, frame.FailBody{Reason: "no bootbench.run= on the kernel command line"})
	c := NewCollector("r1")
	ev, err := c.Feed([]byte(l))
	if err != nil || ev != Failed || !strings.Contains(c.Reason, "bootbench.run") {
		t.Fatalf("ev %v err %v reason %q", ev, err, c.Reason)
	}
}

// The route benchmark's ready and counters frames come between hello and
// done, each an event of its own, kept in order for the record.
func TestCollectorRoute(t *testing.T) {
	enc := func(seq int, typ string, body any) []byte {
		l, err := frame.Encode(seq, typ, body)
		if err != nil {
			t.Fatal(err)
		}
		return []byte(l)
	}
	lines := []struct {
		line []byte
		want Event
	}{
		{enc(0, frame.Hello, frame.HelloBody{Run: "r1", Arch: "amd64", Bench: "route"}), Hello},
		{enc(1, frame.Ready, frame.ReadyBody{Run: "r1", Config: "plain"}), Ready},
		{enc(2, frame.Counters, frame.CountersBody{Run: "r1", Config: "plain", Forwarded: 10}), Counters},
		{enc(3, frame.Ready, frame.ReadyBody{Run: "r1", Config: "conntrack", Rules: []string{"ct state new counter"}, Conntrack: true}), Ready},
		{enc(4, frame.Counters, frame.CountersBody{Run: "r1", Config: "conntrack", Forwarded: 12, ConntrackEntries: 2}), Counters},
		{enc(5, frame.Done, frame.DoneBody{Run: "r1", SHA256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}), Done},
	}
	c := NewCollector("r1")
	for i, l := range lines {
		ev, err := c.Feed(l.line)
		if err != nil || ev != l.want {
			t.Fatalf("line %d: event %v err %v, want %v", i, ev, err, l.want)
		}
	}
	res := c.Result()
	if len(res.Ready) != 2 || res.Ready[1].Config != "conntrack" || !res.Ready[1].Conntrack || len(res.Counters) != 2 || res.Counters[1].ConntrackEntries != 2 {
		t.Errorf("route reports: %+v %+v", res.Ready, res.Counters)
	}
}
