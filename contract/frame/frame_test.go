package frame

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		run  string
		want Frame
	}{
		{"with run", "r1", Frame{Run: "r1", Seq: 3, Type: Raw, Body: json.RawMessage(`{"n":2,"data":"aGVsbG8="}`)}},
		{"board not told its run", "", Frame{Run: "", Seq: 3, Type: Raw, Body: json.RawMessage(`{"n":2,"data":"aGVsbG8="}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, err := Encode(tt.run, 3, Raw, RawBody{N: 2, Data: "aGVsbG8="})
			if err != nil {
				t.Fatal(err)
			}
			f, err := Decode([]byte("[    1.234] noise " + line + "\r\n"))
			if err != nil {
				t.Fatalf("Decode(%q): %v", line, err)
			}
			if f.Run != tt.want.Run || f.Seq != tt.want.Seq || f.Type != tt.want.Type || string(f.Body) != string(tt.want.Body) {
				t.Errorf("got %+v, want %+v", f, tt.want)
			}
		})
	}
}

func TestEncodeRejects(t *testing.T) {
	tests := []struct {
		name string
		run  string
		typ  Type
	}{
		{"run with a space", "r 1", Raw},
		{"run that means none", "-", Raw},
		{"empty type", "r1", ""},
		{"type with a line end", "r1", "raw\n"},
		{"type with a control character", "r1", "ra\x01w"},
		{"run with invalid UTF-8", "r\xff1", Raw},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if line, err := Encode(tt.run, 0, tt.typ, struct{}{}); err == nil {
				t.Errorf("Encode(%q, %q) = %q, want an error", tt.run, tt.typ, line)
			}
		})
	}
}

func TestStartsAnyFrame(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{Prefix + "r1 0 hello {} 76cdfb42", true},
		{`@BB1 0 hello {"run":"r1"} 01234567`, true}, // as older boards sent them
		{"@BB 0 hello", false},
		{"@BBx 0", false},
		{"[    0.000000] @BB2 r1 0 hello {}", false},
	}
	for _, tt := range tests {
		if got := StartsAnyFrame(tt.line); got != tt.want {
			t.Errorf("StartsAnyFrame(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	good, _ := Encode("r", 0, Done, DoneBody{Chunks: 1, SHA256: "ab", Exit: 0})
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

// signed is the frame line of payload with its right checksum: what a
// board whose encoder went wrong would send, past the CRC check.
func signed(payload string) string {
	return fmt.Sprintf("%s%s %08x", Prefix, payload, crc32.ChecksumIEEE([]byte(payload)))
}

// TestDecodeRefusesWhatEncodeNeverWrites: a line whose checksum is right
// but whose fields Encode could not have written is refused, not read
// leniently: a sequence number in any form but Encode's, control
// characters in the run id or type, invalid UTF-8 anywhere.
func TestDecodeRefusesWhatEncodeNeverWrites(t *testing.T) {
	tests := []struct {
		name, payload string
	}{
		{"sequence with a plus sign", `r1 +1 raw {"n":0,"data":""}`},
		{"sequence with a leading zero", `r1 01 raw {"n":0,"data":""}`},
		{"negative zero", `r1 -0 hello {}`},
		{"sequence with spaces around", `r1  0 hello {}`},
		{"tab in the type", "r1 0 hel\tlo {}"},
		{"control character in the type", "r1 0 hel\x01lo {}"},
		{"DEL in the type", "r1 0 hello\x7f {}"},
		{"control character in the run id", "r\x1b1 0 hello {}"},
		{"invalid UTF-8 in the body", "r1 0 fail {\"reason\":\"\xff\xfe\"}"},
		{"invalid UTF-8 in the type", "r1 0 h\xc3llo {}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload := tt.payload
			if f, err := Decode([]byte(signed(payload))); err == nil {
				t.Errorf("Decode(%q) = %+v, want an error", payload, f)
			}
		})
	}
	// What Encode writes still decodes.
	for _, seq := range []int{0, 1, 10, 123456} {
		line, _ := Encode("r1", seq, Hello, struct{}{})
		if f, err := Decode([]byte(line)); err != nil || f.Seq != seq {
			t.Errorf("Decode(%q) = %+v, %v", line, f, err)
		}
	}
}

func TestKnownCRC(t *testing.T) {
	// CRC-32/IEEE of the payloads computed independently (python zlib.crc32).
	tests := []struct{ run, want string }{
		{"r1", "@BB2 r1 0 hello {} 76cdfb42"},
		{"", "@BB2 - 0 hello {} d1d6121d"},
	}
	for _, tt := range tests {
		if line, _ := Encode(tt.run, 0, Hello, struct{}{}); line != tt.want {
			t.Errorf("Encode = %q, want %q", line, tt.want)
		}
	}
}

// TestBodiesJSON pins the JSON of the bodies: the run id travels in the
// line, not in a body, and what the board could not find out is left out.
func TestBodiesJSON(t *testing.T) {
	tests := []struct {
		name string
		body any
		want string
	}{
		{"hello as before", HelloBody{Arch: "mipsle", Kernel: "6.1.0", Bench: "speed"},
			`{"arch":"mipsle","kernel":"6.1.0","bench":"speed"}`},
		{"hello in full", HelloBody{Arch: "mipsle", Kernel: "6.1.0", CPU: "MIPS 24Kc V7.4", BogoMIPS: "452.19", Bench: "openssl",
			Machine: "MikroTik RouterBOARD 450G", CPUFreqCurKHz: 680000, CPUFreqMinKHz: 400000, CPUFreqMaxKHz: 800000,
			ClockRequestedMHz: 680, ClockSet: "scaling_max_freq 680000 kHz", MemTotalKB: 61572, Reps: 5, Argv: []string{"/bin/openssl", "speed"}},
			`{"arch":"mipsle","kernel":"6.1.0","cpu":"MIPS 24Kc V7.4","bogomips":"452.19","bench":"openssl",` +
				`"machine":"MikroTik RouterBOARD 450G","cpufreq_cur_khz":680000,"cpufreq_min_khz":400000,"cpufreq_max_khz":800000,` +
				`"clock_requested_mhz":680,"clock_set":"scaling_max_freq 680000 kHz","mem_total_kb":61572,"reps":5,"argv":["/bin/openssl","speed"]}`},
		{"done as before", DoneBody{Chunks: 2, SHA256: "ab"}, `{"chunks":2,"sha256":"ab","exit":0}`},
		{"done with reps", DoneBody{Chunks: 2, SHA256: "ab", Exit: 1, Reps: 3}, `{"chunks":2,"sha256":"ab","exit":1,"reps":3}`},
		{"first watch", WatchBody{Zones: []ThermalZone{{Type: "cpu-thermal", Trips: []TripPoint{{Type: "passive", TempMC: 85000}}}},
			Samples: []WatchSample{{AtMS: 0, CurKHz: []int{800000, 1200000}, TempMC: []int{51000}}}},
			`{"zones":[{"type":"cpu-thermal","trips":[{"type":"passive","temp_mc":85000}]}],"samples":[{"at_ms":0,"cur_khz":[800000,1200000],"temp_mc":[51000]}]}`},
		{"watch of a board without zones", WatchBody{Samples: []WatchSample{{AtMS: 4000, CurKHz: []int{600000}}}},
			`{"samples":[{"at_ms":4000,"cur_khz":[600000]}]}`},
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
