package serialctl

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

// TestExpect: text that ends no line (a prompt) is found as it arrives;
// each Expect looks past the last match; a prompt that never comes, or a
// console that ends, is ErrNotSeen.
func TestExpect(t *testing.T) {
	pr, pw := io.Pipe()
	c := New(pr)
	defer c.Close()
	ctx := context.Background()
	go func() {
		io.WriteString(pw, "U-Boot 2023.01\r\nHit any key to stop autoboot:  2 ")
		time.Sleep(50 * time.Millisecond)
		io.WriteString(pw, "\x08\x08\x08 0 \r\n=> ")
		time.Sleep(50 * time.Millisecond)
		io.WriteString(pw, "dhcp\r\nBOOTP broadcast 1\r\n=> ")
	}()
	off, err := c.Expect(ctx, 0, "Hit any key")
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.Expect(ctx, off, "=> ")
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Expect(ctx, first, "=> ")
	if err != nil || second <= first {
		t.Fatalf("second prompt at %d (first %d): %v", second, first, err)
	}
	if got := string(c.TranscriptFrom(first)); got != "dhcp\r\nBOOTP broadcast 1\r\n=> " {
		t.Errorf("between the prompts: %q", got)
	}

	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := c.Expect(short, second, "=> "); !errors.Is(err, ErrNotSeen) {
		t.Errorf("a prompt that never came: %v", err)
	}
	pw.Close()
	if _, err := c.Expect(ctx, second, "Starting kernel"); !errors.Is(err, ErrNotSeen) {
		t.Errorf("after the console ended: %v", err)
	}
}
