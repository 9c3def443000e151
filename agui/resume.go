package agui

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/widgets"
)

// interruptPrefix starts the id of a confirm's interrupt; the rest is its execute object as
// unpadded base64url JSON.
const interruptPrefix = "confirm."

func interruptID(x widgets.Execute) string {
	data, _ := json.Marshal(x)
	return interruptPrefix + base64.RawURLEncoding.EncodeToString(data)
}

// executeOf returns the execute object an interrupt id carries.
func executeOf(id string) (widgets.Execute, bool) {
	var x widgets.Execute
	rest, ok := strings.CutPrefix(id, interruptPrefix)
	if !ok {
		return x, false
	}
	data, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || json.Unmarshal(data, &x) != nil || x.Tool == "" || x.Token == "" {
		return x, false
	}
	return x, true
}

// resumeSchema is the responseSchema of a confirm's interrupt: the payload of a resolved
// resume, whose auth is the auth object of POST /engine/execute.
var resumeSchema = map[string]any{
	"type":     "object",
	"required": []string{"auth"},
	"properties": map[string]any{
		"auth": map[string]any{
			"type":     "object",
			"required": []string{"method", "verifiedAt"},
			"properties": map[string]any{
				"method":     map[string]any{"enum": []string{"faceid", "touchid", "passcode"}},
				"verifiedAt": map[string]any{"type": []string{"string", "number"}, "description": "RFC 3339 time, or milliseconds since the epoch"},
				"proof":      map[string]any{"type": "string", "description": "the device's action proof, a JWS"},
				"webauthn":   map[string]any{"type": "object", "description": "the assertion of the session's gate passkey"},
			},
		},
	},
}

// answer is a checked resume entry.
type answer struct {
	execute widgets.Execute
	auth    *engine.ExecuteInput // nil: cancelled
}

// answers checks the resume entries of in, before the run starts.
func (in *runInput) answers() ([]answer, *engine.Problem) {
	out := make([]answer, 0, len(in.Resume))
	for i, e := range in.Resume {
		field := "resume[" + itoa(i) + "]"
		x, ok := executeOf(e.InterruptID)
		if !ok {
			return nil, invalid(field+".interruptId", "is not the id of an interrupt this handler sent")
		}
		a := answer{execute: x}
		if e.Status == "resolved" {
			var p *engine.Problem
			if a.auth, p = authOf(e.Payload, field+".payload.auth"); p != nil {
				return nil, p
			}
			a.auth.Execute = x
			a.auth.Locale = in.locale()
		}
		out = append(out, a)
	}
	return out, nil
}

// authOf reads the auth object of a resolved resume's payload.
func authOf(payload json.RawMessage, field string) (*engine.ExecuteInput, *engine.Problem) {
	var body struct {
		Auth *struct {
			Method     string          `json:"method"`
			VerifiedAt json.RawMessage `json:"verifiedAt"`
			Proof      string          `json:"proof"`
			WebAuthn   json.RawMessage `json:"webauthn"`
		} `json:"auth"`
	}
	if len(payload) == 0 || json.Unmarshal(payload, &body) != nil || body.Auth == nil {
		return nil, invalid(field, "is required: how the device verified the user, as the execute endpoint's auth")
	}
	at, ok := verifiedAt(body.Auth.VerifiedAt)
	if !ok {
		return nil, invalid(field+".verifiedAt", "must be an RFC 3339 time or milliseconds since the epoch")
	}
	in := &engine.ExecuteInput{Method: body.Auth.Method, VerifiedAt: at, Proof: body.Auth.Proof}
	if in.Proof != "" {
		// The proof signs verifiedAt as the client wrote it.
		in.VerifiedAtJSON = body.Auth.VerifiedAt
	}
	if len(body.Auth.WebAuthn) > 0 && string(body.Auth.WebAuthn) != "null" {
		in.WebAuthn = body.Auth.WebAuthn
	}
	return in, nil
}

// verifiedAt reads an RFC 3339 string or a number since the epoch: milliseconds, or seconds
// below 1e11 as the execute endpoint reads them.
func verifiedAt(raw json.RawMessage) (time.Time, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		t, err := time.Parse(time.RFC3339Nano, s)
		return t, err == nil
	}
	var n float64
	if json.Unmarshal(raw, &n) != nil || n <= 0 || n > 1e15 || n != math.Trunc(n) {
		return time.Time{}, false
	}
	if n < 1e11 { // seconds, as the execute endpoint reads them
		return time.Unix(int64(n), 0), true
	}
	return time.UnixMilli(int64(n)), true
}

// resume runs the resolved answers of in through the engine's execute, in order, as one run:
// each action's card as a CUSTOM "done" event and its speech as a text message. A cancelled
// answer runs nothing. The first action the engine refuses ends the run with RUN_ERROR and its
// code, and so does one that ran before (action_replayed): a resume answers an interrupt once.
func (h *handler) resume(w http.ResponseWriter, r *http.Request, caller *engine.Caller, in *runInput) {
	answers, p := in.answers()
	if p != nil {
		p.RequestID = caller.RequestID
		engine.WriteProblem(w, p)
		return
	}
	s := newStream(w, *in.ThreadID, *in.RunID)
	if !s.runStarted(nil) {
		return
	}
	var last json.RawMessage
	for _, a := range answers {
		if a.auth == nil {
			continue
		}
		res, err := h.eng.Execute(r.Context(), caller, a.auth)
		if err != nil {
			var p *engine.Problem
			if errors.As(err, &p) {
				s.failed(p.Code, p.Detail)
			} else {
				s.failed(engine.CodeInternal, "the action failed")
			}
			return
		}
		if res.Replayed {
			// The ActionStore's word, so on any replica: this interrupt was answered before.
			s.failed(engine.CodeActionReplayed, "this confirmation was answered before: the action ran once and does not run again")
			return
		}
		card, _ := json.Marshal(res.Done)
		last, _ = json.Marshal(res)
		if !s.custom(CustomDone, card) || !s.text(res.Speak) || !s.endText() {
			return
		}
	}
	s.finished(last, nil)
}
