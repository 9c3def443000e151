package redisstore

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
)

// sealPurpose is the HKDF label of the key that seals what the store keeps of turns and
// actions, distinct from every other key derived from the engine's signing key. It never
// changes: what was sealed before an upgrade opens after it.
const sealPurpose = "engine redis store content v1"

// errNotOpened is a sealed value that does not open: another key, a changed byte, another
// record's value, or a value written before sealing was on. It says nothing of the value.
var errNotOpened = errors.New("redisstore: a sealed value does not open")

// sealer seals the content of records with AES-256-GCM. Each record (its Redis key) has a key
// of its own, expanded from the root with HKDF, so that the 2^32 values a key may seal with
// random nonces are a bound per turn or action, not per signing key. Its methods are safe for
// concurrent use.
type sealer struct{ root []byte }

// newSealer returns the sealer of signingKey, or nil when there is none.
func newSealer(signingKey []byte) *sealer {
	if len(signingKey) == 0 {
		return nil
	}
	root, err := hkdf.Key(sha256.New, signingKey, nil, sealPurpose, 32)
	if err != nil {
		panic(err) // only for a length HKDF-SHA256 cannot give: 32 it always can
	}
	return &sealer{root: root}
}

// aead returns the cipher of the record at key.
func (s *sealer) aead(key string) cipher.AEAD {
	k, err := hkdf.Expand(sha256.New, s.root, key, 32)
	if err == nil {
		var b cipher.Block
		if b, err = aes.NewCipher(k); err == nil {
			var a cipher.AEAD
			if a, err = cipher.NewGCMWithRandomNonce(b); err == nil {
				return a
			}
		}
	}
	panic(err) // a 32-byte key and AES: none of these fail
}

// seal returns plain sealed by a (a random nonce, then the ciphertext), bound to ad.
func seal(a cipher.AEAD, plain []byte, ad string) []byte {
	return a.Seal(nil, nil, plain, []byte(ad))
}

// open returns what seal sealed with the same cipher and ad, or errNotOpened.
func open(a cipher.AEAD, sealed []byte, ad string) ([]byte, error) {
	if len(sealed) < a.Overhead() {
		return nil, errNotOpened
	}
	plain, err := a.Open(nil, nil, sealed, []byte(ad))
	if err != nil {
		return nil, errNotOpened
	}
	return plain, nil
}
