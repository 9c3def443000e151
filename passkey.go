package engine

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/convengine/engine/internal/dpop"
	"github.com/convengine/engine/internal/jsonenc"

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
// counter that advanced. It returns the credential with its new counter, to keep, and that
// counter.
func (e *Engine) verifyPasskey(stored json.RawMessage, deviceThumbprint string, a *passkeyAssertion, actionToken string) (json.RawMessage, uint32, error) {
	var cred webauthn.Credential
	if e.webauthn == nil || json.Unmarshal(stored, &cred) != nil {
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
		return nil, 0, fmt.Errorf("auth.webauthn is not a WebAuthn assertion: %s", webauthnReason(err))
	}
	challenge := sha256.Sum256([]byte(actionToken))
	user := &gateUser{id: gateChallenge(deviceThumbprint), credentials: []webauthn.Credential{cred}}
	got, err := e.webauthn.ValidateLogin(user, webauthn.SessionData{
		Challenge: b64url.EncodeToString(challenge[:]), UserID: user.id,
		AllowedCredentialIDs: [][]byte{cred.ID}, UserVerification: protocol.VerificationRequired,
	}, parsed)
	switch {
	case err != nil:
		return nil, 0, fmt.Errorf("the passkey's assertion does not verify: %s", webauthnReason(err))
	case got.Authenticator.CloneWarning:
		return nil, 0, errors.New("the passkey's signature counter did not advance: a replayed assertion or a cloned authenticator")
	}
	out, err := json.Marshal(got)
	return out, got.Authenticator.SignCount, err
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

// passkeyDevice is the device key of a session's gate passkey: its COSE public key as an EC
// P-256 JWK, with the JWK's thumbprint and the credential id.
func passkeyDevice(stored json.RawMessage) (*DeviceKey, error) {
	var cred webauthn.Credential
	if err := json.Unmarshal(stored, &cred); err != nil {
		return nil, errors.New("the session's passkey is unreadable")
	}
	pub, err := webauthncose.ParsePublicKey(cred.PublicKey)
	if err != nil {
		return nil, errors.New("the passkey's public key is unreadable")
	}
	ec, ok := pub.(webauthncose.EC2PublicKeyData)
	if !ok || webauthncose.COSEEllipticCurve(ec.Curve) != webauthncose.P256 || len(ec.XCoord) != 32 || len(ec.YCoord) != 32 {
		return nil, errors.New("the passkey's public key is not an EC P-256 key")
	}
	jwk, _ := json.Marshal(map[string]string{"kty": "EC", "crv": "P-256",
		"x": b64url.EncodeToString(ec.XCoord), "y": b64url.EncodeToString(ec.YCoord)})
	key, err := dpop.ParseKey(jwk)
	if err != nil {
		return nil, fmt.Errorf("the passkey's public key %v", err)
	}
	return &DeviceKey{Kind: DeviceKeyPasskey, PublicKey: jwk, Thumbprint: key.Thumbprint,
		CredentialID: b64url.EncodeToString(cred.ID)}, nil
}

// passkeyCounterPurpose names the claims of passkey signature counters in the ReplayStore.
const passkeyCounterPurpose = "passkey-counter:"

// claimPasskeyCounter takes the assertion's signature counter for the credential, once: two
// assertions that carry the same counter (a replay or a cloned authenticator racing the real
// one) cannot both run, even on two replicas at once, since the session's counter is read
// before either writes it. Authenticators that do not count (counter 0, as synced passkeys
// report) are left to the action token's single use.
func (e *Engine) claimPasskeyCounter(ctx context.Context, tenant, credentialID string, counter uint32, until time.Time) (bool, error) {
	if counter == 0 {
		return true, nil
	}
	return e.replay.Claim(ctx, passkeyCounterPurpose+tenant+":"+credentialID+":"+strconv.FormatUint(uint64(counter), 10), until)
}

// passkeyBindingLifetime is how long a passkey's credential id stays bound to its public key
// for a user: past it, the id may be registered with another key (the bank's enrolment, by
// public key, still decides).
const passkeyBindingLifetime = 90 * 24 * time.Hour

// bindPasskey binds, for the session's user, the credential id of its gate passkey to the
// passkey's public key, when the ReplayStore can bind: a registration that names an id already
// bound to another key is refused, so that nothing downstream can take one passkey for another
// by its id.
func (e *Engine) bindPasskey(ctx context.Context, req *request, s *Session, device *DeviceKey) *Problem {
	b, ok := e.replay.(Binder)
	if !ok {
		return nil
	}
	key := "passkey-credential:" + req.Tenant.Key + ":" + s.User + ":" + device.CredentialID
	bound, err := b.Bind(ctx, key, device.Thumbprint, e.now().Add(passkeyBindingLifetime))
	switch {
	case err != nil:
		e.log.ErrorContext(ctx, "binding a passkey failed", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		return newProblem(http.StatusServiceUnavailable, CodeStoreUnavailable, "the passkey could not be recorded; try again")
	case bound != device.Thumbprint:
		return invalidField("gate_credential", "names a credential id already registered with another public key for this user")
	}
	return nil
}

// repeatsAMember reports whether a base64url clientDataJSON names a member twice: its
// challenge or origin could then read one way to the engine and another to the bank.
func repeatsAMember(clientDataJSON string) bool {
	raw, err := b64url.DecodeString(strings.TrimRight(clientDataJSON, "="))
	return err == nil && jsonenc.HasDuplicateMembers(raw)
}
