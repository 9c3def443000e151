package token

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// SessionClaims are the claims of a session token: the session, its tenant, when it was issued
// and expires (Unix seconds), and for a bound session the thumbprint of its device key.
type SessionClaims struct {
	SID string `json:"sid"`
	TID string `json:"tid"`
	IAT int64  `json:"iat"`
	EXP int64  `json:"exp"`
	Cnf *Cnf   `json:"cnf,omitempty"`
}

// Cnf is the confirmation claim of a bound session (RFC 7800, RFC 9449 section 6).
type Cnf struct {
	JKT string `json:"jkt"`
}

// Key is one key of the session tokens' ring: its kid, and an ed25519.PrivateKey, an
// *ecdsa.PrivateKey on P-256, a secret of at least 32 bytes as a []byte, or, for a retired key
// that only verifies, an ed25519.PublicKey or *ecdsa.PublicKey.
type Key struct {
	ID  string
	Key any
}

// Sessions signs session tokens with the newest key of its ring and verifies them with any
// of its keys. It is safe for concurrent use.
type Sessions struct {
	signer jose.Signer
	keys   map[string]verifyKey
}

type verifyKey struct {
	alg jose.SignatureAlgorithm
	key any
}

var sessionAlgs = []jose.SignatureAlgorithm{jose.HS256, jose.ES256, jose.EdDSA}

// NewSessions builds the ring of keys, newest first, or, when there are none, of one HS256 key
// derived from the engine's signing key for session tokens.
func NewSessions(keys []Key, signingKey []byte) (*Sessions, error) {
	if len(keys) == 0 {
		derived, err := Derive(signingKey, PurposeSession)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(derived)
		keys = []Key{{ID: "hs-" + base64.RawURLEncoding.EncodeToString(sum[:6]), Key: derived}}
	}
	ring := &Sessions{keys: make(map[string]verifyKey, len(keys))}
	for i, k := range keys {
		if !validKeyID(k.ID) {
			return nil, fmt.Errorf("key %d: ID must be 1 to 64 letters, digits or ._~-", i)
		}
		if _, dup := ring.keys[k.ID]; dup {
			return nil, fmt.Errorf("key %d: ID %q is used twice", i, k.ID)
		}
		var (
			vk      verifyKey
			signKey any
		)
		switch key := k.Key.(type) {
		case []byte:
			if len(key) < 32 {
				return nil, fmt.Errorf("key %d: an HS256 secret needs at least 32 bytes", i)
			}
			vk, signKey = verifyKey{jose.HS256, bytes.Clone(key)}, bytes.Clone(key)
		case ed25519.PrivateKey:
			if len(key) != ed25519.PrivateKeySize {
				return nil, fmt.Errorf("key %d: not an Ed25519 private key", i)
			}
			vk, signKey = verifyKey{jose.EdDSA, key.Public()}, key
		case ed25519.PublicKey:
			if len(key) != ed25519.PublicKeySize {
				return nil, fmt.Errorf("key %d: not an Ed25519 public key", i)
			}
			vk = verifyKey{jose.EdDSA, key}
		case *ecdsa.PrivateKey:
			if key == nil || key.Curve != elliptic.P256() {
				return nil, fmt.Errorf("key %d: an ECDSA key must be on P-256", i)
			}
			vk, signKey = verifyKey{jose.ES256, &key.PublicKey}, key
		case *ecdsa.PublicKey:
			if key == nil || key.Curve != elliptic.P256() {
				return nil, fmt.Errorf("key %d: an ECDSA key must be on P-256", i)
			}
			vk = verifyKey{jose.ES256, key}
		default:
			return nil, fmt.Errorf("key %d: unsupported key type %T", i, k.Key)
		}
		ring.keys[k.ID] = vk
		if i > 0 {
			continue
		}
		if signKey == nil {
			return nil, errors.New("key 0: the first key signs new tokens and must be a private key or a secret")
		}
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: vk.alg, Key: signKey},
			(&jose.SignerOptions{}).WithType("JWT").WithHeader(jose.HeaderKey("kid"), k.ID))
		if err != nil {
			return nil, fmt.Errorf("key 0: %w", err)
		}
		ring.signer = s
	}
	return ring, nil
}

func validKeyID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('a' <= c && c <= 'z') && !('A' <= c && c <= 'Z') && !('0' <= c && c <= '9') && !strings.ContainsRune("-._~", rune(c)) {
			return false
		}
	}
	return true
}

// Sign returns the compact JWS of c.
func (k *Sessions) Sign(c *SessionClaims) (string, error) {
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	jws, err := k.signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

// Verify checks token's signature and expiry and returns its claims, or the reason it is not
// valid, in words that never repeat the token.
func (k *Sessions) Verify(token string, now time.Time) (*SessionClaims, string) {
	jws, err := jose.ParseSignedCompact(token, sessionAlgs)
	if err != nil || len(jws.Signatures) != 1 {
		return nil, "the session token is not a token this engine issued"
	}
	h := jws.Signatures[0].Header
	key, ok := k.keys[h.KeyID]
	if !ok {
		return nil, "the session token was signed with a key this engine no longer has"
	}
	if h.Algorithm != string(key.alg) {
		return nil, "the session token is not a token this engine issued"
	}
	payload, err := jws.Verify(key.key)
	if err != nil {
		return nil, "the session token's signature does not verify"
	}
	var c SessionClaims
	if err := json.Unmarshal(payload, &c); err != nil || c.SID == "" || c.TID == "" || c.EXP == 0 || c.IAT == 0 {
		return nil, "the session token is not a token this engine issued"
	}
	if !now.Before(time.Unix(c.EXP, 0)) {
		return nil, "the session has expired"
	}
	return &c, ""
}
