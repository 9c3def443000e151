package demobank

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gowebpki/jcs"
)

// The headers of a device-proved action call, as the engine sends them.
const (
	headerProof     = "Engine-Action-Proof"
	headerProofType = "Engine-Action-Proof-Type"
	headerDeviceKey = "Engine-Device-Key"
	headerToken     = "Engine-Action-Token"
)

// Proof types of Engine-Action-Proof-Type.
const (
	proofTypeJWS      = "action-proof+jwt"
	proofTypeWebAuthn = "webauthn"
)

// proofRefusal is why the bank refused a transfer's proof: a code and a message for the user.
type proofRefusal struct{ code, message string }

func refuseProof(code, message string) *proofRefusal { return &proofRefusal{code, message} }

// verifyProof checks, with nothing but what the request carries and the devices the bank
// enrolled, that the user's own device approved this very transfer:
//
//  1. the key named in Engine-Device-Key is one the bank enrolled for this user (compared by
//     the thumbprint the bank computes, and verified with the key the bank stored);
//  2. the action token in Engine-Action-Token is for this transfer: tool "transfer", its
//     "args" the SHA-256 of the RFC 8785 canonical form of the body, its "jti" the
//     Idempotency-Key, not expired;
//  3. the proof signs that token: a compact JWS (ES256, typ action-proof+jwt) whose "ath" is
//     SHA-256 of the token, recent; or a WebAuthn assertion whose challenge is SHA-256 of the
//     token, of the bank's relying party and origins, with user verification and a signature
//     counter that advanced.
//
// The engine checks the same things before it calls: the bank checks them again because it
// is the bank's money, and the engine's word is not a proof. The bank's lock is held (the
// passkey counter is compared and set under it).
func (b *Bank) verifyProof(u *user, h http.Header, body []byte, idemKey string, now time.Time) *proofRefusal {
	const enrol = "Transfers need the approval of a device you enrolled with Demo Bank. Enrol this device with a one-time code, then confirm the transfer on it."
	proof, typ, keyB64, tok := h.Get(headerProof), h.Get(headerProofType), h.Get(headerDeviceKey), h.Get(headerToken)
	if proof == "" || keyB64 == "" || tok == "" {
		return refuseProof("device_proof_required", enrol)
	}
	rawKey, err := b64.DecodeString(keyB64)
	if err != nil {
		return refuseProof("invalid_device_proof", "The device key sent with the transfer is malformed. Nothing was sent.")
	}
	presented, err := parseJWK(rawKey)
	if err != nil {
		return refuseProof("invalid_device_proof", "The device key sent with the transfer is malformed. Nothing was sent.")
	}
	dev, ok := u.devices[presented.thumbprint]
	if !ok {
		return refuseProof("device_not_enrolled", "This device is not enrolled for your account. Enrol it with a one-time code from Demo Bank, then confirm again.")
	}
	if r := checkActionToken(tok, body, idemKey, now); r != nil {
		return r
	}
	sum := sha256.Sum256([]byte(tok))
	want := b64.EncodeToString(sum[:])
	switch typ {
	case proofTypeJWS:
		return b.verifyJWS(dev, proof, want, now)
	case proofTypeWebAuthn:
		return b.verifyAssertion(dev, proof, want)
	}
	return refuseProof("invalid_device_proof", "The transfer's proof is of an unknown type. Nothing was sent.")
}

// checkActionToken reads the claims of the engine's action token (the bank cannot check its
// signature, which is the engine's; the device's signature over its hash is what counts) and
// checks that they name this transfer.
func checkActionToken(tok string, body []byte, idemKey string, now time.Time) *proofRefusal {
	bad := refuseProof("invalid_device_proof", "The approval does not match this transfer. Nothing was sent; ask again and confirm on your device.")
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return bad
	}
	payload, err := b64.DecodeString(parts[1])
	if err != nil {
		return bad
	}
	var c struct {
		Tool string `json:"tool"`
		Args string `json:"args"`
		JTI  string `json:"jti"`
		Exp  int64  `json:"exp"`
	}
	if json.Unmarshal(payload, &c) != nil {
		return bad
	}
	canon, err := jcs.Transform(body)
	if err != nil {
		return bad
	}
	digest := sha256.Sum256(canon)
	switch {
	case c.Tool != "transfer", c.Args != b64.EncodeToString(digest[:]), c.JTI == "", c.JTI != idemKey:
		return bad
	case !now.Before(time.Unix(c.Exp, 0)):
		return refuseProof("approval_expired", "The approval expired. Ask again and confirm on your device.")
	}
	return nil
}

// verifyJWS checks a key proof: header {"typ":"action-proof+jwt","alg":"ES256"}, payload with
// ath and iat, signature by the enrolled key.
func (b *Bank) verifyJWS(dev *device, proof, ath string, now time.Time) *proofRefusal {
	bad := refuseProof("invalid_device_proof", "The approval from your device does not verify. Nothing was sent.")
	parts := strings.Split(proof, ".")
	if len(parts) != 3 {
		return bad
	}
	hdr, err1 := b64.DecodeString(parts[0])
	payload, err2 := b64.DecodeString(parts[1])
	sig, err3 := b64.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || len(sig) != 64 {
		return bad
	}
	var h map[string]any
	var p struct {
		ATH string  `json:"ath"`
		IAT float64 `json:"iat"`
	}
	if json.Unmarshal(hdr, &h) != nil || json.Unmarshal(payload, &p) != nil ||
		h["alg"] != "ES256" || h["typ"] != proofTypeJWS || h["crit"] != nil {
		return bad
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(dev.key, digest[:], r, s) || p.ATH != ath {
		return bad
	}
	iat := time.Unix(int64(p.IAT), 0)
	if now.Sub(iat) > b.opts.MaxProofAge || iat.Sub(now) > 30*time.Second {
		return refuseProof("approval_expired", "The approval from your device is too old. Confirm again on your device.")
	}
	return nil
}

// assertion is a passkey's assertion as the engine forwards it: base64url of this JSON.
type assertion struct {
	CredentialID      string `json:"credentialId"`
	ClientDataJSON    string `json:"clientDataJSON"`
	AuthenticatorData string `json:"authenticatorData"`
	Signature         string `json:"signature"`
}

// verifyAssertion checks a passkey's assertion (WebAuthn Level 3, section 7.2) against the
// enrolled public key: the challenge is the token's hash, the client data is a get of the
// bank's origins, the authenticator data is of the bank's relying party with user presence
// and verification, the signature verifies, and the signature counter advanced.
func (b *Bank) verifyAssertion(dev *device, proof, challenge string) *proofRefusal {
	bad := refuseProof("invalid_device_proof", "The passkey's approval does not verify. Nothing was sent.")
	raw, err := b64.DecodeString(proof)
	if err != nil {
		return bad
	}
	var a assertion
	if json.Unmarshal(raw, &a) != nil {
		return bad
	}
	cdj, err1 := decodeB64(a.ClientDataJSON)
	authData, err2 := decodeB64(a.AuthenticatorData)
	sig, err3 := decodeB64(a.Signature)
	if err1 != nil || err2 != nil || err3 != nil || len(authData) < 37 {
		return bad
	}
	var cd struct {
		Type, Challenge, Origin string
	}
	if json.Unmarshal(cdj, &cd) != nil || cd.Type != "webauthn.get" || cd.Challenge != challenge ||
		!slices.Contains(b.opts.PasskeyOrigins, cd.Origin) {
		return bad
	}
	rpHash := sha256.Sum256([]byte(b.opts.PasskeyRPID))
	const userPresent, userVerified = 0x01, 0x04
	flags := authData[32]
	if b.opts.PasskeyRPID == "" || !bytes.Equal(authData[:32], rpHash[:]) || flags&userPresent == 0 || flags&userVerified == 0 {
		return bad
	}
	cdHash := sha256.Sum256(cdj)
	signed := sha256.Sum256(append(bytes.Clone(authData), cdHash[:]...))
	if !ecdsa.VerifyASN1(dev.key, signed[:], sig) {
		return bad
	}
	// The counter: an authenticator that counts must count up, or it is a copy.
	counter := binary.BigEndian.Uint32(authData[33:37])
	if (counter != 0 || dev.counter != 0) && counter <= dev.counter {
		return refuseProof("invalid_device_proof", "The passkey's approval was used before. Nothing was sent; confirm again.")
	}
	dev.counter = counter
	return nil
}

// decodeB64 reads base64url with or without padding, as browsers' encoders differ.
func decodeB64(s string) ([]byte, error) { return b64.DecodeString(strings.TrimRight(s, "=")) }
