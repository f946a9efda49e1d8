package netboot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Files is where the TFTP and HTTP servers get what a board fetches, by
// name: the bytes and their size (pixiecore's ReadBootFile). The size goes
// out as TFTP tsize and HTTP Content-Length; iPXE is much slower without it.
// A Booter serves generated scripts from memory and kernels and images from
// the cache; Dir serves a directory.
type Files interface {
	// Open returns the named file and its size. name is clean: no leading
	// slash, forward slashes only. The error's text goes to the client, so
	// it must never carry a host path: ErrNotFound or ErrAccess.
	Open(name string) (io.ReadCloser, int64, error)
}

// Errors sent to clients. pin/tftp puts the handler's error text on the
// wire, so they must never carry a host path.
var (
	ErrNotFound = errors.New("file not found")
	ErrAccess   = errors.New("access violation")
)

// Dir serves the regular files under a directory, read-only, confined with
// os.OpenRoot, which refuses "../x", absolute escapes and symlinks that
// leave it.
type Dir struct{ root *os.Root }

// OpenDir serves the files under dir until Close.
func OpenDir(dir string) (*Dir, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open served directory: %w", err)
	}
	return &Dir{root: root}, nil
}

// Open implements Files.
func (d *Dir) Open(name string) (io.ReadCloser, int64, error) {
	if name == "" {
		return nil, 0, ErrNotFound
	}
	f, err := d.root.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, ErrNotFound
		}
		return nil, 0, ErrAccess
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, ErrNotFound
	}
	return f, st.Size(), nil
}

// Close stops serving the directory.
func (d *Dir) Close() error { return d.root.Close() }
