package main

import (
	"bytes"
	"crypto/rand"
	"testing"
	"unsafe"

	"github.com/bootbench/bootbench/internal/testkit/needs"
)

// struct rand_pool_info: entropy_count (bits) and buf_size (bytes) as
// the machine's ints, then the bytes; read back as the kernel reads it,
// two int32 in memory, whatever the byte order.
func TestRandPoolInfo(t *testing.T) {
	seed := bytes.Repeat([]byte{0xab}, 32)
	b := randPoolInfo(seed)
	if len(b) != 40 {
		t.Fatalf("%d bytes, want 40", len(b))
	}
	head := (*[2]int32)(unsafe.Pointer(&b[0]))
	if head[0] != 256 || head[1] != 32 {
		t.Errorf("entropy_count %d, buf_size %d; want 256, 32", head[0], head[1])
	}
	if !bytes.Equal(b[8:], seed) {
		t.Errorf("buf %x, want the seed", b[8:])
	}
}

// This host's kernel takes a seed (RNDADDENTROPY is root's: the board's
// init is root), and its pool is ready afterwards. The seed is random:
// the host's pool is credited with it.
func TestSeedRandom(t *testing.T) {
	needs.Root(t, "RNDADDENTROPY needs root")
	seed := make([]byte, 32)
	rand.Read(seed)
	var out bytes.Buffer
	if err := seedRandom(&out, seed); err != nil {
		t.Fatal(err)
	}
	if !randomReady() {
		t.Errorf("the pool is not ready after a seed; said %q", out.String())
	}
}
