package power

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
)

func TestNew(t *testing.T) {
	op := Terminal(nil, new(strings.Builder))
	tests := []struct {
		name    string
		spec    boards.PowerSpec
		op      Operator
		want    string // String() of the driver, or
		wantErr string // a part of New's error
		cycler  bool
	}{
		{"manual", boards.PowerSpec{Driver: boards.PowerManual}, op, "manual", "", true},
		{"manual without an operator", boards.PowerSpec{Driver: boards.PowerManual}, nil, "", "needs an operator", false},
		{"command", boards.PowerSpec{Driver: boards.PowerCommand, On: "relay 3 on", Off: "relay 3 off"}, nil, `command "relay 3 on"`, "", false},
		{"command with cycle", boards.PowerSpec{Driver: boards.PowerCommand, On: "relay 3 on", Off: "relay 3 off", Cycle: "relay 3 cycle"}, nil, `command "relay 3 on"`, "", true},
		{"command without off", boards.PowerSpec{Driver: boards.PowerCommand, On: "relay 3 on"}, nil, "", "needs both on and off", false},
		{"command with blank on", boards.PowerSpec{Driver: boards.PowerCommand, On: "  ", Off: "x"}, nil, "", "needs both on and off", false},
		{"pdudaemon", boards.PowerSpec{Driver: boards.PowerPDUDaemon, URL: "http://localhost:16421/", PDU: "bench-pdu", Port: 3}, nil, "pdudaemon bench-pdu port 3", "", true},
		{"pdudaemon without pdu", boards.PowerSpec{Driver: boards.PowerPDUDaemon, URL: "http://localhost:16421", Port: 3}, nil, "", "needs pdu", false},
		{"pdudaemon without port", boards.PowerSpec{Driver: boards.PowerPDUDaemon, URL: "http://localhost:16421", PDU: "p"}, nil, "", "port (1 or more)", false},
		{"pdudaemon without url", boards.PowerSpec{Driver: boards.PowerPDUDaemon, PDU: "p", Port: 1}, nil, "", "needs a url", false},
		{"tasmota, relay defaults to 1", boards.PowerSpec{Driver: boards.PowerTasmota, URL: "http://198.18.5.7"}, nil, "tasmota http://198.18.5.7 relay 1", "", false},
		{"tasmota shows no credentials", boards.PowerSpec{Driver: boards.PowerTasmota, URL: "http://admin:s3cret@198.18.5.7", Relay: 2}, nil, "tasmota http://198.18.5.7 relay 2", "", false},
		{"tasmota negative relay", boards.PowerSpec{Driver: boards.PowerTasmota, URL: "http://198.18.5.7", Relay: -1}, nil, "", "relays count from 1", false},
		{"shelly, relay 0", boards.PowerSpec{Driver: boards.PowerShelly, URL: "http://admin:s3cret@198.18.5.8"}, nil, "shelly http://198.18.5.8 relay 0", "", false},
		{"shelly ftp url", boards.PowerSpec{Driver: boards.PowerShelly, URL: "ftp://198.18.5.8"}, nil, "", "not an http:// or https:// address", false},
		{"shelly url without host", boards.PowerSpec{Driver: boards.PowerShelly, URL: "http://"}, nil, "", "not an http://", false},
		{"unparsable url hides its password", boards.PowerSpec{Driver: boards.PowerShelly, URL: "http://admin:s3cret@198.18.5.8:port"}, nil, "", "…@198.18.5.8:port", false},
		{"negative delay", boards.PowerSpec{Driver: boards.PowerTasmota, URL: "http://198.18.5.7", Delay: -time.Second}, nil, "", "negative delay", false},
		{"qemu is the virtual bench's", boards.PowerSpec{Driver: boards.PowerQEMU}, nil, "", "virtual bench", false},
		{"no driver", boards.PowerSpec{}, nil, "", "no driver", false},
		{"unknown driver", boards.PowerSpec{Driver: "ipmi"}, nil, "", `unknown driver "ipmi"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := New("rb1", tt.spec, tt.op)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New: %v, want an error with %q", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), "rb1") {
					t.Errorf("error %q does not name the board", err)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("error %q shows the password", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if d.String() != tt.want {
				t.Errorf("String() = %q, want %q", d.String(), tt.want)
			}
			if _, ok := d.(Cycler); ok != tt.cycler {
				t.Errorf("Cycler: %v, want %v", ok, tt.cycler)
			}
		})
	}
}

// recorder is a Driver that notes what was asked of it, and when.
type recorder struct {
	calls []string
	at    []time.Time
	err   map[string]error
}

func (r *recorder) note(what string) error {
	r.calls, r.at = append(r.calls, what), append(r.at, time.Now())
	return r.err[what]
}
func (r *recorder) On(context.Context) error  { return r.note("on") }
func (r *recorder) Off(context.Context) error { return r.note("off") }
func (r *recorder) String() string            { return "recorder" }

type cyclingRecorder struct{ recorder }

func (r *cyclingRecorder) Cycle(context.Context) error { return r.note("cycle") }

func TestCycle(t *testing.T) {
	t.Run("off, the delay, on", func(t *testing.T) {
		r := &recorder{}
		if err := Cycle(context.Background(), r, 150*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if strings.Join(r.calls, ",") != "off,on" {
			t.Fatalf("calls %v, want off,on", r.calls)
		}
		if gap := r.at[1].Sub(r.at[0]); gap < 150*time.Millisecond {
			t.Errorf("off for %s, want at least the delay", gap)
		}
	})
	t.Run("default delay", func(t *testing.T) {
		r := &recorder{}
		if err := Cycle(context.Background(), r, 0); err != nil {
			t.Fatal(err)
		}
		if gap := r.at[1].Sub(r.at[0]); gap < DefaultCycleDelay {
			t.Errorf("off for %s, want %s", gap, DefaultCycleDelay)
		}
	})
	t.Run("a driver's own cycle", func(t *testing.T) {
		r := &cyclingRecorder{}
		if err := Cycle(context.Background(), r, time.Hour); err != nil {
			t.Fatal(err)
		}
		if strings.Join(r.calls, ",") != "cycle" {
			t.Fatalf("calls %v, want cycle", r.calls)
		}
	})
	t.Run("off fails: not switched on", func(t *testing.T) {
		boom := errors.New("relay stuck")
		r := &recorder{err: map[string]error{"off": boom}}
		if err := Cycle(context.Background(), r, time.Millisecond); !errors.Is(err, boom) {
			t.Fatalf("Cycle: %v, want %v", err, boom)
		}
		if len(r.calls) != 1 {
			t.Errorf("calls %v, want off only", r.calls)
		}
	})
	t.Run("cancelled in the pause", func(t *testing.T) {
		r := &recorder{}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := Cycle(ctx, r, time.Hour)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Cycle: %v, want the deadline", err)
		}
		if time.Since(start) > 5*time.Second || len(r.calls) != 1 {
			t.Errorf("took %s, calls %v: want a prompt return after off", time.Since(start), r.calls)
		}
	})
}

// TestDocEntries reads the inventory entries the package comment shows:
// each must pass the inventory's checks and make a driver.
func TestDocEntries(t *testing.T) {
	src, err := os.ReadFile("power.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, _, _ := strings.Cut(string(src), "\npackage power")
	var entries []string
	var cur []string
	for _, line := range append(strings.Split(doc, "\n"), "") {
		if l, ok := strings.CutPrefix(line, "//\t"); ok {
			if !strings.HasPrefix(l, "#") {
				cur = append(cur, "    "+l)
			}
			continue
		}
		if len(cur) > 0 {
			entries, cur = append(entries, strings.Join(cur, "\n")), nil
		}
	}
	if len(entries) != 5 {
		t.Fatalf("%d entries in the package comment, want one per driver: %q", len(entries), entries)
	}
	inv := "bench:\n  interface: bench0\n  address: 198.18.5.1/24\nboards:\n"
	for i, e := range entries {
		inv += fmt.Sprintf("  pc%d:\n    profile: pc-x86_64\n    mac: \"52:54:00:bb:05:%02x\"\n    address: 198.18.5.%d\n    console: /dev/ttyUSB%d\n%s\n", i, 0x20+i, 20+i, i, e)
	}
	parsed, err := boards.ParseInventory("bench.yaml", []byte(inv))
	if err != nil {
		t.Fatalf("the package comment's entries:\n%s\n%v", inv, err)
	}
	seen := map[boards.PowerDriver]bool{}
	for _, b := range parsed.Boards {
		if _, err := New(b.Name, b.Power, Terminal(nil, io.Discard)); err != nil {
			t.Errorf("%s: %v", b.Name, err)
		}
		seen[b.Power.Driver] = true
	}
	if len(seen) != 5 {
		t.Errorf("the package comment shows drivers %v, want all five", seen)
	}
}
