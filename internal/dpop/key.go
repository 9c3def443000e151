package dpop

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/base64"
	"errors"

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
