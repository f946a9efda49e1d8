package fwclock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
)

// firmware is a console whose other end answers each key or line typed
// with the text answer gives for it, at once.
type firmware struct {
	out    bytes.Buffer
	typed  []string
	answer func(typed string) string
}

func (f *firmware) Expect(ctx context.Context, from int, text string) (int, error) {
	if i := bytes.Index(f.out.Bytes()[from:], []byte(text)); i >= 0 {
		return from + i + len(text), nil
	}
	return from, fmt.Errorf("%q not seen", text)
}

func (f *firmware) TranscriptFrom(off int) []byte { return f.out.Bytes()[off:] }

func (f *firmware) Write(p []byte) (int, error) {
	f.typed = append(f.typed, string(p))
	f.out.WriteString(f.answer(string(p)))
	return len(p), nil
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// routerBOOT answers as RouterBOOT 2.20's menu does, with main as its
// main menu: each key echoed with its item, then the item's submenu or
// the main menu again.
func routerBOOT(t *testing.T, main string) *firmware {
	freq, boot := fixture(t, "routerboot-2.20-frequency.txt"), fixture(t, "routerboot-2.20-bootdevice.txt")
	sub := ""
	f := &firmware{}
	f.answer = func(k string) string {
		switch {
		case k == setupKey:
			return "\r\n" + main
		case sub != "":
			sub = ""
			return k + "\r\n\r\n" + main
		case k == "f":
			sub = k
			return "f - cpu frequency\r\n\r\n" + freq
		case k == "o":
			sub = k
			return "o - boot device\r\n\r\n" + boot
		case k == "x":
			return "x - exit setup\r\n\r\ntrying bootp protocol..."
		}
		return k + "\r\n"
	}
	f.out.WriteString("RouterBOOT booter 2.20\r\n\r\nRB450G\r\n\r\nCPU frequency: 680 MHz\r\n  Memory size: 256 MB\r\n\r\nPress any key within 2 seconds to enter setup")
	return f
}

func TestRouterBOOTSetsClockAndOneEthernetBoot(t *testing.T) {
	tests := []struct {
		mhz   boards.MHz
		typed string
	}{
		{800, "\x7f f g o 1 x"},
		{200, "\x7f f a o 1 x"},
	}
	for _, tt := range tests {
		fw := routerBOOT(t, fixture(t, "routerboot-2.20-main.txt"))
		var said []string
		s := For(boards.ClockRouterBOOTMenu, fw, func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }, time.Second)
		if _, err := s.SetClock(context.Background(), 0, tt.mhz); err != nil {
			t.Fatalf("%s: %v", tt.mhz, err)
		}
		if got := strings.Join(fw.typed, " "); got != tt.typed {
			t.Errorf("%s: typed %q, want %q", tt.mhz, got, tt.typed)
		}
		if !strings.Contains(strings.Join(said, "\n"), "o - boot device: 1 - boot Ethernet once, then NAND") {
			t.Errorf("%s: progress %q", tt.mhz, said)
		}
	}
}

func TestRouterBOOTRefuses(t *testing.T) {
	tests := []struct {
		name string
		main string
		mhz  boards.MHz
		want string
	}{
		{"reworded", "routerboot-reworded-main.txt", 800,
			`RouterBOOT's setup menu has no item "cpu frequency"; it printed: RouterBOOT-3.41 | What do you want to configure? | d - boot delay | k - boot key | s - serial console | o - boot device | c - cpu clock | r - reset booter configuration | x - exit setup`},
		{"clock not offered", "routerboot-2.20-main.txt", 900,
			`RouterBOOT's cpu frequency menu has no setting 900 MHz (it offers 200, 300, 400, 500, 600, 680, 800 MHz); it printed: Select CPU frequency: | a - 200MHz | b - 300MHz | c - 400MHz | d - 500MHz | e - 600MHz | * f - 680MHz | g - 800MHz`},
	}
	for _, tt := range tests {
		fw := routerBOOT(t, fixture(t, tt.main))
		_, err := For(boards.ClockRouterBOOTMenu, fw, func(string, ...any) {}, time.Second).SetClock(context.Background(), 0, tt.mhz)
		var r *Refusal
		if !errors.As(err, &r) || err.Error() != tt.want {
			t.Errorf("%s: got %v\nwant %s", tt.name, err, tt.want)
		}
		if strings.Contains(strings.Join(fw.typed, ""), "x") {
			t.Errorf("%s: typed %q: a refused menu must not be left by its exit, which would boot on", tt.name, fw.typed)
		}
	}
}

// cfe answers as CFE's prompt does, with status for nvram commit.
func cfe(commitStatus int) *firmware {
	f := &firmware{}
	f.answer = func(k string) string {
		switch {
		case k == ctrlC:
			return "Automatic startup canceled via Ctrl-C\r\nCFE> "
		case strings.HasPrefix(k, "nvram set clkfreq="):
			return strings.TrimSpace(k) + "\r\n*** command status = 0\r\nCFE> "
		case k == "nvram commit\r":
			return fmt.Sprintf("nvram commit\r\n*** command status = %d\r\nCFE> ", commitStatus)
		case k == "reboot\r":
			return "reboot\r\n\r\nCFE version 1.0.37 for BCM947XX (32bit,SP,LE)\r\n"
		}
		return ""
	}
	f.out.WriteString("\r\nCFE version 1.0.37 for BCM947XX (32bit,SP,LE)\r\nCPU type 0x29008: 216MHz\r\n")
	return f
}

func TestCFESetsNVRAMClock(t *testing.T) {
	fw := cfe(0)
	next, err := For(boards.ClockCFENVRAM, fw, func(string, ...any) {}, time.Second).SetClock(context.Background(), 0, 200)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(fw.typed, "|"); got != "\x03|nvram set clkfreq=200\r|nvram commit\r|reboot\r" {
		t.Errorf("typed %q", got)
	}
	// The profile's steps start at the new banner.
	if rest := string(fw.TranscriptFrom(next)); !strings.Contains(rest, "CFE version") || strings.Contains(rest, "216MHz") {
		t.Errorf("after %d: %q", next, rest)
	}
	_, err = For(boards.ClockCFENVRAM, cfe(-1), func(string, ...any) {}, time.Second).SetClock(context.Background(), 0, 200)
	if err == nil || !strings.Contains(err.Error(), `CFE refused "nvram commit" (command status -1)`) {
		t.Errorf("a failed commit: %v", err)
	}
}

func TestSilentFirmware(t *testing.T) {
	fw := &firmware{answer: func(string) string { return "" }}
	_, err := For(boards.ClockRouterBOOTMenu, fw, func(string, ...any) {}, time.Millisecond).SetClock(context.Background(), 0, 800)
	if !errors.Is(err, ErrNoAnswer) {
		t.Errorf("got %v, want ErrNoAnswer", err)
	}
}
