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

	"golang.org/x/crypto/chacha20poly1305"
)

// throughputAlg is one row of the throughput table.
type throughputAlg struct {
	name string // openssl 3.x name, which is also the metric name
	// label is what openssl 3.0 prints for the row and in progress lines
	// when it differs from name: -evp ciphers print their EVP name
	// ("AES-128-GCM"), and the host's parser lowers it back to name.
	label string
	unit  int // block sizes must be a multiple of this (the cipher block)
	// newOp returns a function that processes one buffer, as one openssl
	// speed iteration does: a whole digest of it, or encrypting it in
	// place with the chaining state carried over from the last call.
	newOp func() func(buf []byte)
}

// throughputAlgs lists what pure Go can do of openssl speed's table, in
// openssl 3.x's order. Only ChaCha20-Poly1305 comes from outside the
// standard library, which keeps its copy internal.
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
	// openssl speed reaches the AEADs only through -evp, whose rows come
	// after the built-in ones.
	{name: "aes-128-gcm", label: "AES-128-GCM", unit: 1, newOp: aeadOp(newAESGCM, 16)},
	{name: "chacha20-poly1305", label: "ChaCha20-Poly1305", unit: 1, newOp: aeadOp(chacha20poly1305.New, chacha20poly1305.KeySize)},
}

// printed is the row's name as openssl prints it.
func (a *throughputAlg) printed() string {
	if a.label != "" {
		return a.label
	}
	return a.name
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

// aeadOp seals the whole buffer, tag included, per iteration: that is
// what a TLS record or an IPsec packet costs, and what `openssl speed
// -aead -evp` times. Reusing the nonce would be fatal for real traffic
// but changes nothing in the work done, and a fresh nonce per call would
// time the nonce's construction too.
func aeadOp(newAEAD func(key []byte) (cipher.AEAD, error), keyLen int) func() func([]byte) {
	return func() func([]byte) {
		aead, err := newAEAD(testBytes(keyLen, 1))
		if err != nil {
			// Key lengths are fixed, so this is a programming error.
			panic(err)
		}
		nonce := testBytes(aead.NonceSize(), 101)
		// openssl -aead authenticates 13 bytes of TLS record header too.
		aad := testBytes(13, 51)
		var sealed []byte
		return func(buf []byte) {
			sealed = aead.Seal(sealed[:0], nonce, buf, aad)
		}
	}
}

func newAESGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
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
