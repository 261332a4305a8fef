// Package fakesecret makes secrets for tests at run time, so that no file
// of this repository holds one (secret scanners, and the repository tools
// serving this repository, would refuse it).
package fakesecret

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
)

// PrivateKey is a PEM "PRIVATE KEY" block (with its final newline): an
// Ed25519 key in PKCS #8, the shortest private key in use, made from a
// fixed seed.
func PrivateKey() string {
	der, err := x509.MarshalPKCS8PrivateKey(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	if err != nil {
		panic(err) // an Ed25519 key always marshals
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}
