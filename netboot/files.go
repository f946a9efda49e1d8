package netboot

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

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
		return nil, nil, errNotFound
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, lookupErr(err)
	}
	if st, err = f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, errNotFound
	}
	return f, st, nil
}

// lookupErr is what a client is told about a name it cannot have: never the
// host's error, which carries the path.
func lookupErr(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return errNotFound
	}
	return errAccess
}
