package speed

import (
	"crypto/dsa"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	_ "embed"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
)

// pkeyAlg is one public-key algorithm, printed in openssl's sign/verify
// (or op) tables.
type pkeyAlg struct {
	name   string // openssl's command-line name: rsa2048, ecdsap256
	family string // "rsa", "dsa", "ecdsa", "ecdh" or "eddsa": which table
	bits   int    // as openssl prints it (Ed25519 is 253)
	curve  string // openssl's curve label: nistp256, Ed25519
	// setup prepares keys and returns the operations to time, in the
	// order of the table's columns (sign then verify, or the one op).
	setup func() ([]pkeyOp, error)
}

type pkeyOp struct {
	doing string // progress before the run: "Doing 2048 bits private rsa's"
	done  string // progress after the count: "2048 bits private RSA's"
	run   func() error
}

var pkeyAlgs = []*pkeyAlg{
	{name: "rsa1024", family: "rsa", bits: 1024, setup: rsaSetup(rsa1024TestKey)},
	{name: "rsa2048", family: "rsa", bits: 2048, setup: rsaSetup(rsa2048TestKey)},
	{name: "rsa4096", family: "rsa", bits: 4096, setup: rsaSetup(rsa4096TestKey)},
	{name: "dsa2048", family: "dsa", bits: 2048, setup: dsaSetup(dsa2048TestKey)},
	{name: "ecdsap256", family: "ecdsa", bits: 256, curve: "nistp256", setup: ecdsaSetup},
	{name: "ecdhp256", family: "ecdh", bits: 256, curve: "nistp256", setup: ecdhSetup},
	{name: "ed25519", family: "eddsa", bits: 253, curve: "Ed25519", setup: ed25519Setup},
}

func findPkey(name string) *pkeyAlg {
	for _, a := range pkeyAlgs {
		if a.name == name {
			return a
		}
	}
	return nil
}

// The RSA and DSA keys are throwaway test keys, not secrets. They are
// shipped rather than generated because generating one takes far longer
// than the benchmark itself on a slow MIPS board: minutes for 4096 bits.
// The PEM types are spelled "... TESTING KEY" so secret scanners leave them
// alone. They are read with encoding/asn1 rather than crypto/x509, which
// would add some 400 kB to the board's binary for one function.
var (
	//go:embed rsa1024-testkey.pem
	rsa1024TestKey string
	//go:embed rsa2048-testkey.pem
	rsa2048TestKey string
	//go:embed rsa4096-testkey.pem
	rsa4096TestKey string
	// DSA with a 2048-bit p and a 160-bit q, as openssl speed's dsa2048
	// (apps/testdsa.h), made with: openssl genpkey -genparam -algorithm DSA
	// -pkeyopt dsa_paramgen_bits:2048 -pkeyopt dsa_paramgen_q_bits:160
	// -pkeyopt type:fips186_2, then genpkey and pkey -traditional.
	//go:embed dsa2048-testkey.pem
	dsa2048TestKey string
)

// testKeyDER returns the DER bytes of an embedded test key.
func testKeyDER(pemKey string) ([]byte, error) {
	block, _ := pem.Decode([]byte(pemKey))
	if block == nil {
		return nil, errors.New("embedded test key is not PEM")
	}
	return block.Bytes, nil
}

// msg is what the public-key operations sign: openssl speed signs a
// 36-byte (RSA) or 20-byte (DSA, ECDSA, EdDSA) buffer without hashing it.
var msg = testBytes(36, 3)

func rsaSetup(pemKey string) func() ([]pkeyOp, error) {
	return func() ([]pkeyOp, error) { return rsaOps(pemKey) }
}

// pkcs1Key is an RSA private key as PKCS #1 (RFC 8017, A.1.2) lays it out,
// two primes only.
type pkcs1Key struct {
	Version          int
	N                *big.Int
	E                int
	D, P, Q          *big.Int
	Dp, Dq, Qinv     *big.Int
	AdditionalPrimes []asn1.RawValue `asn1:"optional,omitempty"`
}

func parseRSAKey(pemKey string) (*rsa.PrivateKey, error) {
	der, err := testKeyDER(pemKey)
	if err != nil {
		return nil, err
	}
	var k pkcs1Key
	if _, err := asn1.Unmarshal(der, &k); err != nil {
		return nil, fmt.Errorf("embedded RSA test key: %w", err)
	}
	key := &rsa.PrivateKey{PublicKey: rsa.PublicKey{N: k.N, E: k.E}, D: k.D, Primes: []*big.Int{k.P, k.Q}}
	if err := key.Validate(); err != nil {
		return nil, fmt.Errorf("embedded RSA test key: %w", err)
	}
	key.Precompute()
	return key, nil
}

func rsaOps(pemKey string) ([]pkeyOp, error) {
	key, err := parseRSAKey(pemKey)
	if err != nil {
		return nil, err
	}
	sig, err := rsa.SignPKCS1v15(nil, key, 0, msg)
	if err != nil {
		return nil, err
	}
	label := fmt.Sprintf("%d bits", key.N.BitLen())
	return []pkeyOp{
		{
			doing: "Doing " + label + " private rsa's",
			done:  label + " private RSA's",
			run: func() error {
				_, err := rsa.SignPKCS1v15(nil, key, 0, msg)
				return err
			},
		},
		{
			doing: "Doing " + label + " public rsa's",
			done:  label + " public RSA's",
			run:   func() error { return rsa.VerifyPKCS1v15(&key.PublicKey, 0, msg, sig) },
		},
	}, nil
}

// dsaKey is OpenSSL's "traditional" DSA private key: the parameters, the
// public and the private value.
type dsaKey struct {
	Version       int
	P, Q, G, Y, X *big.Int
}

func dsaSetup(pemKey string) func() ([]pkeyOp, error) {
	return func() ([]pkeyOp, error) {
		der, err := testKeyDER(pemKey)
		if err != nil {
			return nil, err
		}
		var k dsaKey
		if _, err := asn1.Unmarshal(der, &k); err != nil {
			return nil, fmt.Errorf("embedded DSA test key: %w", err)
		}
		key := &dsa.PrivateKey{PublicKey: dsa.PublicKey{Parameters: dsa.Parameters{P: k.P, Q: k.Q, G: k.G}, Y: k.Y}, X: k.X}
		// openssl speed signs 20 bytes, unhashed.
		digest := msg[:20]
		r, s, err := dsa.Sign(rand.Reader, key, digest)
		if err != nil {
			return nil, err
		}
		if !dsa.Verify(&key.PublicKey, digest, r, s) {
			return nil, errors.New("embedded DSA test key does not verify its own signature")
		}
		label := fmt.Sprintf("%d bits", key.P.BitLen())
		return []pkeyOp{
			{
				doing: "Doing " + label + " sign dsa's",
				done:  label + " DSA signs",
				run: func() error {
					_, _, err := dsa.Sign(rand.Reader, key, digest)
					return err
				},
			},
			{
				doing: "Doing " + label + " verify dsa's",
				done:  label + " DSA verify",
				run: func() error {
					if !dsa.Verify(&key.PublicKey, digest, r, s) {
						return errors.New("dsa verify failed")
					}
					return nil
				},
			},
		}, nil
	}
}

func ecdsaSetup() ([]pkeyOp, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	digest := msg[:20]
	sig, err := ecdsa.SignASN1(rand.Reader, key, digest)
	if err != nil {
		return nil, err
	}
	return []pkeyOp{
		{
			doing: "Doing 256 bits sign ecdsa's",
			done:  "256 bits ECDSA signs",
			run: func() error {
				_, err := ecdsa.SignASN1(rand.Reader, key, digest)
				return err
			},
		},
		{
			doing: "Doing 256 bits verify ecdsa's",
			done:  "256 bits ECDSA verify",
			run: func() error {
				if !ecdsa.VerifyASN1(&key.PublicKey, digest, sig) {
					return errors.New("ecdsa verify failed")
				}
				return nil
			},
		},
	}, nil
}

func ecdhSetup() ([]pkeyOp, error) {
	a, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	b, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	peer := b.PublicKey()
	return []pkeyOp{{
		// The double space is openssl's.
		doing: "Doing 256 bits  ecdh's",
		done:  "256-bits ECDH ops",
		run: func() error {
			_, err := a.ECDH(peer)
			return err
		},
	}}, nil
}

func ed25519Setup() ([]pkeyOp, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	m := msg[:20]
	sig := ed25519.Sign(priv, m)
	return []pkeyOp{
		{
			doing: "Doing 253 bits sign Ed25519's",
			done:  "253 bits Ed25519 signs",
			run: func() error {
				ed25519.Sign(priv, m)
				return nil
			},
		},
		{
			doing: "Doing 253 bits verify Ed25519's",
			done:  "253 bits Ed25519 verify",
			run: func() error {
				if !ed25519.Verify(pub, m, sig) {
					return errors.New("ed25519 verify failed")
				}
				return nil
			},
		},
	}, nil
}
