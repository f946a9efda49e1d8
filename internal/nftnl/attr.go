package nftnl

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// attrs appends netlink attributes: a native-endian length and type, the
// value, padding to four bytes. nf_tables' integers are big-endian.
type attrs struct{ b []byte }

func (a *attrs) put(typ uint16, v []byte) {
	a.b = binary.NativeEndian.AppendUint16(a.b, uint16(unix.SizeofNlAttr+len(v)))
	a.b = binary.NativeEndian.AppendUint16(a.b, typ)
	a.b = append(a.b, v...)
	a.pad()
}

func (a *attrs) pad() {
	for len(a.b)%unix.NLA_ALIGNTO != 0 {
		a.b = append(a.b, 0)
	}
}

func (a *attrs) u32(typ uint16, v uint32) { a.put(typ, binary.BigEndian.AppendUint32(nil, v)) }

func (a *attrs) u64(typ uint16, v uint64) { a.put(typ, binary.BigEndian.AppendUint64(nil, v)) }

func (a *attrs) str(typ uint16, s string) { a.put(typ, append([]byte(s), 0)) }

// nest puts an attribute holding the attributes fill appends.
func (a *attrs) nest(typ uint16, fill func(*attrs)) {
	start := len(a.b)
	a.b = append(a.b, 0, 0, 0, 0)
	fill(a)
	binary.NativeEndian.PutUint16(a.b[start:], uint16(len(a.b)-start))
	binary.NativeEndian.PutUint16(a.b[start+2:], typ|unix.NLA_F_NESTED)
}

// attr is one attribute read back, its type without the flag bits.
type attr struct {
	typ  uint16
	data []byte
}

// parseAttrs splits b into its attributes.
func parseAttrs(b []byte) ([]attr, error) {
	var out []attr
	for len(b) > 0 {
		if len(b) < unix.SizeofNlAttr {
			return nil, errors.New("netlink attribute cut short")
		}
		n := int(binary.NativeEndian.Uint16(b))
		typ := binary.NativeEndian.Uint16(b[2:]) &^ (unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER)
		if n < unix.SizeofNlAttr || n > len(b) {
			return nil, fmt.Errorf("netlink attribute %d has length %d of %d bytes", typ, n, len(b))
		}
		out = append(out, attr{typ, b[unix.SizeofNlAttr:n]})
		b = b[min(len(b), (n+unix.NLA_ALIGNTO-1)&^(unix.NLA_ALIGNTO-1)):]
	}
	return out, nil
}

// fields reads b's attributes by type (the last one of a type wins).
func fields(b []byte) (map[uint16][]byte, error) {
	as, err := parseAttrs(b)
	if err != nil {
		return nil, err
	}
	m := make(map[uint16][]byte, len(as))
	for _, a := range as {
		m[a.typ] = a.data
	}
	return m, nil
}

func be32(b []byte) uint32 {
	if len(b) < 4 {
		return 0
	}
	return binary.BigEndian.Uint32(b)
}

func be64(b []byte) uint64 {
	if len(b) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
