package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/convengine/engine/internal/locale"
	"github.com/convengine/engine/internal/token"
	"github.com/convengine/engine/widgets"
)

// Recorder keeps the conversation record a bank must keep: what each user said and was told,
// and the evidence of each action they approved (package record implements it over
// PostgreSQL or SQLite). It sees content as the user saw it under the tenant's privacy policy,
// never a user token, a session token, a forwarded value or an action's sealed arguments.
type Recorder interface {
	// Turn takes a turn once it is over, on the turn's goroutine: it must not block.
	Turn(ctx context.Context, r *RecordedTurn)
	// Action takes a confirmed action's evidence before its backend is called, and must have
	// kept it when it returns: an error refuses the action (503 record_unavailable) and nothing
	// moves. The function it returns takes the action's outcome once the backend answered.
	Action(ctx context.Context, r *RecordedAction) (outcome func(context.Context, *ActionOutcome), err error)
}

// RecordKey names what a record belongs to, with the engine's time.
type RecordKey struct {
	Time        time.Time
	RequestID   string
	Tenant      string
	Environment string
	// User is the host's stable id of the user (Identity.UserID, Caller.UserID), else the
	// keyed hash of the user's token ([Engine.UserKey]).
	User           string
	SessionID      string
	ConversationID string
	TurnID         string
}

// RecordedTurn is one turn as the record keeps it.
type RecordedTurn struct {
	RecordKey
	Mode   Mode
	Locale string
	// Disclosure is the AI disclosure shown at the turn's start, "" when none was.
	Disclosure string
	// Input is what the user said or typed, as the model saw it (a privacy policy's
	// placeholders in place of the values it hides).
	Input string
	// Audio describes the speech Input was heard from; nil for typed input.
	Audio *HeardAudio
	// Tools are the data tools the turn called, as masked as the user is shown values.
	Tools []ToolRecord
	// Spec is the answer as the user saw and heard it: the done event's spec. For a turn whose
	// client went away before done, what was said so far.
	Spec widgets.Spec
	// Error is the turn's error event, nil when it answered.
	Error *TurnError
}

// HeardAudio is what the record keeps of speech: its length and hash, not the audio.
type HeardAudio struct {
	Seconds float64 `json:"seconds"`
	SHA256  string  `json:"sha256"`
}

// ToolRecord is one tool call of a turn.
type ToolRecord struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Result    string `json:"result"`
	IsError   bool   `json:"isError,omitempty"`
}

// RecordedAction is the evidence of a confirmed action, kept before its backend is called.
type RecordedAction struct {
	RecordKey
	Tool string
	// Arguments are the action's arguments as the user was shown them (canonical JSON; masked
	// where a privacy policy masks them, the real ones being sealed in the token).
	Arguments json.RawMessage
	// Confirm is the confirm widget's copy in the locale of the execute, as the tenant's copy
	// and the arguments make it.
	Confirm widgets.Confirm
	// TokenID, TokenSHA256 and Claims are the action token's id, its SHA-256 (which a device
	// proof signs) and its claims, without the sealed arguments.
	TokenID     string
	TokenSHA256 string
	Claims      json.RawMessage
	// Method and VerifiedAt are the device check the client reports (auth.method and
	// auth.verifiedAt); Proof the device's proof verbatim, nil when the tenant needs none and
	// none came.
	Method     string
	VerifiedAt json.RawMessage
	Proof      *ActionProof
}

// ActionOutcome is how a recorded action ended.
type ActionOutcome struct {
	Time time.Time
	// Outcome is "ok", "declined" (the backend refused), "unknown" (it may have run: a
	// time-out, a broken answer) or "not_run" (the backend was not reached).
	Outcome string
	// Result is the backend's answer (JSON), masked as the user's values are; Reply the terminal
	// card and its spoken line.
	Result string
	Reply  *ExecuteResult
}

// recordTurn hands a started turn to the Recorder.
func (e *Engine) recordTurn(ctx context.Context, t *turn, spec *widgets.Spec) {
	r := &RecordedTurn{RecordKey: e.recordKey(t.req, cmp.Or(t.sessionID, t.conversationID), t.turnID, t.started),
		Mode: t.mode, Locale: t.locale, Disclosure: t.disclosure, Input: t.transcript, Audio: t.audio, Tools: t.records}
	if t.shield != nil {
		r.Input = t.shield.ToModel(t.transcript)
	}
	if spec != nil {
		r.Spec = *spec
	} else {
		r.Spec = widgets.Spec{Speak: t.speak.String(), Meta: widgets.Meta{ConversationID: t.conversationID, TurnID: t.turnID, Locale: t.locale}}
	}
	r.Spec.Widgets = token.HashConfirms(r.Spec.Widgets)
	if t.errCode != "" {
		r.Error = &TurnError{Code: t.errCode}
	}
	e.recorder.Turn(context.WithoutCancel(ctx), r)
}

func (e *Engine) recordKey(req *request, conversation, turnID string, at time.Time) RecordKey {
	return RecordKey{Time: at, RequestID: req.ID, Tenant: req.Tenant.Key, Environment: req.Environment.Name,
		User: cmp.Or(req.userID, e.userOf(req)), SessionID: req.sessionID(), ConversationID: conversation, TurnID: turnID}
}

// recordAction keeps an action's evidence before it runs; a nil Recorder keeps nothing.
func (e *Engine) recordAction(ctx context.Context, req *request, c *token.ActionClaims, b *executeRequest, canon json.RawMessage, tag string, proof *ActionProof) (func(context.Context, *ActionOutcome), *Problem) {
	if e.recorder == nil {
		return func(context.Context, *ActionOutcome) {}, nil
	}
	claims := *c
	claims.Sealed = ""
	raw, _ := json.Marshal(claims)
	r := &RecordedAction{RecordKey: e.recordKey(req, cmp.Or(c.Session, c.Conversation), c.Turn, e.now()),
		Tool: c.Tool, Arguments: canon, TokenID: c.ID, TokenSHA256: token.Hash(b.Execute.Token), Claims: raw,
		Method: b.Auth.Method, VerifiedAt: b.Auth.VerifiedAt, Proof: proof}
	if cp, ok := locale.Lookup(req.Tenant.Actions[c.Tool].Confirm, tag, req.Tenant.Locale); ok {
		r.Confirm = confirmCopy(cp, shownArgs(canon), func(s string) string { return s })
	}
	done, err := e.recorder.Action(ctx, r)
	if err != nil {
		e.log.ErrorContext(ctx, "recording an action failed; it is refused", "requestId", req.ID, "tenant", req.Tenant.Key, "tool", c.Tool, "err", err)
		p := newProblem(http.StatusServiceUnavailable, CodeRecordUnavailable, "the engine cannot record this action right now; nothing was done, try again")
		p.Retryable = true
		return nil, p
	}
	return done, nil
}

// HandoffRecorder is a Recorder that also keeps the handoffs of a conversation to a person
// (package record's does), so that a complaint can be followed across the assistant and the
// person. Package handoff calls it; Handoff must not block.
type HandoffRecorder interface {
	Handoff(ctx context.Context, r *RecordedHandoff)
}

// RecordedHandoff is one event of a handoff, in the conversation's record. Event is
// "requested" (Reason, and the summary in Text), "joined" (Person), "person_message" and
// "user_message" (Text), "released" (the person's note in Text), "rejected" or "failed"
// (Reason). Texts are under the tenant's privacy policy, as they were sent out.
type RecordedHandoff struct {
	RecordKey
	Event   string
	Handoff string
	Person  string
	Text    string
	Reason  string
}
