package client

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/convengine/engine/widgets"
)

// Auth is the report that the device gate passed before an action runs. With a bound session
// the client adds the device's proof of the action, signed by the session's gate key
// ([SessionOptions.Gate], else its device key).
type Auth struct {
	// Method is [AuthFaceID], [AuthTouchID] or [AuthPasscode].
	Method string `json:"method"`
	// VerifiedAt is when the gate passed.
	VerifiedAt time.Time `json:"verifiedAt"`
}

// The methods of a device gate.
const (
	AuthFaceID   = "faceid"
	AuthTouchID  = "touchid"
	AuthPasscode = "passcode"
)

// ExecuteContext is the optional context of an execute request.
type ExecuteContext struct {
	SessionID string `json:"sessionId,omitempty"`
	// Locale is the language of the reply.
	Locale string `json:"locale,omitempty"`
}

// ExecuteResult is the engine's answer to a confirmed action: a terminal card and a line to
// speak.
type ExecuteResult struct {
	Done  Card   `json:"done"`
	Speak string `json:"speak"`
}

// Card is the terminal card of an action.
type Card struct {
	// Type is "success", or "error" when the tenant's backend declined.
	Type  string `json:"type"`
	Title string `json:"title"`
	Line1 string `json:"line1"`
	Line2 string `json:"line2"`
}

// Execute runs the action of a confirm widget after the user passed the device gate: exec is
// the widget's Execute, unchanged.
func (c *Client) Execute(ctx context.Context, exec widgets.Execute, auth Auth, ectx *ExecuteContext) (*ExecuteResult, error) {
	verifiedAt, err := json.Marshal(auth.VerifiedAt)
	if err != nil {
		return nil, fmt.Errorf("client: auth.VerifiedAt: %w", err)
	}
	type authBody struct {
		Method     string          `json:"method"`
		VerifiedAt json.RawMessage `json:"verifiedAt"`
		Proof      string          `json:"proof,omitempty"`
	}
	a := authBody{Method: auth.Method, VerifiedAt: verifiedAt}
	if s := c.Session(); s != nil && s.gate != nil {
		if a.Proof, err = s.gate.actionProof(exec.Token, auth.Method, verifiedAt, c.now()); err != nil {
			return nil, fmt.Errorf("client: signing the device proof: %w", err)
		}
	}
	body := struct {
		Execute widgets.Execute `json:"execute"`
		Auth    authBody        `json:"auth"`
		Context *ExecuteContext `json:"context,omitempty"`
	}{exec, a, ectx}
	resp, err := c.postJSON(ctx, PathExecute, body, "application/json")
	if err != nil {
		return nil, err
	}
	var res ExecuteResult
	if err := decodeJSON(resp, 1<<20, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
