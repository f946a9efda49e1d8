package frame

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"io"
	"sync"
)

// Writer sends one run's frames from the board, one whole line per write so
// that a line is never split by another writer. As an io.Writer it takes
// the benchmark's output and cuts it into raw frames as it is produced, so
// the host sees progress and a board that dies midway still leaves what it
// printed in the transcript. It is safe for concurrent use: the throttling
// watch sends its frames while the benchmark's output is being written,
// and the two must not share a sequence number.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	run string
	seq int

	sum    hash.Hash // of the output, for done
	buf    []byte    // output not yet sent
	chunks int       // raw frames sent
}

// NewWriter sends the frames of run to w.
func NewWriter(w io.Writer, run string) *Writer {
	return &Writer{w: w, run: run, sum: sha256.New()}
}

// chunk keeps a raw frame well under a line a console tool shows whole.
const chunk = 384

// Send sends one frame. A body that cannot go in a frame of type typ (see
// kinds) is a bug on the board: a fail frame saying so goes instead, so the
// host records why.
func (w *Writer) Send(typ Type, body any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.send(typ, body)
}

func (w *Writer) send(typ Type, body any) {
	line, err := "", checkBody(typ, body)
	if err == nil {
		line, err = Encode(w.run, w.seq, typ, body)
	}
	if err != nil {
		line, _ = Encode(w.run, w.seq, Fail, FailBody{Reason: err.Error()})
	}
	w.seq++
	_, _ = w.w.Write([]byte(line + "\n"))
}

// Fail sends a fail frame: the board gave up for reason.
func (w *Writer) Fail(reason string) { w.Send(Fail, FailBody{Reason: reason}) }

// Write sends p as benchmark output, in raw frames at line ends and at
// chunk size.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sum.Write(p)
	w.buf = append(w.buf, p...)
	for len(w.buf) >= chunk {
		w.emit(w.buf[:chunk])
		w.buf = w.buf[chunk:]
	}
	if i := bytes.LastIndexByte(w.buf, '\n'); i >= 0 {
		w.emit(w.buf[:i+1])
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

// Flush sends the output held back since its last line end.
func (w *Writer) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flush()
}

func (w *Writer) flush() {
	if len(w.buf) > 0 {
		w.emit(w.buf)
		w.buf = nil
	}
}

// Done flushes the output and closes the run with its chunk count and
// digest, the benchmark's exit status and the repetitions it holds.
func (w *Writer) Done(exit, reps int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flush()
	w.send(Done, DoneBody{Chunks: w.chunks, SHA256: hex.EncodeToString(w.sum.Sum(nil)), Exit: exit, Reps: reps})
}

func (w *Writer) emit(b []byte) {
	w.send(Raw, RawBody{N: w.chunks, Data: base64.StdEncoding.EncodeToString(b)})
	w.chunks++
}
