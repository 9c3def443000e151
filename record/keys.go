package record

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"sync"
)

// The HKDF-SHA256 infos of the keys derived from the engine's key. Changing one makes every
// record unreadable or unverifiable: they are part of the format.
const (
	infoCheckpoint = "convengine record checkpoint v1"
	infoTenant     = "convengine record tenant v1\x00"
	infoEvidence   = "convengine record evidence v1\x00"
)

// MinKeySize is the least size of the key material the record's keys are derived from.
const MinKeySize = 32

// ErrKey says that key material is too short or a public key cannot be read.
var ErrKey = errors.New("record: bad key")

func derive(material []byte, info string) []byte {
	k, err := hkdf.Key(sha256.New, material, nil, info, 32)
	if err != nil {
		panic(err) // only for lengths HKDF cannot make; 32 bytes it always can
	}
	return k
}

// keyID names a key: the hex of the first 8 bytes of its SHA-256.
func keyID(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

// KeyID is the id of a checkpoint public key: the lowercase hex of the first 8 bytes of the
// SHA-256 of its 32 raw bytes. Checkpoints and prune statements name their key by it.
func KeyID(pub ed25519.PublicKey) string { return keyID(pub) }

// PublicKey is the Ed25519 public key that checks the checkpoints made with key material key.
func PublicKey(key []byte) (ed25519.PublicKey, error) {
	if len(key) < MinKeySize {
		return nil, fmt.Errorf("%w: key material of %d bytes, want at least %d", ErrKey, len(key), MinKeySize)
	}
	return ed25519.NewKeyFromSeed(derive(key, infoCheckpoint)).Public().(ed25519.PublicKey), nil
}

// PublicKeyPEM is [PublicKey] as a PEM "PUBLIC KEY" block (PKIX), the file a verifier is
// given.
func PublicKeyPEM(key []byte) ([]byte, error) {
	pub, err := PublicKey(key)
	if err != nil {
		return nil, err
	}
	return encodePEM(pub), nil
}

func encodePEM(pub ed25519.PublicKey) []byte {
	der, _ := x509.MarshalPKIXPublicKey(pub)
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// ParsePublicKeys reads the Ed25519 "PUBLIC KEY" blocks of a PEM file (a rotated key's file
// holds the current key and the previous ones).
func ParsePublicKeys(data []byte) ([]ed25519.PublicKey, error) {
	var out []ed25519.PublicKey
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "PUBLIC KEY" {
			continue
		}
		k, err := x509.ParsePKIXPublicKey(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrKey, err)
		}
		pub, ok := k.(ed25519.PublicKey)
		if !ok {
			return nil, fmt.Errorf("%w: a %T, want Ed25519", ErrKey, k)
		}
		out = append(out, pub)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no PUBLIC KEY block", ErrKey)
	}
	return out, nil
}

// keyring holds the keys derived from the current key material and from the previous ones
// (rotation: old records stay readable, old checkpoints checkable). It never holds a user's
// data key: those are in the Recorder's cache.
type keyring struct {
	sets  []*keySet // [0] is the current one
	aeads sync.Map  // purpose "\x00" tenant "\x00" set index -> cipher.AEAD
}

type keySet struct {
	material []byte
	sign     ed25519.PrivateKey
	pub      ed25519.PublicKey
	id       string
}

func newKeyring(current []byte, previous [][]byte) (*keyring, error) {
	kr := &keyring{}
	for i, m := range append([][]byte{current}, previous...) {
		if len(m) < MinKeySize {
			return nil, fmt.Errorf("%w: key %d has %d bytes, want at least %d", ErrKey, i, len(m), MinKeySize)
		}
		priv := ed25519.NewKeyFromSeed(derive(m, infoCheckpoint))
		pub := priv.Public().(ed25519.PublicKey)
		kr.sets = append(kr.sets, &keySet{material: m, sign: priv, pub: pub, id: keyID(pub)})
	}
	return kr, nil
}

func (kr *keyring) current() *keySet { return kr.sets[0] }

// publicKeys are the checkpoint keys of every key set, the current first.
func (kr *keyring) publicKeys() []ed25519.PublicKey {
	out := make([]ed25519.PublicKey, len(kr.sets))
	for i, s := range kr.sets {
		out[i] = s.pub
	}
	return out
}

// aead returns set i's AES-256-GCM for a tenant and purpose (infoTenant or infoEvidence), and
// the id of its key.
func (kr *keyring) aead(i int, info, tenant string) (cipher.AEAD, string) {
	name := fmt.Sprint(info, tenant, "\x00", i)
	if v, ok := kr.aeads.Load(name); ok {
		a := v.(*namedAEAD)
		return a.AEAD, a.id
	}
	k := derive(kr.sets[i].material, info+tenant)
	a := &namedAEAD{AEAD: newGCM(k), id: keyID(k)}
	kr.aeads.Store(name, a)
	return a.AEAD, a.id
}

type namedAEAD struct {
	cipher.AEAD
	id string
}

func newGCM(key []byte) cipher.AEAD {
	b, err := aes.NewCipher(key)
	if err != nil {
		panic(err) // keys here are 32 bytes
	}
	g, err := cipher.NewGCM(b)
	if err != nil {
		panic(err)
	}
	return g
}
