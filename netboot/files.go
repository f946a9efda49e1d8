package netboot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"syscall"
)

// Files is where the TFTP and HTTP servers get what a board fetches, by
// name: the bytes and their size (pixiecore's ReadBootFile). The size goes
// out as TFTP tsize and HTTP Content-Length; iPXE is much slower without it.
// A Booter serves generated scripts from memory and kernels and images from
// the cache; Dir serves a directory.
type Files interface {
	// Open returns the named file and its size. name is clean: no leading
	// slash, forward slashes only. The error's text goes to the client, so
	// it must never carry a host path: ErrNotFound or ErrAccess. A file
	// that is also an io.Seeker can be sent in TFTP's netascii mode, whose
	// size is counted before the transfer.
	Open(name string) (io.ReadCloser, int64, error)
}

// Errors sent to clients. pin/tftp puts the handler's error text on the
// wire, so they must never carry a host path.
var (
	ErrNotFound = errors.New("file not found")
	ErrAccess   = errors.New("access violation")
)

// FilesFor is Files that answers by who asks. A Raspberry Pi's boot ROM
// asks for <serial>/start4.elf first and, when that is not found, for
// every file without the folder from then on (TFTP_PREFIX in Raspberry
// Pi's bootloader configuration): such a name is the asking board's file,
// known by its address. The TFTP server asks OpenFor when Files has it.
type FilesFor interface {
	OpenFor(client net.IP, name string) (io.ReadCloser, int64, error)
}

// Memory serves data as a file: what a Files implementation returns for
// bytes it generated.
func Memory(data []byte) (io.ReadCloser, int64, error) {
	return memFile{bytes.NewReader(data)}, int64(len(data)), nil
}

// memFile keeps the reader's Seek, which NopCloser would hide.
type memFile struct{ *bytes.Reader }

func (memFile) Close() error { return nil }

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
	f, st, err := openRegular(d.root, name)
	if err != nil {
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// Close stops serving the directory.
func (d *Dir) Close() error { return d.root.Close() }

// openRegular opens name under root for reading if it is a regular file.
// Anything else in the served tree is "not found": opening a FIFO blocks
// until a writer comes (a transfer that never ends, and a Shutdown that
// waits for it), and opening a device can act on it (a serial port drops
// DTR). The type is checked before the open, and again on the open file with
// O_NONBLOCK, which cannot block, in case the name was replaced in between.
func openRegular(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	st, err := root.Stat(name)
	if err != nil {
		return nil, nil, lookupErr(err)
	}
	if !st.Mode().IsRegular() {
		return nil, nil, ErrNotFound
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, lookupErr(err)
	}
	if st, err = f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, ErrNotFound
	}
	return f, st, nil
}

// lookupErr is what a client is told about a name it cannot have: never the
// host's error, which carries the path.
func lookupErr(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return ErrNotFound
	}
	return ErrAccess
}
