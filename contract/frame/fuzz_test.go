package frame

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"reflect"
	"testing"
)

// FuzzDecode feeds the decoder console lines: the seeds in
// testdata/fuzz/FuzzDecode are frames and kernel lines from captured
// transcripts, whole, cut and with bytes flipped as a UART does. Each input
// is tried as a line and, so the fuzzer reaches what lies past the checksum,
// as a payload signed with its right checksum. Whatever a line holds,
// Decode must not panic, must call only a line that claims to be a frame a
// checksum failure, and must accept only what Encode can write: a frame it
// accepts encodes again and decodes to itself.
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, line []byte) {
		checkDecode(t, line)
		checkDecode(t, fmt.Appendf(nil, "%s%s %08x", Prefix, line, crc32.ChecksumIEEE(line)))
	})
}

func checkDecode(t *testing.T, line []byte) {
	fr, err := Decode(line)
	if err != nil {
		if errors.Is(err, ErrCRC) && !IsFrame(line) {
			t.Fatalf("Decode(%q): checksum error for a line that is no frame: %v", line, err)
		}
		return
	}
	if !IsFrame(line) {
		t.Fatalf("Decode(%q) accepted a line IsFrame rejects", line)
	}
	again, err := Encode(fr.Run, fr.Seq, fr.Type, fr.Body)
	if err != nil {
		t.Fatalf("Decode(%q) = %+v, which Encode refuses: %v", line, fr, err)
	}
	back, err := Decode([]byte(again))
	if err != nil {
		t.Fatalf("Encode(%+v) = %q, which Decode refuses: %v", fr, again, err)
	}
	if back.Run != fr.Run || back.Seq != fr.Seq || back.Type != fr.Type || !reflect.DeepEqual(jsonValue(t, back.Body), jsonValue(t, fr.Body)) {
		t.Fatalf("Decode(%q) = %+v, but its encoding decodes to %+v", line, fr, back)
	}
}

// jsonValue is what a body means, whatever its spacing and escapes.
func jsonValue(t *testing.T, body []byte) any {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("body %q of an accepted frame: %v", body, err)
	}
	return v
}
