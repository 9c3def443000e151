package demobank

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
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

// ProofError is why a forwarded proof does not hold: a code and a message for the user.
type ProofError struct{ Code, Message string }

func (e *ProofError) Error() string { return e.Code + ": " + e.Message }

func refuseProof(code, message string) *ProofError { return &ProofError{code, message} }

// Verifier checks the device proof the engine forwards with an action, as a bank does, with
// nothing but the request and the key it enrolled: no engine code, and no trust in the engine.
type Verifier struct {
	// RPID and Origins are the relying party id and page origins of the passkeys accepted.
	RPID    string
	Origins []string
	// MaxAge is how old a key proof's iat may be (default 2 minutes).
	MaxAge time.Duration
}

// Forwarded is what a device-proved action call carries: the request's headers and body.
type Forwarded struct {
	Header http.Header
	Body   []byte
}

// PresentedKey returns the RFC 7638 thumbprint of the public key named in Engine-Device-Key,
// which the bank computes itself, to find the device it enrolled with that key.
func (f *Forwarded) PresentedKey() (string, error) {
	raw, err := b64.DecodeString(f.Header.Get(headerDeviceKey))
	if err != nil {
		return "", refuseProof("invalid_device_proof", "The device key sent with the transfer is malformed. Nothing was sent.")
	}
	d, err := parseJWK(raw)
	if err != nil {
		return "", refuseProof("invalid_device_proof", "The device key sent with the transfer is malformed. Nothing was sent.")
	}
	return d.thumbprint, nil
}

// Verify checks that the device whose enrolled public key is key approved this very action:
//
//  1. the action token in Engine-Action-Token is for this transfer: tool "transfer", its
//     "args" the SHA-256 of the RFC 8785 canonical form of the body, its "jti" the
//     Idempotency-Key, not expired;
//  2. the proof in Engine-Action-Proof signs that token: a compact JWS (ES256, typ
//     action-proof+jwt) whose "ath" is SHA-256 of the token, recent; or a WebAuthn assertion
//     whose challenge is SHA-256 of the token, of the bank's relying party and origins, with
//     user presence and verification;
//  3. the signature verifies with key, the key the bank enrolled (found by the thumbprint of
//     [Forwarded.PresentedKey]), never with the key the request carries.
//
// lastCounter is the passkey's signature counter the bank accepted last; Verify returns the
// new one, which the bank stores (compare and set under its own lock). The refusal is a
// [*ProofError]. key is an *ecdsa.PublicKey on P-256, or the *rsa.PublicKey of an RS256 passkey
// (which signs assertions only).
func (v *Verifier) Verify(f *Forwarded, key crypto.PublicKey, lastCounter uint32, now time.Time) (uint32, error) {
	proof, typ, tok := f.Header.Get(headerProof), f.Header.Get(headerProofType), f.Header.Get(headerToken)
	if proof == "" || tok == "" {
		return 0, refuseProof("device_proof_required", proofRequired)
	}
	if err := checkActionToken(tok, f.Body, f.Header.Get("Idempotency-Key"), now); err != nil {
		return 0, err
	}
	sum := sha256.Sum256([]byte(tok))
	want := b64.EncodeToString(sum[:])
	switch typ {
	case proofTypeJWS:
		return lastCounter, v.verifyJWS(key, proof, want, now)
	case proofTypeWebAuthn:
		return v.verifyAssertion(key, proof, want, lastCounter)
	}
	return 0, refuseProof("invalid_device_proof", "The transfer's proof is of an unknown type. Nothing was sent.")
}

const proofRequired = "Transfers need the approval of a device you enrolled with Demo Bank. Enrol this device with a one-time code, then confirm the transfer on it."

// verifyProof checks the transfer's proof against the devices the bank enrolled for u. The
// engine checks the same things before it calls: the bank checks them again because it is the
// bank's money, and the engine's word is not a proof. The bank's lock is held.
func (b *Bank) verifyProof(u *user, h http.Header, body []byte, now time.Time) *ProofError {
	f := &Forwarded{Header: h, Body: body}
	if h.Get(headerProof) == "" || h.Get(headerDeviceKey) == "" || h.Get(headerToken) == "" {
		return refuseProof("device_proof_required", proofRequired)
	}
	thumbprint, err := f.PresentedKey()
	if err != nil {
		return err.(*ProofError)
	}
	dev, ok := u.devices[thumbprint]
	if !ok {
		return refuseProof("device_not_enrolled", "This device is not enrolled for your account. Enrol it with a one-time code from Demo Bank, then confirm again.")
	}
	v := &Verifier{RPID: b.opts.PasskeyRPID, Origins: b.opts.PasskeyOrigins, MaxAge: b.opts.MaxProofAge}
	counter, err := v.Verify(f, dev.key, dev.counter, now)
	if err != nil {
		return err.(*ProofError)
	}
	dev.counter = counter
	return nil
}

// checkActionToken reads the claims of the engine's action token (the bank cannot check its
// signature, which is the engine's; the device's signature over its hash is what counts) and
// checks that they name this transfer.
func checkActionToken(tok string, body []byte, idemKey string, now time.Time) error {
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
func (v *Verifier) verifyJWS(pub crypto.PublicKey, proof, ath string, now time.Time) error {
	bad := refuseProof("invalid_device_proof", "The approval from your device does not verify. Nothing was sent.")
	key, ok := pub.(*ecdsa.PublicKey)
	if !ok {
		return bad
	}
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
	if !ecdsa.Verify(key, digest[:], r, s) || p.ATH != ath {
		return bad
	}
	iat := time.Unix(int64(p.IAT), 0)
	maxAge := v.MaxAge
	if maxAge <= 0 {
		maxAge = defaultMaxProofAge
	}
	if now.Sub(iat) > maxAge || iat.Sub(now) > 30*time.Second {
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
func (v *Verifier) verifyAssertion(key crypto.PublicKey, proof, challenge string, lastCounter uint32) (uint32, error) {
	bad := refuseProof("invalid_device_proof", "The passkey's approval does not verify. Nothing was sent.")
	raw, err := b64.DecodeString(proof)
	if err != nil {
		return 0, bad
	}
	var a assertion
	if json.Unmarshal(raw, &a) != nil {
		return 0, bad
	}
	cdj, err1 := decodeB64(a.ClientDataJSON)
	authData, err2 := decodeB64(a.AuthenticatorData)
	sig, err3 := decodeB64(a.Signature)
	if err1 != nil || err2 != nil || err3 != nil || len(authData) < 37 {
		return 0, bad
	}
	var cd struct {
		Type, Challenge, Origin string
	}
	if json.Unmarshal(cdj, &cd) != nil || cd.Type != "webauthn.get" || cd.Challenge != challenge ||
		!slices.Contains(v.Origins, cd.Origin) {
		return 0, bad
	}
	rpHash := sha256.Sum256([]byte(v.RPID))
	const userPresent, userVerified = 0x01, 0x04
	flags := authData[32]
	if v.RPID == "" || !bytes.Equal(authData[:32], rpHash[:]) || flags&userPresent == 0 || flags&userVerified == 0 {
		return 0, bad
	}
	cdHash := sha256.Sum256(cdj)
	signed := sha256.Sum256(append(bytes.Clone(authData), cdHash[:]...))
	// ES256 signs with ECDSA (ASN.1), RS256 with RSASSA-PKCS1-v1_5, both over SHA-256.
	switch k := key.(type) {
	case *ecdsa.PublicKey:
		if !ecdsa.VerifyASN1(k, signed[:], sig) {
			return 0, bad
		}
	case *rsa.PublicKey:
		if rsa.VerifyPKCS1v15(k, crypto.SHA256, signed[:], sig) != nil {
			return 0, bad
		}
	default:
		return 0, bad
	}
	// The counter: an authenticator that counts must count up, or it is a copy.
	counter := binary.BigEndian.Uint32(authData[33:37])
	if (counter != 0 || lastCounter != 0) && counter <= lastCounter {
		return 0, refuseProof("invalid_device_proof", "The passkey's approval was used before. Nothing was sent; confirm again.")
	}
	return counter, nil
}

// decodeB64 reads base64url with or without padding, as browsers' encoders differ.
func decodeB64(s string) ([]byte, error) { return b64.DecodeString(strings.TrimRight(s, "=")) }
