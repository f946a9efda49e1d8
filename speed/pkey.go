package speed

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	_ "embed"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// pkeyAlg is one public-key algorithm, printed in openssl's sign/verify
// (or op) tables.
type pkeyAlg struct {
	name   string // openssl's command-line name: rsa2048, ecdsap256
	family string // "rsa", "ecdsa", "ecdh" or "eddsa": which table
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

// The RSA keys are throwaway test keys, not secrets. They are shipped
// rather than generated because generating one takes far longer than the
// benchmark itself on a slow MIPS board: minutes for 4096 bits. The PEM
// type is spelled "RSA TESTING KEY" so secret scanners leave them alone.
var (
	//go:embed rsa1024-testkey.pem
	rsa1024TestKey string
	//go:embed rsa2048-testkey.pem
	rsa2048TestKey string
	//go:embed rsa4096-testkey.pem
	rsa4096TestKey string
)

// msg is what the public-key operations sign: openssl speed signs a
// 36-byte (RSA) or 20-byte (DSA, ECDSA, EdDSA) buffer without hashing it.
var msg = testBytes(36, 3)

func rsaSetup(pemKey string) func() ([]pkeyOp, error) {
	return func() ([]pkeyOp, error) { return rsaOps(pemKey) }
}

func rsaOps(pemKey string) ([]pkeyOp, error) {
	block, _ := pem.Decode([]byte(strings.ReplaceAll(pemKey, "TESTING KEY", "PRIVATE KEY")))
	if block == nil {
		return nil, errors.New("embedded test key is not PEM")
	}
	key, err := x509.ParsePKCS1PrivateKey(block.Bytes)
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
