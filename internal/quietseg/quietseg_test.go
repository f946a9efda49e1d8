package quietseg

import (
	"net"
	"os"
	"testing"
	"time"
)

func TestQuietAgo(t *testing.T) {
	mac := net.HardwareAddr{0x52, 0x54, 0, 0xbb, 5, 0x20}
	other := net.HardwareAddr{0x52, 0x54, 0, 0xbb, 5, 0x21}
	t0 := time.Date(2026, 12, 3, 16, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		iface  string
		mac    net.HardwareAddr
		now    time.Time
		heard  bool // a rival was heard after the quiet verdict
		want   time.Duration
		wantOK bool
	}{
		{"just now", "bench0", mac, t0.Add(3 * time.Second), false, 3 * time.Second, true},
		{"at the limit", "bench0", mac, t0.Add(Fresh), false, Fresh, true},
		{"too long ago", "bench0", mac, t0.Add(Fresh + time.Second), false, 0, false},
		{"clock went back", "bench0", mac, t0.Add(-time.Minute), false, 0, false},
		{"another interface", "bench1", mac, t0.Add(time.Second), false, 0, false},
		{"the tap made again", "bench0", other, t0.Add(time.Second), false, 0, false},
		{"a rival since", "bench0", mac, t0.Add(time.Second), true, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := Memory{Dir: t.TempDir()}
			if err := m.Quiet("bench0", mac, t0); err != nil {
				t.Fatal(err)
			}
			if tc.heard {
				if err := m.Heard("bench0", mac); err != nil {
					t.Fatal(err)
				}
			}
			ago, ok := m.QuietAgo(tc.iface, tc.mac, tc.now)
			if ago != tc.want || ok != tc.wantOK {
				t.Errorf("QuietAgo = %v, %v; want %v, %v", ago, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestNeverHeard(t *testing.T) {
	m := Memory{Dir: t.TempDir() + "/not-made-yet"}
	if _, ok := m.QuietAgo("bench0", net.HardwareAddr{1, 2, 3, 4, 5, 6}, time.Now()); ok {
		t.Error("a segment never probed reads as quiet")
	}
	if err := m.Heard("bench0", net.HardwareAddr{1, 2, 3, 4, 5, 6}); err != nil {
		t.Errorf("forgetting what was never remembered: %v", err)
	}
}

func TestUnreadableVerdictIsNone(t *testing.T) {
	m := Memory{Dir: t.TempDir()}
	mac := net.HardwareAddr{1, 2, 3, 4, 5, 6}
	if err := os.WriteFile(m.path("bench0", mac), []byte("yesterday\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.QuietAgo("bench0", mac, time.Now()); ok {
		t.Error("a verdict that does not parse reads as quiet")
	}
}

func TestPathStaysInDir(t *testing.T) {
	m := Memory{Dir: "/cache/quiet"}
	if p := m.path("../../etc/x", net.HardwareAddr{1, 2, 3, 4, 5, 6}); p != "/cache/quiet/.._.._etc_x-010203040506" {
		t.Errorf("path = %s", p)
	}
}

func TestOldVerdictsPruned(t *testing.T) {
	m := Memory{Dir: t.TempDir()}
	old := net.HardwareAddr{1, 2, 3, 4, 5, 6}
	if err := m.Quiet("bench0", old, time.Now()); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-Fresh - time.Minute)
	if err := os.Chtimes(m.path("bench0", old), long, long); err != nil {
		t.Fatal(err)
	}
	if err := m.Quiet("bench1", net.HardwareAddr{1, 2, 3, 4, 5, 7}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m.path("bench0", old)); err == nil {
		t.Error("a verdict older than Fresh was kept")
	}
	if _, err := os.Stat(m.path("bench1", net.HardwareAddr{1, 2, 3, 4, 5, 7})); err != nil {
		t.Errorf("the new verdict: %v", err)
	}
}

// TestOnlyOwnVerdictsTrusted: a verdict another user wrote, or one in a
// directory others may write, does not let boards be switched on early.
func TestOnlyOwnVerdictsTrusted(t *testing.T) {
	mac := net.HardwareAddr{1, 2, 3, 4, 5, 6}
	tests := []struct {
		name  string
		spoil func(m Memory) error
	}{
		{"another user's file", func(m Memory) error {
			if os.Geteuid() != 0 {
				t.Skip("chown needs root")
			}
			return os.Chown(m.path("bench0", mac), 65534, 65534)
		}},
		{"a directory others may write", func(m Memory) error { return os.Chmod(m.Dir, 0o777) }},
		{"a file others may write", func(m Memory) error { return os.Chmod(m.path("bench0", mac), 0o666) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := Memory{Dir: t.TempDir() + "/quiet"}
			if err := m.Quiet("bench0", mac, time.Now()); err != nil {
				t.Fatal(err)
			}
			if _, ok := m.QuietAgo("bench0", mac, time.Now()); !ok {
				t.Fatal("its own fresh verdict is not trusted")
			}
			if err := tc.spoil(m); err != nil {
				t.Fatal(err)
			}
			if _, ok := m.QuietAgo("bench0", mac, time.Now()); ok {
				t.Error("trusted")
			}
		})
	}
}
