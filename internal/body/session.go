package body

import (
	"encoding/json"
	"fmt"

	"github.com/convengine/engine/internal/jsonenc"
)

// MaxSessionMetadata bounds the metadata of a session, in bytes of compact JSON.
const MaxSessionMetadata = 8 << 10

// Session is the body of POST /api/v1/create-session.
type Session struct {
	PublicKey json.RawMessage `json:"public_key"`
	// GateKey is the public half of a key the app holds behind the device's biometric gate,
	// which signs action proofs; without it, the device key does.
	GateKey json.RawMessage `json:"gate_key"`
	// GateCredential is, instead, a passkey registered for the session (the JSON of
	// navigator.credentials.create's PublicKeyCredential).
	GateCredential json.RawMessage `json:"gate_credential"`
	Metadata       json.RawMessage `json:"metadata"`
}

// CheckMetadata applies the rules of metadata: a JSON object of at most MaxSessionMetadata
// bytes once compact. It returns the compact object, nil for none.
func (b *Session) CheckMetadata() (json.RawMessage, *FieldError) {
	if len(b.Metadata) == 0 || string(b.Metadata) == "null" {
		return nil, nil
	}
	if !jsonenc.IsObject(b.Metadata) {
		return nil, bad("metadata", "must be a JSON object")
	}
	m := jsonenc.Compact(b.Metadata)
	if len(m) > MaxSessionMetadata {
		return nil, bad("metadata", fmt.Sprintf("is larger than %d bytes", MaxSessionMetadata))
	}
	return m, nil
}

// SessionCreated is the 201 body of create-session.
type SessionCreated struct {
	SessionID    string          `json:"session_id"`
	CreatedAt    string          `json:"created_at"`
	SessionToken string          `json:"session_token"`
	ExpiresAt    string          `json:"expires_at"`
	Theme        json.RawMessage `json:"theme"`
}
