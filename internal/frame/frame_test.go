package frame

import (
	"encoding/json"
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

// TestBodiesJSON pins the JSON of the bodies: the host decodes what older
// boards sent, so fields are only ever added, and left out when unknown.
func TestBodiesJSON(t *testing.T) {
	tests := []struct {
		name string
		body any
		want string
	}{
		{"hello as before", HelloBody{Run: "r", Arch: "mipsle", Kernel: "6.1.0", Bench: "speed"},
			`{"run":"r","arch":"mipsle","kernel":"6.1.0","bench":"speed"}`},
		{"hello in full", HelloBody{Run: "r", Arch: "mipsle", Kernel: "6.1.0", CPU: "MIPS 24Kc V7.4", BogoMIPS: "452.19", Bench: "openssl",
			Machine: "MikroTik RouterBOARD 450G", CPUFreqCurKHz: 680000, CPUFreqMinKHz: 400000, CPUFreqMaxKHz: 800000,
			ClockRequestedMHz: 680, ClockSet: "scaling_max_freq 680000 kHz", MemTotalKB: 61572, Reps: 5, Argv: []string{"/bin/openssl", "speed"}},
			`{"run":"r","arch":"mipsle","kernel":"6.1.0","cpu":"MIPS 24Kc V7.4","bogomips":"452.19","bench":"openssl",` +
				`"machine":"MikroTik RouterBOARD 450G","cpufreq_cur_khz":680000,"cpufreq_min_khz":400000,"cpufreq_max_khz":800000,` +
				`"clock_requested_mhz":680,"clock_set":"scaling_max_freq 680000 kHz","mem_total_kb":61572,"reps":5,"argv":["/bin/openssl","speed"]}`},
		{"done as before", DoneBody{Run: "r", Chunks: 2, SHA256: "ab"}, `{"run":"r","chunks":2,"sha256":"ab","exit":0}`},
		{"done with reps", DoneBody{Run: "r", Chunks: 2, SHA256: "ab", Exit: 1, Reps: 3}, `{"run":"r","chunks":2,"sha256":"ab","exit":1,"reps":3}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
