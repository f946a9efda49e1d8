package tftp

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// TestTSizeOfEmptyFile: an empty file's tsize is 0, and the option answer
// says so whether the handler set it (SetSize) or the library found it by
// seeking; before, the server took the 0 for the client's placeholder and left tsize
// out (with no other option, it sent no option answer at all).
func TestTSizeOfEmptyFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		send func(rf io.ReaderFrom) error
	}{
		{"SetSize", func(rf io.ReaderFrom) error {
			rf.(OutgoingTransfer).SetSize(0)
			_, err := rf.ReadFrom(io.LimitReader(bytes.NewReader(nil), 0)) // no Seek
			return err
		}},
		{"Seek", func(rf io.ReaderFrom) error {
			_, err := rf.ReadFrom(bytes.NewReader(nil))
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(func(_ string, rf io.ReaderFrom) error { return tc.send(rf) }, nil)
			s.SetTimeout(100 * time.Millisecond)
			s.SetRetries(1)
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
			c.WriteToUDP([]byte("\x00\x01empty\x00octet\x00tsize\x000\x00"), conn.LocalAddr().(*net.UDPAddr))
			c.SetReadDeadline(time.Now().Add(3 * time.Second))
			buf := make([]byte, 1024)
			n, _, err := c.ReadFromUDP(buf)
			if err != nil {
				t.Fatal(err)
			}
			if want := "\x00\x06tsize\x000\x00"; string(buf[:n]) != want {
				t.Errorf("first answer %q, want the option answer %q", buf[:n], want)
			}
		})
	}
}
