package speed

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rc4"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"hash"
)

// throughputAlg is one row of the throughput table.
type throughputAlg struct {
	name string // openssl 3.x name, which is also the metric name
	unit int    // block sizes must be a multiple of this (the cipher block)
	// newOp returns a function that processes one buffer, as one openssl
	// speed iteration does: a whole digest of it, or encrypting it in
	// place with the chaining state carried over from the last call.
	newOp func() func(buf []byte)
}

// throughputAlgs lists what stdlib can do of openssl speed's table, in
// openssl 3.x's order.
var throughputAlgs = []*throughputAlg{
	{name: "md5", unit: 1, newOp: hashOp(md5.New)},
	{name: "sha1", unit: 1, newOp: hashOp(sha1.New)},
	{name: "rc4", unit: 1, newOp: rc4Op},
	{name: "des-cbc", unit: des.BlockSize, newOp: cbcOp(des.NewCipher, 8)},
	{name: "des-ede3", unit: des.BlockSize, newOp: cbcOp(des.NewTripleDESCipher, 24)},
	{name: "aes-128-cbc", unit: aes.BlockSize, newOp: cbcOp(aes.NewCipher, 16)},
	{name: "aes-192-cbc", unit: aes.BlockSize, newOp: cbcOp(aes.NewCipher, 24)},
	{name: "aes-256-cbc", unit: aes.BlockSize, newOp: cbcOp(aes.NewCipher, 32)},
	{name: "sha256", unit: 1, newOp: hashOp(sha256.New)},
	{name: "sha512", unit: 1, newOp: hashOp(sha512.New)},
	{name: "hmac(md5)", unit: 1, newOp: hmacOp(md5.New)},
}

func findThroughput(name string) *throughputAlg {
	for _, a := range throughputAlgs {
		if a.name == name {
			return a
		}
	}
	return nil
}

func hashOp(newHash func() hash.Hash) func() func([]byte) {
	return func() func([]byte) {
		h := newHash()
		sum := make([]byte, 0, h.Size())
		return func(buf []byte) {
			h.Reset()
			h.Write(buf)
			sum = h.Sum(sum[:0])
		}
	}
}

func hmacOp(newHash func() hash.Hash) func() func([]byte) {
	return func() func([]byte) {
		// openssl speed's HMAC key.
		h := hmac.New(newHash, []byte("This is a key..."))
		sum := make([]byte, 0, h.Size())
		return func(buf []byte) {
			h.Reset()
			h.Write(buf)
			sum = h.Sum(sum[:0])
		}
	}
}

func cbcOp(newCipher func([]byte) (cipher.Block, error), keyLen int) func() func([]byte) {
	return func() func([]byte) {
		block, err := newCipher(testBytes(keyLen, 1))
		if err != nil {
			// Key lengths are fixed above, so this is a programming error.
			panic(err)
		}
		enc := cipher.NewCBCEncrypter(block, testBytes(block.BlockSize(), 101))
		return func(buf []byte) { enc.CryptBlocks(buf, buf) }
	}
}

func rc4Op() func([]byte) {
	c, err := rc4.NewCipher(testBytes(16, 1))
	if err != nil {
		panic(err)
	}
	return func(buf []byte) { c.XORKeyStream(buf, buf) }
}

// testBytes returns n distinct-looking bytes; the values do not matter
// for speed, but identical DES subkeys would make 3DES degenerate.
func testBytes(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i)*7
	}
	return b
}
