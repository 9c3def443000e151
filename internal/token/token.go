// Package token mints and verifies the engine's signed tokens: session tokens, which name a
// session and the device key it is bound to, and action tokens, which let the execute endpoint
// run exactly one confirmed tool call. Each kind is signed with a key of its own, derived from
// the engine's signing key for that purpose alone, so that no token of one kind ever verifies
// as another. An action token's SHA-256 ([Hash]) stands for it in the conversation record.
package token

import (
	"crypto/hkdf"
	"crypto/sha256"
)

// Purposes of the keys derived from the signing key. A purpose's label never changes: tokens
// signed before an upgrade keep verifying after it.
const (
	PurposeSession   = "engine session token v1"
	PurposeAction    = "engine action token v1"
	PurposeNonce     = "engine dpop nonce v1"
	PurposeRateLimit = "engine rate limit user v1"
	PurposeArguments = "engine action arguments v1"
)

// Derive returns the 32-byte key of purpose, derived from signingKey with HKDF-SHA256: the
// same on every replica that shares the signing key, and of no use to find it from.
func Derive(signingKey []byte, purpose string) ([]byte, error) {
	return hkdf.Key(sha256.New, signingKey, nil, purpose, 32)
}
