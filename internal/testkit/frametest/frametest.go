// Package frametest makes the console lines a board sends, for tests of the
// host side.
package frametest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"

	"github.com/bootbench/bootbench/contract/frame"
)

// Board returns the frame lines of a run that printed chunks: hello, one raw
// frame per chunk, and done. The done frame's digest is that of claimed,
// which a test can make differ from the chunks; nil chunks send claimed as
// one chunk.
func Board(run, claimed string, chunks ...string) []string {
	if chunks == nil {
		chunks = []string{claimed}
	}
	var lines []string
	seq := 0
	add := func(typ frame.Type, body any) {
		l, err := frame.Encode(run, seq, typ, body)
		if err != nil {
			panic(err) // the bodies here always encode
		}
		seq++
		lines = append(lines, l)
	}
	add(frame.Hello, frame.HelloBody{Arch: "amd64", Kernel: "6.1.0", Bench: "speed"})
	for i, c := range chunks {
		add(frame.Raw, frame.RawBody{N: i, Data: base64.StdEncoding.EncodeToString([]byte(c))})
	}
	sum := sha256.Sum256([]byte(claimed))
	add(frame.Done, frame.DoneBody{Chunks: len(chunks), SHA256: hex.EncodeToString(sum[:])})
	return lines
}
