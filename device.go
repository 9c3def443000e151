package engine

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/convengine/engine/internal/dpop"
)

// Kinds of [DeviceKey].
const (
	// DeviceKeyGate is a gate_key: a key the app holds behind the device's biometric gate.
	DeviceKeyGate = "gate_key"
	// DeviceKeyDevice is the device key of a bound session that has no gate key, which then
	// signs its action proofs.
	DeviceKeyDevice = "device_key"
	// DeviceKeyPasskey is a passkey registered as a session's gate (gate_credential).
	DeviceKeyPasskey = "passkey"
)

// DeviceKey is the key that proves a session's actions, as the tenant's backend is asked about
// it: always by its public key, never by an id the device chose.
type DeviceKey struct {
	// Kind is DeviceKeyGate, DeviceKeyDevice or DeviceKeyPasskey.
	Kind string `json:"kind"`
	// PublicKey is the public key as an EC P-256 JWK, or for an RS256 passkey an RSA JWK of n
	// and e (a passkey's COSE key, converted).
	PublicKey json.RawMessage `json:"public_key"`
	// Thumbprint is the RFC 7638 SHA-256 thumbprint of PublicKey, base64url.
	Thumbprint string `json:"thumbprint"`
	// CredentialID is a passkey's credential id, base64url: for the bank's records only, since
	// an authenticator chooses it and anybody can claim it.
	CredentialID string `json:"credential_id,omitempty"`
}

// A DeviceChecker is a [Toolset] that can ask the tenant's backend whether a device key is
// enrolled for the user of env (the bank's own enrolment, out of band: its login, a one-time
// code). The engine asks at create-session, for a session whose key proves actions, and again
// before each action that a device proved. A key that is not enrolled is refused with 403
// device_not_enrolled where the tenant requires proofs, and its proofs are refused everywhere.
// CheckDevice is called from many goroutines at once; it returns [ErrNoDeviceCheck] for a
// tenant that has no device check.
//
// The check never replaces the backend's own verification of each action's proof: a bank
// verifies the forwarded proof against the key it enrolled at transfer time (docs/actions.md).
type DeviceChecker interface {
	CheckDevice(ctx context.Context, env *ToolEnv, key *DeviceKey) (enrolled bool, err error)
}

// ErrNoDeviceCheck is returned by a [DeviceChecker] for a tenant that has no device check.
var ErrNoDeviceCheck = errors.New("engine: the tenant has no device check")

// CheckDevice asks the tenant's Toolset, when it is a [DeviceChecker].
func (f ToolsetByTenant) CheckDevice(ctx context.Context, env *ToolEnv, key *DeviceKey) (bool, error) {
	if dc, ok := f(env.Tenant).(DeviceChecker); ok {
		return dc.CheckDevice(ctx, env, key)
	}
	return false, ErrNoDeviceCheck
}

// Proof types of [ActionProof].
const (
	ProofTypeJWS      = "action-proof+jwt"
	ProofTypeWebAuthn = "webauthn"
)

// ActionProof is the device's proof of a confirmed action, forwarded whole to the action's
// backend so that the backend verifies the chain itself: the key is one it enrolled for the
// user, the signature verifies with it, the signed hash is that of Token, and Token's argument
// digest is that of the arguments it received.
type ActionProof struct {
	// Type is ProofTypeJWS (Proof is the compact JWS of auth.proof) or ProofTypeWebAuthn
	// (Proof is base64url of the JSON of auth.webauthn: credentialId, clientDataJSON,
	// authenticatorData, signature, userHandle).
	Type  string
	Proof string
	// Key is the public key the proof verifies with, an EC P-256 JWK (an RSA JWK for an RS256
	// passkey).
	Key DeviceKey
	// Token is the action token the proof signs (its hash is the JWS's ath, or the passkey
	// assertion's challenge).
	Token string
}

// headers sets the proof's headers on h.
func (p *ActionProof) headers(h http.Header) {
	h.Set(HeaderActionProof, p.Proof)
	h.Set(HeaderActionProofType, p.Type)
	h.Set(HeaderDeviceKey, b64url.EncodeToString(p.Key.PublicKey))
	h.Set(HeaderActionToken, p.Token)
}

// checkEnrolled asks the tenant's backend whether key is enrolled for the request's user. It
// answers nil when it is, or when the tenant's Toolset has no device check.
func (e *Engine) checkEnrolled(ctx context.Context, req *request, key *DeviceKey) *Problem {
	dc, ok := e.toolset.(DeviceChecker)
	if !ok {
		return nil
	}
	timeout := req.Tenant.Limits.ToolTimeout.or(defaultToolLimit)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	enrolled, err := dc.CheckDevice(cctx, req.toolEnv(), key)
	switch {
	case errors.Is(err, ErrNoDeviceCheck):
		return nil
	case err != nil:
		e.log.WarnContext(ctx, "device check failed", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		return newProblem(http.StatusBadGateway, CodeToolUnavailable, "the service could not say whether this device is enrolled; nothing was done, try again")
	case !enrolled:
		e.log.InfoContext(ctx, "device not enrolled", "requestId", req.ID, "tenant", req.Tenant.Key, "kind", key.Kind)
		return newProblem(http.StatusForbidden, CodeDeviceNotEnrolled,
			"this device is not enrolled for the user's account: enrol it with the service first (its app, or a one-time code), then create the session again")
	}
	return nil
}

// PasskeyAssertion is auth.webauthn: an assertion of navigator.credentials.get whose
// challenge is SHA-256 of the action token, every member base64url.
type PasskeyAssertion struct {
	CredentialID      string `json:"credentialId"`
	ClientDataJSON    string `json:"clientDataJSON"`
	AuthenticatorData string `json:"authenticatorData"`
	Signature         string `json:"signature"`
	UserHandle        string `json:"userHandle,omitempty"`
}

// Passkeys is a WebAuthn relying party: it verifies the passkeys that gate a session's
// actions in browsers, as [Config.Passkeys]. The package passkey of this module implements it;
// a host that uses no passkeys leaves it nil, and compiles no WebAuthn library.
//
// The engine keeps the checks that are its own: it derives the challenges (from the session's
// device key, and from the action token), refuses a clientDataJSON that names a member twice,
// claims each signature counter once in the [ReplayStore], and binds a credential id to its
// public key. A Passkeys checks the rest: the client data's type, challenge and origin, the
// relying party, user presence and verification, the attestation, the signature, and a
// signature counter that advanced.
//
// Credentials are the implementation's own JSON, kept in [Session.GateCredential]. The
// methods are called from many goroutines at once. Their errors are said to the client: they
// name the check that failed, never a key.
type Passkeys interface {
	// Register verifies the registration of a session's gate passkey (the PublicKeyCredential
	// of navigator.credentials.create, in its JSON form), whose challenge and user handle are
	// both challenge, user verification required, and returns the credential to keep. Its
	// errors complete a sentence that starts with the field's name, gate_credential: "is not a
	// WebAuthn registration: …".
	Register(ctx context.Context, registration json.RawMessage, challenge []byte) (credential json.RawMessage, err error)
	// Verify checks an assertion of credential, the passkey of the user handle user, over
	// challenge, user verification required, and returns the credential with its new
	// signature counter, to keep, and that counter (0 from an authenticator that counts
	// nothing, as synced passkeys are). Its errors are whole sentences.
	Verify(ctx context.Context, credential json.RawMessage, user, challenge []byte, a *PasskeyAssertion) (updated json.RawMessage, counter uint32, err error)
	// PublicKey returns the public key of credential as a JWK, an ES256 passkey's as an EC
	// P-256 JWK and an RS256 passkey's as an RSA JWK (kty, n and e, without leading zero
	// octets; a modulus of at least 2048 bits), and its credential id, base64url. Its errors
	// are whole sentences.
	PublicKey(credential json.RawMessage) (jwk json.RawMessage, credentialID string, err error)
}

var b64url = base64.RawURLEncoding

// errPasskeysOff is said of a session's passkey to an engine without [Config.Passkeys].
var errPasskeysOff = errors.New("the session's passkey cannot be checked by this engine")

// registerPasskey verifies the registration of the session's gate passkey, for the device key
// of thumbprint; its errors complete a sentence that names gate_credential.
func (e *Engine) registerPasskey(ctx context.Context, raw json.RawMessage, thumbprint string) (json.RawMessage, error) {
	if e.passkeys == nil {
		return nil, errors.New("is not accepted: this engine has no WebAuthn relying party (Config.Passkeys)")
	}
	if dpop.RegistrationRepeatsAMember(raw) {
		return nil, errors.New("has a clientDataJSON that names a member twice")
	}
	return e.passkeys.Register(ctx, raw, dpop.GateChallenge(thumbprint))
}

// verifyPasskey checks an assertion of the session's gate passkey over the action token, and
// returns the credential with its new counter, and that counter.
func (e *Engine) verifyPasskey(ctx context.Context, s *Session, a *PasskeyAssertion, actionToken string) (json.RawMessage, uint32, error) {
	if e.passkeys == nil {
		return nil, 0, errPasskeysOff
	}
	if dpop.ClientDataRepeatsAMember(a.ClientDataJSON) {
		return nil, 0, errors.New("auth.webauthn's clientDataJSON names a member twice")
	}
	return e.passkeys.Verify(ctx, s.GateCredential, dpop.GateChallenge(s.KeyThumbprint), dpop.ActionChallenge(actionToken), a)
}

// passkeyDevice is the device key of a session's gate passkey.
func (e *Engine) passkeyDevice(stored json.RawMessage) (*DeviceKey, error) {
	if e.passkeys == nil {
		return nil, errPasskeysOff
	}
	jwk, id, err := e.passkeys.PublicKey(stored)
	if err != nil {
		return nil, err
	}
	// A passkey's key may be RSA (RS256), which no other key of a session may be.
	key, err := dpop.ParsePasskeyKey(jwk)
	if err != nil {
		return nil, fmt.Errorf("the passkey's public key %v", err)
	}
	return &DeviceKey{Kind: DeviceKeyPasskey, PublicKey: jwk, Thumbprint: key.Thumbprint, CredentialID: id}, nil
}

// claimPasskeyCounter takes the assertion's signature counter for the credential, once: two
// assertions that carry the same counter (a replay or a cloned authenticator racing the real
// one) cannot both run, even on two replicas at once, since the session's counter is read
// before either writes it. Authenticators that do not count (counter 0, as synced passkeys
// report) are left to the action token's single use.
func (e *Engine) claimPasskeyCounter(ctx context.Context, tenant, credentialID string, counter uint32, until time.Time) (bool, error) {
	if counter == 0 {
		return true, nil
	}
	return e.replay.Claim(ctx, dpop.CounterKey(tenant, credentialID, counter), until)
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
	bound, err := b.Bind(ctx, dpop.CredentialKey(req.Tenant.Key, s.User, device.CredentialID), device.Thumbprint, e.now().Add(passkeyBindingLifetime))
	switch {
	case err != nil:
		e.log.ErrorContext(ctx, "binding a passkey failed", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		return newProblem(http.StatusServiceUnavailable, CodeStoreUnavailable, "the passkey could not be recorded; try again")
	case bound != device.Thumbprint:
		return invalidField("gate_credential", "names a credential id already registered with another public key for this user")
	}
	return nil
}
