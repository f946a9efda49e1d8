package netboot

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/pin/tftp/v3"
)

// TFTP is a read-only TFTP server confined to one directory.
type TFTP struct {
	root   *os.Root
	srv    *tftp.Server
	report Reporter
}

// Errors sent to clients. pin/tftp puts the handler's error text on the
// wire, so they must never carry a host path.
var (
	errNotFound = errors.New("file not found")
	errAccess   = errors.New("access violation")
)

// NewTFTP serves the files under dir. Reads are confined with os.OpenRoot,
// which refuses "../x", absolute escapes and symlinks that leave dir. Writes
// are refused.
func NewTFTP(dir string, report Reporter) (*TFTP, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open TFTP root: %w", err)
	}
	if report == nil {
		report = func(Event) {}
	}
	t := &TFTP{root: root, report: report}
	t.srv = tftp.NewServer(t.read, nil)
	// Boot ROMs are slow and simple: retransmit after a fixed second rather
	// than the library's default random 0–1 s backoff on top of the timeout.
	t.srv.SetTimeout(time.Second)
	t.srv.SetRetries(8)
	t.srv.SetBackoff(func(int) time.Duration { return 0 })
	return t, nil
}

// Serve answers requests on conn until Shutdown.
func (t *TFTP) Serve(conn net.PacketConn) error {
	return t.srv.Serve(conn)
}

// Shutdown stops the server and waits for transfers in flight.
func (t *TFTP) Shutdown() {
	t.srv.Shutdown()
	t.root.Close()
}

func (t *TFTP) read(name string, rf io.ReaderFrom) error {
	start := time.Now()
	ev := Event{Kind: "tftp-done", File: name}
	f, err := t.open(name)
	if err != nil {
		ev.Kind, ev.Err, ev.Time = "tftp-error", err, time.Now()
		t.report(ev)
		return err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil {
		// tsize: iPXE and U-Boot preallocate and show progress with it,
		// and iPXE is much slower without it.
		if ot, ok := rf.(tftp.OutgoingTransfer); ok {
			ot.SetSize(st.Size())
		}
	}
	n, err := rf.ReadFrom(f)
	ev.Bytes, ev.Duration, ev.Time = n, time.Since(start), time.Now()
	if err != nil {
		ev.Kind, ev.Err = "tftp-error", err
	}
	t.report(ev)
	return err
}

// open resolves a client's file name inside the root. Clients send names
// with a leading slash (U-Boot, iPXE with absolute URLs) or DOS separators
// (old PXE ROMs); both mean the same file.
func (t *TFTP) open(name string) (*os.File, error) {
	clean := strings.TrimLeft(strings.ReplaceAll(name, `\`, "/"), "/")
	if clean == "" {
		return nil, errNotFound
	}
	f, _, err := openRegular(t.root, clean)
	if err != nil {
		return nil, err
	}
	return f, nil
}
