package engine

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	"github.com/go-webauthn/webauthn/webauthn"
)

// WebAuthnOptions name the relying party of the passkeys that gate actions in browsers: a
// session may register a passkey (create-session's gate_credential) whose assertion, user
// verification required, proves each action (auth.webauthn).
type WebAuthnOptions struct {
	// RPID is the relying party id: the domain of the pages, without scheme or port, such as
	// "bank.example" ("localhost" for pages served on this machine; never an IP address).
	RPID string
	// Origins are the origins of the pages, such as "https://bank.example".
	Origins []string
	// DisplayName names the relying party; default "Assistant".
	DisplayName string
}

// newWebAuthn returns the relying party of opts, nil without options.
func newWebAuthn(opts *WebAuthnOptions) (*webauthn.WebAuthn, error) {
	if opts == nil {
		return nil, nil
	}
	name := opts.DisplayName
	if name == "" {
		name = "Assistant"
	}
	w, err := webauthn.New(&webauthn.Config{RPID: opts.RPID, RPDisplayName: name, RPOrigins: opts.Origins})
	if err != nil {
		return nil, fmt.Errorf("%w: WebAuthn: %v", ErrConfig, err)
	}
	return w, nil
}

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

// gateChallenge is the challenge of a gate credential's registration for the session bound to
// the device key of thumbprint: base64url SHA-256 of "convengine gate credential", a NUL byte,
// and the thumbprint. It is also the credential's user handle.
func gateChallenge(thumbprint string) []byte {
	sum := sha256.Sum256([]byte("convengine gate credential\x00" + thumbprint))
	return sum[:]
}

var b64url = base64.RawURLEncoding

// registerGate verifies the registration of a session's gate passkey (the PublicKeyCredential
// of navigator.credentials.create, in its JSON form) and returns the credential to keep.
func (e *Engine) registerGate(raw json.RawMessage, deviceThumbprint string) (json.RawMessage, error) {
	if e.webauthn == nil {
		return nil, errors.New("is not accepted: this engine has no WebAuthn relying party (Config.WebAuthn)")
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(raw)
	if err != nil {
		return nil, fmt.Errorf("is not a WebAuthn registration: %s", webauthnReason(err))
	}
	id := gateChallenge(deviceThumbprint)
	cred, err := e.webauthn.CreateCredential(&gateUser{id: id}, webauthn.SessionData{
		Challenge: b64url.EncodeToString(id), UserID: id, UserVerification: protocol.VerificationRequired,
		CredParams: []protocol.CredentialParameter{{Type: protocol.PublicKeyCredentialType, Algorithm: webauthncose.AlgES256}},
	}, parsed)
	if err != nil {
		return nil, fmt.Errorf("does not verify: %s", webauthnReason(err))
	}
	return json.Marshal(cred)
}

// passkeyAssertion is auth.webauthn: an assertion of navigator.credentials.get whose challenge
// is SHA-256 of the action token, every member base64url.
type passkeyAssertion struct {
	CredentialID      string `json:"credentialId"`
	ClientDataJSON    string `json:"clientDataJSON"`
	AuthenticatorData string `json:"authenticatorData"`
	Signature         string `json:"signature"`
	UserHandle        string `json:"userHandle,omitempty"`
}

// verifyPasskey checks an assertion of the session's gate passkey for the action token: the
// challenge, the origin and relying party, user verification, the signature, and a signature
// counter that advanced. It returns the credential with its new counter, to keep.
func (e *Engine) verifyPasskey(stored json.RawMessage, deviceThumbprint string, a *passkeyAssertion, actionToken string) (json.RawMessage, error) {
	var cred webauthn.Credential
	if e.webauthn == nil || json.Unmarshal(stored, &cred) != nil {
		return nil, errors.New("the session's passkey cannot be checked by this engine")
	}
	body, _ := json.Marshal(map[string]any{
		"id": a.CredentialID, "rawId": a.CredentialID, "type": "public-key",
		"response": map[string]any{"clientDataJSON": a.ClientDataJSON, "authenticatorData": a.AuthenticatorData,
			"signature": a.Signature, "userHandle": a.UserHandle},
	})
	parsed, err := protocol.ParseCredentialRequestResponseBytes(body)
	if err != nil {
		return nil, fmt.Errorf("auth.webauthn is not a WebAuthn assertion: %s", webauthnReason(err))
	}
	challenge := sha256.Sum256([]byte(actionToken))
	user := &gateUser{id: gateChallenge(deviceThumbprint), credentials: []webauthn.Credential{cred}}
	got, err := e.webauthn.ValidateLogin(user, webauthn.SessionData{
		Challenge: b64url.EncodeToString(challenge[:]), UserID: user.id,
		AllowedCredentialIDs: [][]byte{cred.ID}, UserVerification: protocol.VerificationRequired,
	}, parsed)
	switch {
	case err != nil:
		return nil, fmt.Errorf("the passkey's assertion does not verify: %s", webauthnReason(err))
	case got.Authenticator.CloneWarning:
		return nil, errors.New("the passkey's signature counter did not advance: a replayed assertion or a cloned authenticator")
	}
	return json.Marshal(got)
}

// webauthnReason is what the library says of a failure, for the client: its details, which
// name the check, never a key.
func webauthnReason(err error) string {
	var perr *protocol.Error
	if errors.As(err, &perr) && perr.Details != "" {
		if perr.DevInfo != "" {
			return perr.Details + " (" + perr.DevInfo + ")"
		}
		return perr.Details
	}
	return err.Error()
}
