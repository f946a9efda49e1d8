package tftp

import (
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestUnpackRQFoldsCase(t *testing.T) {
	for _, tc := range []struct {
		name     string
		req      string
		wantMode string
		wantOpts options
	}{
		{"lower", "\x00\x01f\x00octet\x00blksize\x001024\x00", "octet", options{"blksize": "1024"}},
		{"upper", "\x00\x01f\x00NETASCII\x00TSIZE\x000\x00BLKSIZE\x001468\x00", "netascii", options{"tsize": "0", "blksize": "1468"}},
		{"lower wins after", "\x00\x01f\x00OcTeT\x00BLKSIZE\x00512\x00blksize\x001024\x00", "octet", options{"blksize": "1024"}},
		{"lower wins before", "\x00\x01f\x00octet\x00blksize\x001024\x00BlkSize\x00512\x00", "octet", options{"blksize": "1024"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, mode, opts, err := unpackRQ([]byte(tc.req))
			if err != nil || name != "f" || mode != tc.wantMode || !reflect.DeepEqual(opts, tc.wantOpts) {
				t.Errorf("unpackRQ = %q, %q, %v, %v; want f, %q, %v", name, mode, opts, err, tc.wantMode, tc.wantOpts)
			}
		})
	}
}

// TestModeIsCaseInsensitive: a read request for "NETASCII" is served in
// netascii (LF goes out as CR LF), and the handler sees the mode in lower
// case through RequestMode.
func TestModeIsCaseInsensitive(t *testing.T) {
	modes := make(chan string, 1)
	s := NewServer(func(_ string, rf io.ReaderFrom) error {
		modes <- rf.(RequestMode).Mode()
		_, err := rf.ReadFrom(strings.NewReader("a\nb"))
		return err
	}, nil)
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(conn)
	defer s.Shutdown()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.WriteToUDP([]byte("\x00\x01f\x00NETASCII\x00"), conn.LocalAddr().(*net.UDPAddr))
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	buf := make([]byte, 1024)
	n, from, err := c.ReadFromUDP(buf)
	if err != nil {
		t.Fatal(err)
	}
	if want := "\x00\x03\x00\x01a\r\nb"; string(buf[:n]) != want {
		t.Errorf("DATA %q, want %q", buf[:n], want)
	}
	c.WriteToUDP([]byte{0, 4, 0, 1}, from)
	if m := <-modes; m != "netascii" {
		t.Errorf("Mode() = %q, want netascii", m)
	}
}
