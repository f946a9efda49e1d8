// Package menuboard is a RouterBOARD for tests of RouterBOOT's setup menu:
// switched on, its RouterBOOT prints the banner and waits for a key; at
// DEL it prints the main menu the test gave it, worded as the firmware
// version under test words it.
package menuboard

import (
	"context"
	"io"
	"sync"
)

// Banner is what RouterBOOT 3.41 prints on an RB450G as it starts.
const Banner = "RouterBOOT booter 3.41\r\n\r\nRB450G\r\n\r\nCPU frequency: 680 MHz\r\n  Memory size: 256 MB\r\n\r\nPress any key within 2 seconds to enter setup"

// Board is the board; Menu is its main menu. It counts how often it was
// switched on and off.
type Board struct {
	Menu string

	mu       sync.Mutex
	w        *io.PipeWriter
	ons, off int
}

func (b *Board) String() string { return "menu board" }

// Console is the board's console for one boot.
func (b *Board) Console(ctx context.Context) (io.ReadWriteCloser, error) {
	r, w := io.Pipe()
	b.mu.Lock()
	b.w = w
	b.mu.Unlock()
	return struct {
		io.ReadCloser
		io.Writer
	}{r, keys{b}}, nil
}

// keys is what the bench types to the board: DEL opens the menu.
type keys struct{ b *Board }

func (k keys) Write(p []byte) (int, error) {
	if string(p) == "\x7f" {
		go io.WriteString(k.b.w, "\r\n"+k.b.Menu)
	}
	return len(p), nil
}

// On starts RouterBOOT.
func (b *Board) On(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ons++
	go io.WriteString(b.w, Banner)
	return nil
}

// Off ends the console.
func (b *Board) Off(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.off++
	b.w.Close()
	return nil
}

// Switched says how often the board was switched on and off.
func (b *Board) Switched() (ons, offs int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ons, b.off
}
