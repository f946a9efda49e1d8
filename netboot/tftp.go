package netboot

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pin/tftp/v3"
)

// TFTP is a read-only TFTP server.
type TFTP struct {
	files  Files
	close  func() error // what Shutdown releases besides the server
	srv    *tftp.Server
	report Reporter
	// maxTransfers and maxPerClient cap the transfers in flight, in all
	// and from one client address: each holds a socket, a file and a
	// goroutine until its client acknowledges or goes silent.
	maxTransfers, maxPerClient int
	// floorRate (bytes a second) and grace bound how long a transfer may
	// take: grace plus its size at the floor rate (see slowestBoard).
	floorRate int64
	grace     time.Duration

	mu      sync.Mutex
	active  map[string]int // transfers in flight by client address
	closing chan struct{}  // closed by Shutdown
	stop    sync.Once
}

// More errors sent to clients (see ErrNotFound).
var (
	errBusy     = errors.New("too many transfers, try again later")
	errShutdown = errors.New("server shutting down")
	errSlow     = errors.New("transfer too slow, cut")
)

// A transfer's time is bounded by its size, so that clients ACKing just
// within the retry timeout cannot hold every slot for good (8 addresses ×
// 8 transfers ACKing every 0.9 s held all 64 for half an hour on a 1 MB
// file). The floor is 8 KiB/s: sixteen 512-byte blocks a second, one
// ACK every 62 ms. The slowest boot ROMs bootbench serves (CFE on the
// WRT54G's 200 MHz BCM4712, RouterBOOT on the RB450's 300 MHz AR7130) ACK
// a block after a LAN round trip and their own handling of it, a few
// milliseconds: an order of magnitude inside the floor (an estimate from
// how they work, not a measurement on the boards). A lost block costs one
// second of retry, so 5 % loss at 5 ms a block still leaves some 9 KiB/s.
// The grace covers the option exchange and a first block's eight retries.
const (
	slowestBoard = 8 << 10 // bytes a second
	tftpGrace    = 15 * time.Second
)

// maxWindow is the largest windowsize granted. U-Boot's documentation
// suggests 8 to 16; the library also caps a window at 1 MiB of blocks.
const maxWindow = 64

// readAhead is how much of a served file is read at once: a 512-byte block
// read straight from the file costs a system call per block.
const readAhead = 64 << 10

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
	t := &TFTP{files: files, report: report, close: func() error { return nil },
		maxTransfers: 64, maxPerClient: 8, floorRate: slowestBoard, grace: tftpGrace,
		active: map[string]int{}, closing: make(chan struct{})}
	t.srv = tftp.NewServer(t.read, t.refuseWrite)
	// Boot ROMs are slow and simple: retransmit after a fixed second rather
	// than the library's default random 0–1 s backoff on top of the timeout.
	t.srv.SetTimeout(time.Second)
	t.srv.SetRetries(8)
	t.srv.SetBackoff(func(int) time.Duration { return 0 })
	// RFC 7440 windowsize, for the clients that ask (U-Boot's
	// tftpwindowsize): a window of blocks per ACK instead of one.
	t.srv.SetWindowSize(maxWindow)
	return t
}

// Serve answers requests on conn until Shutdown.
func (t *TFTP) Serve(conn net.PacketConn) error {
	return t.srv.Serve(conn)
}

// Shutdown stops the server. Transfers in flight end at their next block,
// with an error to the client; one whose client went silent ends at its
// next retry (within the 1 s timeout).
func (t *TFTP) Shutdown() {
	t.stop.Do(func() { close(t.closing) })
	t.srv.Shutdown()
	t.close()
}

func (t *TFTP) read(name string, rf io.ReaderFrom) error {
	start := time.Now()
	n, err := t.send(name, rf)
	ev := Event{Kind: "tftp-done", File: shown(resolve(name)), IP: clientIP(rf), Options: negotiated(rf),
		Bytes: n, Duration: time.Since(start), Time: time.Now()}
	if err != nil {
		ev.Kind, ev.Err = "tftp-error", shownErr(err)
	}
	t.report(ev)
	for _, sendable := range []error{ErrNotFound, ErrAccess, errBusy, errMode, errShutdown, errSlow} {
		if errors.Is(err, sendable) {
			return sendable
		}
	}
	if err != nil {
		return ErrAccess
	}
	return nil
}

// ErrReadOnly is what a client asking to write is told, and reported.
var ErrReadOnly = errors.New("write refused: this server is read-only")

// refuseWrite refuses a write request and reports it, as every transfer
// is reported: a board or a person trying to upload shows in the log.
func (t *TFTP) refuseWrite(name string, wt io.WriterTo) error {
	ev := Event{Kind: "tftp-error", File: shown(name), Time: time.Now(), Err: ErrReadOnly}
	if it, ok := wt.(tftp.IncomingTransfer); ok {
		a := it.RemoteAddr()
		ev.IP = a.IP
	}
	t.report(ev)
	return ErrReadOnly
}

// send runs one transfer within the caps. Its error is for the event; the
// client is told only one of the generic errors.
func (t *TFTP) send(name string, rf io.ReaderFrom) (int64, error) {
	client := clientIP(rf).String()
	if !t.admit(client) {
		return 0, errBusy
	}
	defer t.release(client)
	mode, known := requestMode(rf)
	if known && mode != "octet" && mode != "netascii" {
		return 0, errMode
	}
	f, size, err := t.open(name, clientIP(rf))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	// tsize (sent only when the client asked for it): iPXE and U-Boot
	// preallocate and show progress with it, and iPXE is much slower
	// without it.
	if err := setSize(rf, f, size, mode); err != nil {
		return 0, err
	}
	sf := &servedFile{r: bufio.NewReaderSize(f, readAhead), closing: t.closing, size: size, floor: t.floorRate,
		start: time.Now(), deadline: time.Now().Add(t.limit(size))}
	n, err := rf.ReadFrom(sf)
	if sf.err != nil {
		err = sf.err
	}
	return n, err
}

// limit is how long a transfer of size bytes may take.
func (t *TFTP) limit(size int64) time.Duration {
	return t.grace + time.Duration(size)*time.Second/time.Duration(t.floorRate)
}

// servedFile is a file as a transfer reads it, a block at a time as the
// client acknowledges. It ends the transfer once the server is shutting
// down or the transfer's time is up. pin/tftp sends the reader's error text
// to the client, and a host read error carries the path: the client gets
// ErrAccess, the event the real error.
type servedFile struct {
	r               io.Reader
	closing         <-chan struct{}
	size, floor     int64
	start, deadline time.Time
	sent            int64
	err             error
}

func (s *servedFile) Read(p []byte) (int, error) {
	select {
	case <-s.closing:
		return 0, errShutdown
	default:
	}
	if time.Now().After(s.deadline) {
		s.err = fmt.Errorf("%w after %s: %d of %d bytes sent, below %d KiB/s", errSlow,
			time.Since(s.start).Round(time.Second), s.sent, s.size, s.floor>>10)
		return 0, errSlow
	}
	n, err := s.r.Read(p)
	s.sent += int64(n)
	if err != nil && err != io.EOF {
		s.err = fmt.Errorf("read served file: %w", err)
		return n, ErrAccess
	}
	return n, err
}

// setSize tells the transfer how many bytes it will send: size, or in
// netascii mode what size becomes once line ends are converted, counted on
// a file that can seek back. Unless it is told, the library finds the size
// by seeking, which it cannot do once it has wrapped a netascii transfer.
func setSize(rf io.ReaderFrom, f io.Reader, size int64, mode string) error {
	ot, ok := rf.(tftp.OutgoingTransfer)
	if !ok {
		return nil
	}
	if mode == "netascii" {
		rs, ok := f.(io.ReadSeeker)
		if !ok {
			return fmt.Errorf("netascii needs a file that can seek: %w", errMode)
		}
		var err error
		if size, err = netasciiSize(rs); err != nil {
			return err
		}
	}
	ot.SetSize(size)
	return nil
}

// resolve is the file a client's name means, relative to the root. Clients
// send names with a leading slash (U-Boot, iPXE with absolute URLs) or DOS
// separators (old PXE ROMs); both mean the same file. What is left is for
// the Files to confine.
func resolve(name string) string {
	return strings.TrimLeft(strings.ReplaceAll(name, `\`, "/"), "/")
}

// open opens the file a client's name means, if its Files has it, asking
// for client's own where Files knows who asks (FilesFor).
func (t *TFTP) open(name string, client net.IP) (io.ReadCloser, int64, error) {
	clean := resolve(name)
	if clean == "" {
		return nil, 0, ErrNotFound
	}
	if ff, ok := t.files.(FilesFor); ok && client != nil {
		return ff.OpenFor(client, clean)
	}
	return t.files.Open(clean)
}

// negotiated is what the transfer's option answer granted, as
// "blksize=1468 tsize=123 windowsize=16" (sorted; "" without options).
func negotiated(rf io.ReaderFrom) string {
	no, ok := rf.(tftp.NegotiatedOptions)
	if !ok {
		return ""
	}
	var opts []string
	for name, value := range no.Options() {
		opts = append(opts, name+"="+value)
	}
	slices.Sort(opts)
	return strings.Join(opts, " ")
}

// clientIP is the address a transfer goes to.
func clientIP(rf io.ReaderFrom) net.IP {
	if ot, ok := rf.(tftp.OutgoingTransfer); ok {
		a := ot.RemoteAddr()
		return a.IP
	}
	return nil
}

// admit counts a transfer to client in if the caps allow it.
func (t *TFTP) admit(client string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	total := 0
	for _, n := range t.active {
		total += n
	}
	if total >= t.maxTransfers || t.active[client] >= t.maxPerClient {
		return false
	}
	t.active[client]++
	return true
}

func (t *TFTP) release(client string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.active[client]--; t.active[client] <= 0 {
		delete(t.active, client)
	}
}
