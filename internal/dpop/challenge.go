package dpop

import (
	"crypto/sha256"
	"strconv"
)

// GateChallenge is the challenge of a gate passkey's registration for the session bound to the
// device key of thumbprint: SHA-256 of "convengine gate credential", a NUL byte, and the
// thumbprint. It is also the credential's user handle, so that a registration cannot be
// replayed for another device's session, nor an assertion made for one.
func GateChallenge(thumbprint string) []byte {
	sum := sha256.Sum256([]byte("convengine gate credential\x00" + thumbprint))
	return sum[:]
}

// ActionChallenge is the challenge of a passkey's assertion of an action: SHA-256 of its token.
func ActionChallenge(actionToken string) []byte {
	sum := sha256.Sum256([]byte(actionToken))
	return sum[:]
}

// CounterKey names, in a replay store, the claim of a passkey's signature counter, which two
// assertions (a replay, or a cloned authenticator racing the real one) cannot both take.
func CounterKey(tenant, credentialID string, counter uint32) string {
	return "passkey-counter:" + tenant + ":" + credentialID + ":" + strconv.FormatUint(uint64(counter), 10)
}

// CredentialKey names, in a replay store, the binding of a user's passkey credential id to its
// public key.
func CredentialKey(tenant, user, credentialID string) string {
	return "passkey-credential:" + tenant + ":" + user + ":" + credentialID
}
