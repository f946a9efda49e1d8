package boards

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bigInventory writes an inventory of n boards and returns its path.
func bigInventory(t testing.TB, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("bench: {interface: enp3s0, address: 198.18.0.1/15}\nboards:\n")
	for i := 0; i < n; i++ {
		k := i + 2
		fmt.Fprintf(&b, "  b%d: {profile: pc-x86_64, mac: \"52:54:%02x:%02x:%02x:%02x\", address: 198.%d.%d.%d, console: /dev/ttyUSB%d, power: {driver: manual}}\n",
			i, byte(k>>24), byte(k>>16), byte(k>>8), byte(k), 18+k>>16, byte(k>>8), byte(k), i)
	}
	path := filepath.Join(t.TempDir(), "bench.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestProfilesParsedOnce: a board lookup does not parse the embedded
// profiles again (it did, 1.7 ms a lookup: 34 s for 20,000 boards).
func TestProfilesParsedOnce(t *testing.T) {
	if _, err := Get("rb450g"); err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(100, func() { Get("rb450g") }); allocs > 20 {
		t.Errorf("Get allocates %.0f times a lookup: it parses the profiles again", allocs)
	}
	path := bigInventory(t, 2000)
	start := time.Now()
	inv, err := LoadInventory(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Boards) != 2000 {
		t.Fatalf("%d boards, want 2000", len(inv.Boards))
	}
	t.Logf("2000 boards loaded in %v", time.Since(start))
}

// TestLoadInventoryInterrupted: Ctrl-C while a large inventory loads is
// honoured, not waited out (20,000 boards took minutes, deaf to it).
func TestLoadInventoryInterrupted(t *testing.T) {
	path := bigInventory(t, 20000)
	for _, after := range []time.Duration{0, 50 * time.Millisecond} {
		ctx, cancel := context.WithCancel(context.Background())
		pressed := time.Now().Add(after)
		time.AfterFunc(after, cancel)
		inv, err := LoadInventory(ctx, path)
		took := time.Since(pressed)
		if !errors.Is(err, context.Canceled) || inv != nil {
			t.Errorf("Ctrl-C %v into loading: %v, %v; want it interrupted", after, err, inv != nil)
		}
		if took > 2*time.Second {
			t.Errorf("Ctrl-C %v into loading: returned %v after it", after, took.Round(time.Millisecond))
		}
		t.Logf("Ctrl-C %v into loading: returned %v after it", after, took.Round(time.Millisecond))
	}
	start := time.Now()
	if inv, err := LoadInventory(context.Background(), path); err != nil || len(inv.Boards) != 20000 {
		t.Fatalf("load: %v", err)
	}
	t.Logf("20,000 boards loaded in %v", time.Since(start).Round(time.Millisecond))
}

// TestInventoryErrorsCapQuotes: a huge field is quoted in an error only in
// part: 200 bytes and "…".
func TestInventoryErrorsCapQuotes(t *testing.T) {
	huge := strings.Repeat("x", 8<<20)
	tests := []struct{ name, board string }{
		{"mac", `  pc1: {profile: pc-x86_64, mac: "` + huge + `", console: /dev/ttyUSB0, power: {driver: manual}}`},
		{"profile", `  pc1: {profile: "` + huge + `", mac: "52:54:00:bb:05:20", console: /dev/ttyUSB0, power: {driver: manual}}`},
		{"console", `  pc1: {profile: pc-x86_64, mac: "52:54:00:bb:05:20", console: "` + huge + `", power: {driver: manual}}`},
		{"board name", `  ? "b ` + huge + `"` + "\n" + `  : {profile: pc-x86_64, mac: "52:54:00:bb:05:20", console: /dev/ttyUSB0, power: {driver: manual}}`},
		{"field name", "  pc1:\n    profile: pc-x86_64\n    ? \"" + huge + "\"\n    : 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := "bench: {interface: enp3s0, address: 198.18.5.1/24}\nboards:\n" + tt.board + "\n"
			_, err := ParseInventory("bench.yaml", []byte(text))
			if err == nil {
				t.Fatal("a huge field accepted")
			}
			msg := err.Error()
			if len(msg) > 1000 || !strings.Contains(msg, strings.Repeat("x", 190)) || !strings.Contains(msg, "…") {
				t.Errorf("error of %d bytes (want under 1000, the field cut at 200 bytes and …): %.300q", len(msg), msg)
			}
		})
	}
}
