package dpop

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/go-jose/go-jose/v4"
)

// b64 is base64url without padding, rejecting encodings whose unused bits are not zero, so that
// every value has one spelling.
var b64 = base64.RawURLEncoding.Strict()

// Key is a validated public EC P-256 key from a JWK: a session's device key or a proof's key.
type Key struct {
	Public *ecdsa.PublicKey
	// Thumbprint is the key's RFC 7638 SHA-256 thumbprint, base64url.
	Thumbprint string
}

// ParseKey reads a public EC P-256 JWK: kty EC, crv P-256, x and y of 32 bytes each that name a
// point of the curve, no private member, alg absent or ES256, use absent or sig.
func ParseKey(raw []byte) (*Key, error) {
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(raw); err != nil {
		return nil, errors.New("must be a public EC P-256 JWK: kty EC, crv P-256, and x and y of 32 bytes in base64url that name a point of the curve")
	}
	return checkKey(&jwk)
}

// checkKey requires a public P-256 key meant for ES256 signatures.
func checkKey(jwk *jose.JSONWebKey) (*Key, error) {
	if !jwk.IsPublic() {
		return nil, errors.New("holds private key material; send the public key only")
	}
	pub, ok := jwk.Key.(*ecdsa.PublicKey)
	switch {
	case !ok:
		return nil, errors.New(`kty must be "EC"`)
	case pub.Curve != elliptic.P256():
		return nil, errors.New(`crv must be "P-256"`)
	case jwk.Algorithm != "" && jwk.Algorithm != string(jose.ES256):
		return nil, errors.New(`alg must be "ES256" or absent`)
	case jwk.Use != "" && jwk.Use != "sig":
		return nil, errors.New(`use must be "sig" or absent`)
	}
	sum, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, errors.New("has no thumbprint")
	}
	return &Key{Public: pub, Thumbprint: b64.EncodeToString(sum)}, nil
}

// MinRSABits is the smallest modulus of a passkey's RSA key that [ParsePasskeyKey] accepts.
const MinRSABits = 2048

// PasskeyKey is a validated public key of a passkey, as a WebAuthn relying party converts it
// from COSE.
type PasskeyKey struct {
	// Public is an *ecdsa.PublicKey on P-256 (an ES256 passkey) or an *rsa.PublicKey (RS256).
	Public crypto.PublicKey
	// Thumbprint is the key's RFC 7638 SHA-256 thumbprint, base64url.
	Thumbprint string
}

// ParsePasskeyKey reads the public key of a passkey: an EC P-256 JWK as [ParseKey] reads it,
// or the RSA JWK of an RS256 passkey, a modulus of at least [MinRSABits] bits and an odd
// exponent, n and e without leading zero octets (RFC 7518 section 6.3.1), no private member,
// alg absent or RS256, use absent or sig.
//
// Only passkeys may be RSA, since WebAuthn authenticators that make RSA keys only exist: the
// keys of DPoP proofs, sessions and gate keys are read with [ParseKey], which refuses RSA, as
// the ES256 that proofs are signed with requires.
func ParsePasskeyKey(raw []byte) (*PasskeyKey, error) {
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(raw); err != nil {
		return nil, errors.New("must be a public JWK: EC P-256 (ES256) or RSA (RS256) with n and e in base64url")
	}
	switch jwk.Key.(type) {
	case *rsa.PublicKey, *rsa.PrivateKey:
		return checkRSAKey(&jwk, raw)
	}
	key, err := checkKey(&jwk)
	if err != nil {
		return nil, err
	}
	return &PasskeyKey{Public: key.Public, Thumbprint: key.Thumbprint}, nil
}

// checkRSAKey requires a public RSA key meant for RS256 signatures, whose n and e in raw are
// spelled as the thumbprint spells them.
func checkRSAKey(jwk *jose.JSONWebKey, raw []byte) (*PasskeyKey, error) {
	if !jwk.IsPublic() {
		return nil, errors.New("holds private key material; send the public key only")
	}
	pub := jwk.Key.(*rsa.PublicKey)
	var members struct{ N, E string }
	_ = json.Unmarshal(raw, &members) // go-jose read the same JSON
	switch {
	case members.N != b64.EncodeToString(pub.N.Bytes()) || members.E != b64.EncodeToString(big.NewInt(int64(pub.E)).Bytes()):
		return nil, errors.New("must have n and e in base64url without leading zero octets")
	case pub.N.BitLen() < MinRSABits:
		return nil, fmt.Errorf("is an RSA key of %d bits, fewer than %d", pub.N.BitLen(), MinRSABits)
	case pub.E < 3 || pub.E > 1<<31-1 || pub.E%2 == 0:
		return nil, errors.New("has an unusable RSA exponent: it must be odd, at least 3")
	case jwk.Algorithm != "" && jwk.Algorithm != string(jose.RS256):
		return nil, errors.New(`alg must be "RS256" or absent`)
	case jwk.Use != "" && jwk.Use != "sig":
		return nil, errors.New(`use must be "sig" or absent`)
	}
	sum, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, errors.New("has no thumbprint")
	}
	return &PasskeyKey{Public: pub, Thumbprint: b64.EncodeToString(sum)}, nil
}
