package record

import (
	"encoding/json"

	"github.com/convengine/engine"
	"github.com/convengine/engine/widgets"
)

// TurnContent is a turn entry's personal content (sealed under the user's data key): what the
// user said or typed and what they were told, under the tenant's privacy policy as the model
// and the user saw it.
type TurnContent struct {
	Mode       engine.Mode         `json:"mode"`
	Locale     string              `json:"locale"`
	Disclosure string              `json:"disclosure,omitempty"`
	Input      string              `json:"input"`
	Audio      *engine.HeardAudio  `json:"audio,omitempty"`
	Tools      []engine.ToolRecord `json:"tools,omitempty"`
	Spec       widgets.Spec        `json:"spec"`
	Error      *engine.TurnError   `json:"error,omitempty"`
}

// HandoffContent is a handoff entry's personal content (sealed under the user's data key): one
// event of a conversation handed to a person, as [engine.RecordedHandoff] gives it.
type HandoffContent struct {
	Event   string `json:"event"`
	Handoff string `json:"handoff"`
	Person  string `json:"person,omitempty"`
	Text    string `json:"text,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// ActionEvidence is an action entry's evidence (sealed under the tenant's evidence key, kept
// after the user's erasure): what the user approved and how their device proved it. It holds
// the action token's hash, never the token.
type ActionEvidence struct {
	Tool        string          `json:"tool"`
	Arguments   json.RawMessage `json:"arguments,omitempty"`
	Confirm     widgets.Confirm `json:"confirm"`
	TokenID     string          `json:"tokenId"`
	TokenSHA256 string          `json:"tokenSha256"`
	Claims      json.RawMessage `json:"claims,omitempty"`
	Method      string          `json:"method,omitempty"`
	VerifiedAt  json.RawMessage `json:"verifiedAt,omitempty"`
	Proof       *ProofEvidence  `json:"proof,omitempty"`
}

// ProofEvidence is a device's proof of an action, verbatim, with the key it verifies with.
type ProofEvidence struct {
	Type         string          `json:"type"`
	Proof        string          `json:"proof"`
	KeyKind      string          `json:"keyKind,omitempty"`
	Key          json.RawMessage `json:"key,omitempty"`
	Thumbprint   string          `json:"thumbprint,omitempty"`
	CredentialID string          `json:"credentialId,omitempty"`
}

// OutcomeEvidence is an outcome entry's evidence: how the action of entry Action ended.
type OutcomeEvidence struct {
	Action  string                `json:"action"`
	Outcome string                `json:"outcome"`
	Result  string                `json:"result,omitempty"`
	Reply   *engine.ExecuteResult `json:"reply,omitempty"`
}

func turnContent(r *engine.RecordedTurn) ([]byte, error) {
	return json.Marshal(TurnContent{Mode: r.Mode, Locale: r.Locale, Disclosure: r.Disclosure, Input: r.Input, Audio: r.Audio,
		Tools: r.Tools, Spec: r.Spec, Error: r.Error})
}

func actionEvidence(r *engine.RecordedAction) ([]byte, error) {
	ev := ActionEvidence{Tool: r.Tool, Arguments: r.Arguments, Confirm: r.Confirm, TokenID: r.TokenID, TokenSHA256: r.TokenSHA256,
		Claims: r.Claims, Method: r.Method, VerifiedAt: r.VerifiedAt}
	if p := r.Proof; p != nil {
		// p.Token is the action token itself, whose sealed arguments are real values: its hash
		// (TokenSHA256) is what the record keeps.
		ev.Proof = &ProofEvidence{Type: p.Type, Proof: p.Proof, KeyKind: p.Key.Kind, Key: p.Key.PublicKey,
			Thumbprint: p.Key.Thumbprint, CredentialID: p.Key.CredentialID}
	}
	return json.Marshal(ev)
}
