// Package passkey is the WebAuthn relying party of the engine's passkeys, built on
// github.com/go-webauthn/webauthn: it verifies the registration of a session's gate passkey
// (create-session's gate_credential) and each action's assertion of it (execute's
// auth.webauthn), as [engine.Passkeys]. A host whose browser clients gate actions with
// passkeys plugs it in with one line:
//
//	cfg.Passkeys, err = passkey.New(passkey.Options{RPID: "bank.example", Origins: []string{"https://bank.example"}})
//
// It is a package of its own so that hosts without passkeys do not compile the WebAuthn
// library and what it brings (go-tpm, golang-jwt, cbor, msgp …). The reference server
// (cmd/engine) uses it when a relying party is configured.
package passkey

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/dpop"
)

var b64url = base64.RawURLEncoding

// Options name the relying party of the passkeys.
type Options struct {
	// RPID is the relying party id: the domain of the pages, without scheme or port, such as
	// "bank.example" ("localhost" for pages served on this machine; never an IP address).
	RPID string
	// Origins are the origins of the pages, such as "https://bank.example".
	Origins []string
	// DisplayName names the relying party; default "Assistant".
	DisplayName string
}

// RelyingParty verifies passkeys for the relying party of its [Options]: it implements
// [engine.Passkeys]. Its methods may be called from many goroutines at once; they block on
// nothing but the CPU.
type RelyingParty struct {
	rp *webauthn.WebAuthn
}

var _ engine.Passkeys = (*RelyingParty)(nil)

// New returns the relying party of opts, or an error that says which option does not hold.
func New(opts Options) (*RelyingParty, error) {
	name := opts.DisplayName
	if name == "" {
		name = "Assistant"
	}
	w, err := webauthn.New(&webauthn.Config{RPID: opts.RPID, RPDisplayName: name, RPOrigins: opts.Origins})
	if err != nil {
		return nil, fmt.Errorf("passkey: the relying party: %v", err)
	}
	return &RelyingParty{rp: w}, nil
}

// gateUser is the WebAuthn user of a session's gate credential. Its handle is the
// registration's challenge, which the engine derives from the session's device key, so that a
// registration cannot be replayed for another device's session.
type gateUser struct {
	id          []byte
	credentials []webauthn.Credential
}

func (u *gateUser) WebAuthnID() []byte                         { return u.id }
func (u *gateUser) WebAuthnName() string                       { return "gate" }
func (u *gateUser) WebAuthnDisplayName() string                { return "gate" }
func (u *gateUser) WebAuthnCredentials() []webauthn.Credential { return u.credentials }

// Register verifies the registration of a session's gate passkey (the PublicKeyCredential of
// navigator.credentials.create, in its JSON form) whose challenge and user handle are
// challenge: ES256 (COSE -7, P-256) or RS256 (COSE -257, a modulus of at least 2048 bits), as
// the web client offers them, user verification required. It returns the credential to keep.
// Its errors complete a sentence that names the field.
func (p *RelyingParty) Register(_ context.Context, raw json.RawMessage, challenge []byte) (json.RawMessage, error) {
	if p == nil {
		return nil, errors.New("is not accepted: this engine has no WebAuthn relying party")
	}
	if dpop.RegistrationRepeatsAMember(raw) {
		return nil, errors.New("has a clientDataJSON that names a member twice")
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(raw)
	if err != nil {
		return nil, fmt.Errorf("is not a WebAuthn registration: %s", reason(err))
	}
	cred, err := p.rp.CreateCredential(&gateUser{id: challenge}, webauthn.SessionData{
		Challenge: b64url.EncodeToString(challenge), UserID: challenge, UserVerification: protocol.VerificationRequired,
		CredParams: []protocol.CredentialParameter{
			{Type: protocol.PublicKeyCredentialType, Algorithm: webauthncose.AlgES256},
			// Authenticators that make RSA keys only (TPM-backed Windows Hello among them)
			// answer an offer of ES256 alone with no passkey.
			{Type: protocol.PublicKeyCredentialType, Algorithm: webauthncose.AlgRS256},
		},
	}, parsed)
	if err != nil {
		return nil, fmt.Errorf("does not verify: %s", reason(err))
	}
	out, err := json.Marshal(cred)
	if err != nil {
		return nil, err
	}
	// The key must also be one the engine and the bank can name (and an RSA key long enough),
	// or the session would be refused at its first action rather than now.
	if _, _, err := p.PublicKey(out); err != nil {
		return nil, fmt.Errorf("is not accepted: %w", err)
	}
	return out, nil
}

// Verify checks an assertion of the stored credential, the passkey of the user handle user,
// over challenge: the challenge, the origin and relying party, user verification, the
// signature, and a signature counter that advanced (an authenticator without one, such as a
// synced passkey, reports 0 every time, which is accepted). It returns the credential with its
// new counter, to keep, and that counter.
func (p *RelyingParty) Verify(_ context.Context, stored json.RawMessage, user, challenge []byte, a *engine.PasskeyAssertion) (json.RawMessage, uint32, error) {
	var cred webauthn.Credential
	if p == nil || json.Unmarshal(stored, &cred) != nil {
		return nil, 0, errors.New("the session's passkey cannot be checked by this engine")
	}
	if dpop.ClientDataRepeatsAMember(a.ClientDataJSON) {
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
	got, err := p.rp.ValidateLogin(&gateUser{id: user, credentials: []webauthn.Credential{cred}}, webauthn.SessionData{
		Challenge: b64url.EncodeToString(challenge), UserID: user,
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

// PublicKey returns the public key of a stored credential as a JWK (an ES256 passkey's COSE
// key as an EC P-256 JWK, an RS256 passkey's as an RSA JWK of n and e without leading zero
// octets) and its credential id, base64url.
func (p *RelyingParty) PublicKey(stored json.RawMessage) (jwk json.RawMessage, credentialID string, err error) {
	var cred webauthn.Credential
	if err := json.Unmarshal(stored, &cred); err != nil {
		return nil, "", errors.New("the session's passkey is unreadable")
	}
	pub, err := webauthncose.ParsePublicKey(cred.PublicKey)
	if err != nil {
		return nil, "", errors.New("the passkey's public key is unreadable")
	}
	switch k := pub.(type) {
	case webauthncose.EC2PublicKeyData:
		if webauthncose.COSEAlgorithmIdentifier(k.Algorithm) != webauthncose.AlgES256 ||
			webauthncose.COSEEllipticCurve(k.Curve) != webauthncose.P256 || len(k.XCoord) != 32 || len(k.YCoord) != 32 {
			return nil, "", errors.New("the passkey's public key is not an ES256 key on P-256")
		}
		jwk, _ = json.Marshal(map[string]string{"kty": "EC", "crv": "P-256",
			"x": b64url.EncodeToString(k.XCoord), "y": b64url.EncodeToString(k.YCoord)})
	case webauthncose.RSAPublicKeyData:
		if webauthncose.COSEAlgorithmIdentifier(k.Algorithm) != webauthncose.AlgRS256 {
			return nil, "", errors.New("the passkey's RSA key is not an RS256 key")
		}
		// n and e without leading zero octets (RFC 7518 section 6.3.1), as the thumbprint
		// (RFC 7638) spells them.
		n, e := new(big.Int).SetBytes(k.Modulus), new(big.Int).SetBytes(k.Exponent)
		jwk, _ = json.Marshal(map[string]string{"kty": "RSA",
			"n": b64url.EncodeToString(n.Bytes()), "e": b64url.EncodeToString(e.Bytes())})
	default:
		return nil, "", errors.New("the passkey's public key is neither an ES256 nor an RS256 key")
	}
	// The rules of a passkey's key (a P-256 point, an RSA modulus of 2048 bits or more, an odd
	// exponent) are the engine's, which reads the key again with them.
	if _, err := dpop.ParsePasskeyKey(jwk); err != nil {
		return nil, "", fmt.Errorf("the passkey's public key %v", err)
	}
	return jwk, b64url.EncodeToString(cred.ID), nil
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
