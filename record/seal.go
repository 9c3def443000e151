package record

import (
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"errors"
)

// errOpen says that sealed bytes do not open under a key: another key sealed them, the key
// was erased, or they were altered.
var errOpen = errors.New("record: sealed content does not open")

const nonceSize = 12

// seal encrypts plain with AES-256-GCM under a fresh random nonce: nonce || ciphertext. The
// AAD binds the sealed bytes to where they belong (an entry's id, a user's key row), so that
// they cannot be moved to another entry and opened there.
func seal(a cipher.AEAD, aad string, plain []byte) []byte {
	out := make([]byte, nonceSize, nonceSize+len(plain)+a.Overhead())
	if _, err := rand.Read(out); err != nil {
		panic(err) // crypto/rand does not fail
	}
	return a.Seal(out, out, plain, []byte(aad))
}

func open(a cipher.AEAD, aad string, sealed []byte) ([]byte, error) {
	if len(sealed) < nonceSize+a.Overhead() {
		return nil, errOpen
	}
	plain, err := a.Open(nil, sealed[:nonceSize], sealed[nonceSize:], []byte(aad))
	if err != nil {
		return nil, errOpen
	}
	return plain, nil
}

func sum(b []byte) []byte {
	if b == nil {
		return nil
	}
	s := sha256.Sum256(b)
	return s[:]
}
