// Package passkey checks the passkeys that gate a session's actions in browsers: the
// registration of a session's gate credential, and each action's assertion of it.
package passkey

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/convengine/engine/internal/dpop"
	"github.com/convengine/engine/internal/jsonenc"
)

var b64url = base64.RawURLEncoding

// gateUser is the WebAuthn user of a session's gate credential. Its handle is the
// registration's challenge, which the app derives from its device key, so that a registration
// cannot be replayed for another device's session.
type gateUser struct {
	id          []byte
	credentials []webauthn.Credential
}

func (u *gateUser) WebAuthnID() []byte                         { return u.id }
func (u *gateUser) WebAuthnName() string                       { return "gate" }
func (u *gateUser) WebAuthnDisplayName() string                { return "gate" }
func (u *gateUser) WebAuthnCredentials() []webauthn.Credential { return u.credentials }

// Challenge is the challenge of a gate credential's registration for the session bound to
// the device key of thumbprint: base64url SHA-256 of "convengine gate credential", a NUL byte,
// and the thumbprint. It is also the credential's user handle.
func Challenge(thumbprint string) []byte {
	sum := sha256.Sum256([]byte("convengine gate credential\x00" + thumbprint))
	return sum[:]
}

// Register verifies, for the relying party rp (nil when the engine has none), the
// registration of a session's gate passkey (the PublicKeyCredential of
// navigator.credentials.create, in its JSON form) and returns the credential to keep. Its
// errors complete a sentence that names the field.
func Register(rp *webauthn.WebAuthn, raw json.RawMessage, deviceThumbprint string) (json.RawMessage, error) {
	if rp == nil {
		return nil, errors.New("is not accepted: this engine has no WebAuthn relying party (Config.WebAuthn)")
	}
	var reg struct {
		Response struct {
			ClientDataJSON string `json:"clientDataJSON"`
		} `json:"response"`
	}
	if json.Unmarshal(raw, &reg) == nil && repeatsAMember(reg.Response.ClientDataJSON) {
		return nil, errors.New("has a clientDataJSON that names a member twice")
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(raw)
	if err != nil {
		return nil, fmt.Errorf("is not a WebAuthn registration: %s", reason(err))
	}
	id := Challenge(deviceThumbprint)
	cred, err := rp.CreateCredential(&gateUser{id: id}, webauthn.SessionData{
		Challenge: b64url.EncodeToString(id), UserID: id, UserVerification: protocol.VerificationRequired,
		CredParams: []protocol.CredentialParameter{{Type: protocol.PublicKeyCredentialType, Algorithm: webauthncose.AlgES256}},
	}, parsed)
	if err != nil {
		return nil, fmt.Errorf("does not verify: %s", reason(err))
	}
	return json.Marshal(cred)
}

// Assertion is auth.webauthn: an assertion of navigator.credentials.get whose challenge is
// SHA-256 of the action token, every member base64url.
type Assertion struct {
	CredentialID      string `json:"credentialId"`
	ClientDataJSON    string `json:"clientDataJSON"`
	AuthenticatorData string `json:"authenticatorData"`
	Signature         string `json:"signature"`
	UserHandle        string `json:"userHandle,omitempty"`
}

// Verify checks, for the relying party rp, an assertion of the session's gate passkey for the
// action token: the challenge, the origin and relying party, user verification, the
// signature, and a signature counter that advanced (an authenticator without one, such as a
// synced passkey, reports 0 every time, which is accepted). It returns the credential with its new
// counter, to keep, and that counter.
func Verify(rp *webauthn.WebAuthn, stored json.RawMessage, deviceThumbprint string, a *Assertion, actionToken string) (json.RawMessage, uint32, error) {
	var cred webauthn.Credential
	if rp == nil || json.Unmarshal(stored, &cred) != nil {
		return nil, 0, errors.New("the session's passkey cannot be checked by this engine")
	}
	if repeatsAMember(a.ClientDataJSON) {
		return nil, 0, errors.New("auth.webauthn's clientDataJSON names a member twice")
	}
	body, _ := json.Marshal(map[string]any{
		"id": a.CredentialID, "rawId": a.CredentialID, "type": "public-key",
		"response": map[string]any{"clientDataJSON": a.ClientDataJSON, "authenticatorData": a.AuthenticatorData,
			"signature": a.Signature, "userHandle": a.UserHandle},
	})
	parsed, err := protocol.ParseCredentialRequestResponseBytes(body)
	if err != nil {
		return nil, 0, fmt.Errorf("auth.webauthn is not a WebAuthn assertion: %s", reason(err))
	}
	challenge := sha256.Sum256([]byte(actionToken))
	user := &gateUser{id: Challenge(deviceThumbprint), credentials: []webauthn.Credential{cred}}
	got, err := rp.ValidateLogin(user, webauthn.SessionData{
		Challenge: b64url.EncodeToString(challenge[:]), UserID: user.id,
		AllowedCredentialIDs: [][]byte{cred.ID}, UserVerification: protocol.VerificationRequired,
	}, parsed)
	switch {
	case err != nil:
		return nil, 0, fmt.Errorf("the passkey's assertion does not verify: %s", reason(err))
	case got.Authenticator.CloneWarning:
		return nil, 0, errors.New("the passkey's signature counter did not advance: a replayed assertion or a cloned authenticator")
	}
	out, err := json.Marshal(got)
	return out, got.Authenticator.SignCount, err
}

// reason is what the library says of a failure, for the client: its details, which name the
// check, never a key.
func reason(err error) string {
	var perr *protocol.Error
	if errors.As(err, &perr) && perr.Details != "" {
		if perr.DevInfo != "" {
			return perr.Details + " (" + perr.DevInfo + ")"
		}
		return perr.Details
	}
	return err.Error()
}

// PublicKey returns the public key of a session's gate passkey (its COSE key as an EC P-256
// JWK), the JWK's thumbprint and the credential id, base64url.
func PublicKey(stored json.RawMessage) (jwk json.RawMessage, thumbprint, credentialID string, err error) {
	var cred webauthn.Credential
	if err := json.Unmarshal(stored, &cred); err != nil {
		return nil, "", "", errors.New("the session's passkey is unreadable")
	}
	pub, err := webauthncose.ParsePublicKey(cred.PublicKey)
	if err != nil {
		return nil, "", "", errors.New("the passkey's public key is unreadable")
	}
	ec, ok := pub.(webauthncose.EC2PublicKeyData)
	if !ok || webauthncose.COSEEllipticCurve(ec.Curve) != webauthncose.P256 || len(ec.XCoord) != 32 || len(ec.YCoord) != 32 {
		return nil, "", "", errors.New("the passkey's public key is not an EC P-256 key")
	}
	jwk, _ = json.Marshal(map[string]string{"kty": "EC", "crv": "P-256",
		"x": b64url.EncodeToString(ec.XCoord), "y": b64url.EncodeToString(ec.YCoord)})
	key, err := dpop.ParseKey(jwk)
	if err != nil {
		return nil, "", "", fmt.Errorf("the passkey's public key %v", err)
	}
	return jwk, key.Thumbprint, b64url.EncodeToString(cred.ID), nil
}

// repeatsAMember reports whether a base64url clientDataJSON names a member twice: its
// challenge or origin could then read one way to the engine and another to the bank.
func repeatsAMember(clientDataJSON string) bool {
	raw, err := b64url.DecodeString(strings.TrimRight(clientDataJSON, "="))
	return err == nil && jsonenc.HasDuplicateMembers(raw)
}
