package netboot

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/pin/tftp/v3"
)

// errMode is sent for a transfer mode other than octet and netascii ("mail"
// is for writing to a user's terminal; anything else is not TFTP).
var errMode = errors.New("unsupported transfer mode")

// requestMode is the transfer mode the client asked for, lower-cased by the
// library (RFC 1350 makes it case-insensitive; see third_party/pin-tftp).
// known is false if the transfer does not say: then the library's own
// handling stands.
func requestMode(rf io.ReaderFrom) (mode string, known bool) {
	rm, ok := rf.(tftp.RequestMode)
	if !ok {
		return "", false
	}
	return rm.Mode(), true
}

// netasciiSize is how many bytes f takes in netascii, where every LF goes
// out as CR LF and every CR as CR NUL (RFC 1350, RFC 764): tsize must count
// what is sent, not what is on disk. It leaves f at its start.
func netasciiSize(f io.ReadSeeker) (int64, error) {
	var n int64
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		b, err := br.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("size netascii file: %w", err)
		}
		n++
		if b == '\n' || b == '\r' {
			n++
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("size netascii file: %w", err)
	}
	return n, nil
}
