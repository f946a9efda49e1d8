package frame

import (
	"errors"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	line, err := Encode(3, Raw, RawBody{Run: "r1", N: 2, Data: "aGVsbG8="})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Decode([]byte("[    1.234] noise " + line + "\r\n"))
	if err != nil {
		t.Fatalf("Decode(%q): %v", line, err)
	}
	if f.Seq != 3 || f.Type != Raw || string(f.Body) != `{"run":"r1","n":2,"data":"aGVsbG8="}` {
		t.Errorf("got %+v", f)
	}
}

func TestDecodeRejects(t *testing.T) {
	good, _ := Encode(0, Done, DoneBody{Run: "r", Chunks: 1, SHA256: "ab", Exit: 0})
	flip := []byte(good)
	flip[len(Prefix)+5] ^= 0x01 // one bit flipped on the wire
	tests := []struct {
		name   string
		line   string
		crcErr bool
	}{
		{"bit flip", string(flip), true},
		{"truncated", good[:len(good)-3], true},
		{"dropped byte", strings.Replace(good, "chunks", "chunk", 1), true},
		{"upper-case crc", good[:len(good)-8] + strings.ToUpper(good[len(good)-8:]) + "X", true},
		{"not a frame", "Linux version 6.1.0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.line))
			if err == nil {
				t.Fatalf("Decode(%q) accepted a bad line", tt.line)
			}
			if got := errors.Is(err, ErrCRC); got != tt.crcErr {
				t.Errorf("errors.Is(err, ErrCRC) = %v, want %v (err %v)", got, tt.crcErr, err)
			}
		})
	}
}

func TestKnownCRC(t *testing.T) {
	// CRC-32/IEEE of "0 hello {}" computed independently (python zlib.crc32).
	line, _ := Encode(0, Hello, struct{}{})
	if want := "@BB1 0 hello {} 498be9c5"; line != want {
		t.Errorf("Encode = %q, want %q", line, want)
	}
}
