package vbench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// A board's flash is what its firmware keeps across power cycles: RouterBOOT's
// settings, CFE's NVRAM. A virtual board keeps it as a JSON file in a
// directory of its own (Board.Flash), written whole (a new file renamed
// over the old), so a board switched off mid-write keeps the old settings,
// as a real flash sector write does.

// loadFlash reads name from dir into v; a missing file leaves v as is
// (a board fresh from the factory).
func loadFlash(dir, name string, v any) error {
	if dir == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("flash %s: %w", filepath.Join(dir, name), err)
	}
	return nil
}

// saveFlash writes v as name in dir.
func saveFlash(dir, name string, v any) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, name+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), filepath.Join(dir, name))
}
