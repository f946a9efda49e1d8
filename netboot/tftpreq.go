package netboot

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unsafe"
)

// errMode is sent for a transfer mode other than octet and netascii ("mail"
// is for writing to a user's terminal; anything else is not TFTP).
var errMode = errors.New("unsupported transfer mode")

// normaliseRequest lower-cases a read request's mode and option names and
// returns the mode. RFC 1350 (section 5) and RFC 2347 make both
// case-insensitive; pin/tftp v3.1.0 compares them exactly, so "NETASCII"
// would go out unconverted and "BLKSIZE" or "TSIZE" would be ignored.
//
// The request cannot be fixed before the library parses it: it reads the
// socket itself, and a socket it does not know as a *net.UDPConn sends every
// transfer down its fallback path, which caps blocks at 512 bytes whatever
// the client asks and loses the local address. So the parsed request is
// fixed where the library keeps it, in the transfer it hands the read
// handler (the unexported fields mode and opts of v3.1.0, the version go.mod
// pins), before ReadFrom acts on it. known is false if the transfer does not
// have those fields: then the library's own matching stands.
func normaliseRequest(rf io.ReaderFrom) (mode string, known bool) {
	v := reflect.ValueOf(rf)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return "", false
	}
	mf, of := v.Elem().FieldByName("mode"), v.Elem().FieldByName("opts")
	str := reflect.TypeFor[string]()
	if mf.Kind() != reflect.String || of.Kind() != reflect.Map || of.Type().Key() != str || of.Type().Elem() != str {
		return "", false
	}
	m := reflect.NewAt(mf.Type(), unsafe.Pointer(mf.UnsafeAddr())).Elem()
	m.SetString(strings.ToLower(m.String()))
	opts := reflect.NewAt(of.Type(), unsafe.Pointer(of.UnsafeAddr())).Elem()
	for _, k := range opts.MapKeys() {
		lower := reflect.ValueOf(strings.ToLower(k.String()))
		if lower.String() == k.String() {
			continue
		}
		if !opts.MapIndex(lower).IsValid() { // "blksize" wins over "BLKSIZE"
			opts.SetMapIndex(lower, opts.MapIndex(k))
		}
		opts.SetMapIndex(k, reflect.Value{})
	}
	return m.String(), true
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
