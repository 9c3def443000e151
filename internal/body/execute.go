package body

import (
	"encoding/json"
	"time"

	"github.com/convengine/engine/internal/dpop"
	"github.com/convengine/engine/internal/locale"
)

// Execute is the body of POST /engine/execute. A is the type of a passkey's assertion
// (auth.webauthn), which the root's API names.
type Execute[A any] struct {
	Execute *ExecuteCall    `json:"execute"`
	Auth    *ExecuteAuth[A] `json:"auth"`
	Context *ExecuteContext `json:"context"`
}

// ExecuteCall is the execute object of the confirm widget.
type ExecuteCall struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Token     string          `json:"token"`
}

// ExecuteAuth is how the device verified the user.
type ExecuteAuth[A any] struct {
	Method     string          `json:"method"`
	VerifiedAt json.RawMessage `json:"verifiedAt"`
	// Proof is the device's proof of this action, signed by the session's gate key.
	Proof *string `json:"proof"`
	// WebAuthn is, instead, an assertion of the session's gate passkey.
	WebAuthn *A `json:"webauthn"`
}

// ExecuteContext is what the client says of the execute's session and language.
type ExecuteContext struct {
	SessionID string `json:"sessionId"`
	Locale    string `json:"locale"`
}

// authMethods are the device gates that may have approved an action.
var authMethods = map[string]bool{"faceid": true, "touchid": true, "passcode": true}

// MissingExecute is the refusal of an execute without its execute object.
func MissingExecute() *FieldError {
	return bad("execute", "is required: the execute object of the confirm widget")
}

// CheckAuth applies the rules of auth.method and auth.verifiedAt, in order, and returns when
// the device check passed; how long ago it may have passed is the tenant's to say.
func (b *Execute[A]) CheckAuth() (time.Time, *FieldError) {
	if b.Auth == nil || !authMethods[b.Auth.Method] {
		return time.Time{}, bad("auth.method", `must be "faceid", "touchid" or "passcode"`)
	}
	verified, err := dpop.ParseVerifiedAt(b.Auth.VerifiedAt)
	if err != nil {
		return time.Time{}, bad("auth.verifiedAt", err.Error())
	}
	return verified, nil
}

// Locale is the language context.locale asks the card in, "" for the tenant's.
func (b *Execute[A]) Locale() (string, *FieldError) {
	if b.Context == nil || b.Context.Locale == "" {
		return "", nil
	}
	if !locale.Valid(b.Context.Locale) {
		return "", bad("context.locale", "must be a BCP 47 language tag")
	}
	return b.Context.Locale, nil
}
