package engine

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// b64 is base64url without padding, rejecting encodings whose unused bits are not zero, so that
// every value has exactly one spelling.
var b64 = base64.RawURLEncoding.Strict()

// jwkPrivateMembers are the JWK members that carry private key material (RFC 7518 section 6).
var jwkPrivateMembers = []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

// deviceKey is a validated public EC P-256 key from a JWK: a session's device key or a DPoP
// proof's key.
type deviceKey struct {
	pub *ecdsa.PublicKey
	// thumbprint is the RFC 7638 SHA-256 thumbprint, base64url.
	thumbprint string
}

// parseDeviceJWK reads a public EC P-256 JWK: kty EC, crv P-256, x and y of 32 bytes each that
// name a point of the curve, no private member, alg absent or ES256. Errors say what is wrong
// in words a client developer can act on, and never repeat the input.
func parseDeviceJWK(raw json.RawMessage) (*deviceKey, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, errors.New("must be a JWK object")
	}
	for _, name := range jwkPrivateMembers {
		if _, ok := m[name]; ok {
			return nil, fmt.Errorf("holds the private member %q; send the public key only", name)
		}
	}
	str := func(name string) (string, bool, error) {
		v, ok := m[name]
		if !ok {
			return "", false, nil
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", true, fmt.Errorf("member %q must be a string", name)
		}
		return s, true, nil
	}
	kty, _, err := str("kty")
	if err != nil {
		return nil, err
	}
	if kty != "EC" {
		return nil, errors.New(`kty must be "EC"`)
	}
	crv, _, err := str("crv")
	if err != nil {
		return nil, err
	}
	if crv != "P-256" {
		return nil, errors.New(`crv must be "P-256"`)
	}
	if alg, ok, err := str("alg"); err != nil {
		return nil, err
	} else if ok && alg != "ES256" {
		return nil, errors.New(`alg must be "ES256" or absent`)
	}
	if use, ok, err := str("use"); err != nil {
		return nil, err
	} else if ok && use != "sig" {
		return nil, errors.New(`use must be "sig" or absent`)
	}
	point := make([]byte, 1, 65)
	point[0] = 4 // uncompressed
	for _, name := range []string{"x", "y"} {
		s, ok, err := str(name)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("member %q is missing", name)
		}
		c, err := b64.DecodeString(s)
		if err != nil || len(c) != 32 {
			return nil, fmt.Errorf("member %q must be 32 bytes in base64url without padding", name)
		}
		point = append(point, c...)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), point)
	if err != nil {
		return nil, errors.New("x and y are not a point of the P-256 curve")
	}
	return &deviceKey{pub: pub, thumbprint: ecThumbprint(point[1:33], point[33:])}, nil
}

// ecThumbprint returns the RFC 7638 thumbprint of the P-256 key with coordinates x and y.
func ecThumbprint(x, y []byte) string {
	return jwkThumbprint(map[string]string{
		"kty": "EC", "crv": "P-256", "x": b64.EncodeToString(x), "y": b64.EncodeToString(y),
	})
}

// jwkThumbprint returns the RFC 7638 SHA-256 thumbprint, base64url, of a JWK given by its
// required members: their JSON object with members sorted by name and no white space. The
// values of required members are plain ASCII, so they need no escaping.
func jwkThumbprint(required map[string]string) string {
	names := make([]string, 0, len(required))
	for k := range required {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + k + `":"` + required[k] + `"`)
	}
	b.WriteByte('}')
	sum := sha256.Sum256([]byte(b.String()))
	return b64.EncodeToString(sum[:])
}
