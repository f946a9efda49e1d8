package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"
)

// struct rand_pool_info: entropy_count (bits) and buf_size (bytes) as
// the machine's ints, then the bytes.
func TestRandPoolInfo(t *testing.T) {
	seed := bytes.Repeat([]byte{0xab}, 32)
	b := randPoolInfo(seed)
	if len(b) != 40 {
		t.Fatalf("%d bytes, want 40", len(b))
	}
	if bits, n := binary.NativeEndian.Uint32(b[0:]), binary.NativeEndian.Uint32(b[4:]); bits != 256 || n != 32 {
		t.Errorf("entropy_count %d, buf_size %d; want 256, 32", bits, n)
	}
	if !bytes.Equal(b[8:], seed) {
		t.Errorf("buf %x, want the seed", b[8:])
	}
}

// This host's kernel takes the seed (RNDADDENTROPY is root's: the board's
// init is root), and its pool is ready afterwards.
func TestSeedRandom(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("BOOTBENCH_E2E") == "1" {
			t.Fatal("RNDADDENTROPY needs root")
		}
		t.Skip("RNDADDENTROPY needs root; BOOTBENCH_E2E=1 makes this a failure")
	}
	var out bytes.Buffer
	if err := seedRandom(&out, bytes.Repeat([]byte{0x5a}, 32)); err != nil {
		t.Fatal(err)
	}
	if !randomReady() {
		t.Errorf("the pool is not ready after a seed; said %q", out.String())
	}
}
