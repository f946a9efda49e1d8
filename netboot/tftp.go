package netboot

import (
	"io"
	"net"
	"strings"
	"time"

	"github.com/pin/tftp/v3"
)

// TFTP is a read-only TFTP server.
type TFTP struct {
	files  Files
	close  func() error // what Shutdown releases besides the server
	srv    *tftp.Server
	report Reporter
}

// NewTFTP serves the files under dir (see Dir). Writes are refused.
func NewTFTP(dir string, report Reporter) (*TFTP, error) {
	d, err := OpenDir(dir)
	if err != nil {
		return nil, err
	}
	t := NewTFTPFrom(d, report)
	t.close = d.Close
	return t, nil
}

// NewTFTPFrom serves what files holds (a Booter's boots). Writes are refused.
func NewTFTPFrom(files Files, report Reporter) *TFTP {
	if report == nil {
		report = func(Event) {}
	}
	t := &TFTP{files: files, report: report, close: func() error { return nil }}
	t.srv = tftp.NewServer(t.read, nil)
	// Boot ROMs are slow and simple: retransmit after a fixed second rather
	// than the library's default random 0–1 s backoff on top of the timeout.
	t.srv.SetTimeout(time.Second)
	t.srv.SetRetries(8)
	t.srv.SetBackoff(func(int) time.Duration { return 0 })
	return t
}

// Serve answers requests on conn until Shutdown.
func (t *TFTP) Serve(conn net.PacketConn) error {
	return t.srv.Serve(conn)
}

// Shutdown stops the server and waits for transfers in flight.
func (t *TFTP) Shutdown() {
	t.srv.Shutdown()
	t.close()
}

func (t *TFTP) read(name string, rf io.ReaderFrom) error {
	start := time.Now()
	ev := Event{Kind: "tftp-done", File: name}
	f, size, err := t.files.Open(cleanName(name))
	if err != nil {
		ev.Kind, ev.Err, ev.Time = "tftp-error", err, time.Now()
		t.report(ev)
		return err
	}
	defer f.Close()
	// tsize: iPXE and U-Boot preallocate and show progress with it, and
	// iPXE is much slower without it.
	if ot, ok := rf.(tftp.OutgoingTransfer); ok {
		ot.SetSize(size)
	}
	n, err := rf.ReadFrom(f)
	ev.Bytes, ev.Duration, ev.Time = n, time.Since(start), time.Now()
	if err != nil {
		ev.Kind, ev.Err = "tftp-error", err
	}
	t.report(ev)
	return err
}

// cleanName is a client's file name as Files takes it. Clients send names
// with a leading slash (U-Boot, iPXE with absolute URLs) or DOS separators
// (old PXE ROMs); both mean the same file.
func cleanName(name string) string {
	return strings.TrimLeft(strings.ReplaceAll(name, `\`, "/"), "/")
}
