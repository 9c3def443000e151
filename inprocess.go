package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"time"

	"github.com/convengine/engine/internal/body"
	"github.com/convengine/engine/internal/headers"
	"github.com/convengine/engine/widgets"
)

// Identity is who a request comes from, as [Config].Identify tells it from the host's own
// authentication.
type Identity struct {
	// EngineKey names the tenant.
	EngineKey string
	// UserToken is the user's token for the tenant's backend, passed to its tools.
	UserToken string
	// Environment is EnvProduction (the default) or EnvStaging.
	Environment string
	// UserID is the host's stable id of the user, when it has one: the conversation record
	// (Config.Recorder) names the user by it, as tokens rotate. Empty: a keyed hash of the token.
	UserID string
}

// Caller is who asks for an in-process call ([Engine.Turn], [Engine.Execute],
// [Engine.Synthesize], [Engine.CreateSession]) and what the protocol's headers would add.
// The host has authenticated its user; the engine checks the rest as its handlers do, with
// the same problems.
type Caller struct {
	// EngineKey names the tenant, as X-Engine-Key does.
	EngineKey string
	// UserToken is the end user's token, passed to the tenant's tools (X-Token). Required.
	UserToken string
	// UserID is the host's stable id of the user, as Identity's.
	UserID string
	// Environment is EnvProduction (the default) or EnvStaging.
	Environment string
	// RequestID identifies the call in logs and to the tenant's backend, which gets it as is.
	// Empty means a new one, a UUID after the environment's prefix (prod- or stg-). The rule is
	// X-Request-ID's: with Environment empty, it must be prod- or stg- followed by 1 to 128
	// letters, digits or ._:-, and its prefix chooses the environment, as a client's header
	// does; with Environment set (the host chose, as [Config].Environment does over HTTP), any
	// 1 to 128 of those characters. Anything else is refused with a 400 invalid_request_id
	// [Problem] that names the rule.
	RequestID string
	// SessionID names a session of the tenant (from [Engine.CreateSession] or the
	// create-session endpoint) that the call belongs to, as a session token does: a turn's
	// confirm widgets can then only be executed in it. Empty: none.
	SessionID string
	// Metadata is what X-Client-Metadata carries: it reaches the tools' environment.
	Metadata map[string]any
	// Forward holds headers to pass to the tenant's backend, named as the backend receives
	// them (without the X-Engine-Forward- prefix). They are filtered as forwarded headers are:
	// reserved and malformed names are dropped, and so is what passes 32 headers or 16 KB.
	Forward http.Header
}

// TurnInput is what the body of POST /engine carries, as Go values, for [Engine.Turn].
type TurnInput struct {
	// Transcript is what the user said or typed, up to 8 000 characters.
	Transcript string
	// Audio is the user's speech instead of Transcript: a WAV file, PCM 16-bit, 16 kHz, mono,
	// at most 60 seconds.
	Audio []byte
	// Mode is ModeText (the default), ModeVoice or ModeHome.
	Mode Mode
	// Messages are the earlier turns of the conversation, RoleUser and RoleAssistant only,
	// oldest first, at most 100.
	Messages []Message
	// ConversationID names the conversation (a turn body's context.sessionId); empty means a
	// new one.
	ConversationID string
	// Screen describes what the user is looking at, up to 1 024 bytes.
	Screen string
	// CountryCode is the user's ISO 3166-1 alpha-2 country.
	CountryCode string
	// Locale is the BCP 47 language of the answer; empty means the tenant's.
	Locale string

	// For transports (package voice, a telephony bridge). Samples is the user's speech as
	// 16 kHz mono samples, instead of Transcript or Audio, at most 60 seconds: the turn
	// transcribes it (Config.Transcriber) within its time limit, and speech heard but not
	// understood makes a turn that says so. The turn is done with the samples once it has
	// yielded its first event or error.
	Samples []int16
	// Listening, with Samples, is their streaming recognition ([StreamingTranscriber]): the
	// turn takes its transcript from Finish, transcribes Samples only when that fails, and
	// closes it.
	Listening Listening
	// TurnID names the turn, for a transport that speaks of it before it starts (a cancel while
	// its audio is transcribed): a UUID. Empty means a new one.
	TurnID string
	// Admission is the turn's place in the engine's bounds, taken before by [Engine.Admit]:
	// the turn then runs for the caller the admission was taken for, checked then, and counts
	// no rate limit and takes no turn slot of its own. An admission admits one turn; the one
	// who took it releases it once the turn is over.
	Admission *Admission
}

// admission is in's Admission, nil for none.
func (in *TurnInput) admission() *Admission {
	if in == nil {
		return nil
	}
	return in.Admission
}

// Turn runs one turn in-process and yields its events: the same events, in the same order
// and with the same data as the turn stream of POST /engine, from EventStart to EventDone.
// The turn runs in the goroutine of the caller's loop, event by event; breaking out of the
// loop or cancelling ctx stops it, as a client that disconnects does (model, tools and all),
// and no done event follows.
//
// A turn that cannot start yields a single error, a *[Problem] with the status and code the
// HTTP handler would have answered (unknown_engine_key, invalid_request with its Field,
// rate_limited, overloaded, no_speech …), and nothing else. Once started, a failure is an
// EventError followed by the apology and EventDone, as on the stream; then, last, the same
// *[TurnError] as the iterator's error (model_error, turn_timeout, step_limit, internal), so
// that a host that returns on a non-nil error returns the turn's failure, after the events a
// client would have seen. Test it with [errors.As]:
//
//	caller := &engine.Caller{EngineKey: key, UserToken: tok}
//	for ev, err := range eng.Turn(ctx, caller, &engine.TurnInput{Transcript: "What's my balance?"}) {
//		if err != nil {
//			return err // a *engine.Problem (not started) or a *engine.TurnError (failed)
//		}
//		if ev.Type == engine.EventSpeak {
//			fmt.Print(ev.Delta)
//		}
//	}
func (e *Engine) Turn(ctx context.Context, c *Caller, in *TurnInput) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		start := e.now()
		var (
			req     *request
			p       *Problem
			release = func() {}
		)
		switch a := in.admission(); {
		case in == nil:
			req, p = e.callerRequest(ctx, c, true)
			if p == nil {
				p = newProblem(http.StatusBadRequest, CodeInvalidRequest, "the turn input is nil")
			}
		case a == nil:
			var own *Admission
			if req, own, p = e.callerAdmitted(ctx, c, true, Work{Kind: WorkTurn}); p == nil {
				release = own.Release
			}
		case a.e != e:
			p = newProblem(http.StatusInternalServerError, CodeInternal, "the turn's admission is another engine's")
		case a.kind != WorkTurn || a.req.unverified:
			p = newProblem(http.StatusInternalServerError, CodeInternal, "the admission is not a verified caller's turn's")
		case a.used.Swap(true):
			// One admission, one turn: a second would run past the bounds it was counted against.
			p = newProblem(http.StatusInternalServerError, CodeInternal, "the turn's admission was used by another turn or released")
		default:
			req = a.req // checked when the admission was taken
		}
		if p != nil {
			yield(Event{}, p.withID(req))
			return
		}
		defer release()
		body, p := in.body()
		if p != nil {
			yield(Event{}, p.withID(req))
			return
		}
		var (
			t      *turn
			failed *TurnError
			more   = true
		)
		for ev, err := range e.turnEvents(ctx, req, body, func(x *turn) { t = x }) {
			if p, ok := err.(*Problem); ok {
				p.RequestID = req.ID
			}
			if ev.Type == EventError {
				failed = ev.Error
			}
			if more = yield(ev, err); !more {
				break
			}
		}
		if failed != nil && more {
			yield(Event{}, failed)
		}
		if t != nil {
			e.logTurn(ctx, req, t, start, slog.Bool("inProcess", true))
		}
	}
}

// callerAdmitted checks what a host says of a caller as readAdmitted checks the headers, in
// the same order, with the same problems, and the session unless withSession is false (for
// create-session, which makes one); then it admits the caller's work w.
func (e *Engine) callerAdmitted(ctx context.Context, c *Caller, withSession bool, w Work) (*request, *Admission, *Problem) {
	req, p := e.callerRequest(ctx, c, withSession)
	if p != nil {
		return req, nil, p
	}
	a, p := e.admit(ctx, req, w)
	return req, a, p
}

// callerRequest is callerAdmitted without the admission.
func (e *Engine) callerRequest(ctx context.Context, c *Caller, withSession bool) (*request, *Problem) {
	if c == nil {
		return nil, newProblem(http.StatusUnauthorized, CodeUnknownEngineKey, "the caller is nil")
	}
	id, env, bad := headers.CallerRequestID(c.RequestID, c.Environment)
	if bad != "" {
		return nil, newProblem(http.StatusBadRequest, CodeInvalidRequestID, bad)
	}
	req := &request{ID: id, userID: c.UserID}
	p := e.identify(ctx, req, c.EngineKey, env, c.UserToken, &hostNames)
	if p != nil {
		return req, p
	}
	switch {
	case !withSession:
	case c.SessionID != "":
		if req.Session, p = e.inProcessSession(ctx, req, c.SessionID); p != nil {
			return req, p
		}
	case req.Tenant.RequireSession:
		return req, newProblem(http.StatusUnauthorized, CodeInvalidSession, "this assistant requires a session; create one first")
	}
	req.Metadata = c.Metadata
	if len(c.Forward) > 0 {
		h := make(http.Header, len(c.Forward))
		for name, vals := range c.Forward {
			h[HeaderForwardPrefix+name] = vals
		}
		req.Forward = forwarded(h, nil)
	}
	return req, nil
}

// body is the input as the body of POST /engine, checked by the same code.
func (in *TurnInput) body() (*turnRequest, *Problem) {
	var msgs []body.Message
	for _, m := range in.Messages {
		msgs = append(msgs, body.Message{Role: string(m.Role), Content: m.Content})
	}
	b, bad := (&body.Input{Transcript: in.Transcript, Audio: in.Audio, Samples: in.Samples, TurnID: in.TurnID, Mode: string(in.Mode),
		Messages: msgs, ConversationID: in.ConversationID, Screen: in.Screen, CountryCode: in.CountryCode, Locale: in.Locale}).Turn()
	if bad != nil {
		return nil, fieldProblem(bad)
	}
	return &turnRequest{Turn: *b, wav: in.Audio, pcm: in.Samples, listening: in.Listening, turnID: in.TurnID}, nil
}

// ExecuteInput is what the body of POST /engine/execute carries, for [Engine.Execute]: the
// confirm widget's execute object, and how the device verified the user.
type ExecuteInput struct {
	// Execute is the confirm widget's execute object, as the turn gave it.
	Execute widgets.Execute
	// Method is how the device verified the user: "faceid", "touchid" or "passcode".
	Method string
	// VerifiedAt is when it did.
	VerifiedAt time.Time
	// VerifiedAtJSON is, when set, auth.verifiedAt as the client wrote it (a JSON string of RFC
	// 3339, or a number of epoch milliseconds), read instead of VerifiedAt: a device proof signs
	// verifiedAt as written, and "…:05.120Z" is not Go's "…:05.12Z".
	VerifiedAtJSON json.RawMessage
	// Proof is the device's proof of this action, a JWS signed by the session's gate key
	// (docs/actions.md), when the session has one.
	Proof string
	// WebAuthn is, instead, the assertion of the session's gate passkey, as auth.webauthn
	// carries it.
	WebAuthn json.RawMessage
	// Locale is the language of the result's card; empty means the tenant's.
	Locale string
}

// Execute runs a confirmed action in-process, as POST /engine/execute does: the same checks
// (the action token must be the caller's, of its tenant, environment and session), at most
// once per token, on a context of its own once the backend is called; a token that ran before
// gets its first result again, with Replayed set. The error is a *[Problem] with the
// endpoint's status and code.
func (e *Engine) Execute(ctx context.Context, c *Caller, in *ExecuteInput) (*ExecuteResult, error) {
	req, _, p := e.callerAdmitted(ctx, c, true, Work{Kind: WorkRequest})
	if p == nil && in == nil {
		p = fieldProblem(body.MissingExecute())
	}
	if p != nil {
		return nil, p.withID(req)
	}
	x := in.Execute
	verified, _ := json.Marshal(in.VerifiedAt.UTC().Format(time.RFC3339Nano))
	if len(in.VerifiedAtJSON) > 0 {
		verified = in.VerifiedAtJSON
	}
	b := executeRequest{Execute: &body.ExecuteCall{Tool: x.Tool, Arguments: x.Arguments, Token: x.Token},
		Auth: &body.ExecuteAuth[PasskeyAssertion]{Method: in.Method, VerifiedAt: verified}}
	if in.Proof != "" {
		b.Auth.Proof = &in.Proof
	}
	if len(in.WebAuthn) > 0 {
		b.Auth.WebAuthn = new(PasskeyAssertion)
		if unmarshalStrictly(in.WebAuthn, b.Auth.WebAuthn) != nil {
			return nil, invalidField("auth.webauthn", "must be the assertion object of the session's passkey").withID(req)
		}
	}
	if in.Locale != "" {
		b.Context = &body.ExecuteContext{Locale: in.Locale}
	}
	reply, replayed, p := e.execute(ctx, req, &b)
	if p != nil {
		return nil, p.withID(req)
	}
	res := ExecuteResult{Replayed: replayed}
	if err := json.Unmarshal(reply, &res); err != nil {
		return nil, fmt.Errorf("engine: the action's recorded result: %w", err)
	}
	return &res, nil
}

// Synthesize speaks text in-process, as POST /engine/tts does: in voice, else the tenant's,
// else the synthesizer's choice for the tenant's language, after the text is written as words
// (Config.SpeechText). The audio streams as it is synthesized; the caller reads it and must
// close its PCM, which holds one of the engine's synthesis slots (MaxConcurrentSyntheses),
// and one of the caller's user (MaxSynthesesPerUser), until then. Cancelling ctx stops the synthesis. The error is a *[Problem] with the
// endpoint's status and code.
func (e *Engine) Synthesize(ctx context.Context, c *Caller, text, voice string) (*Audio, error) {
	req, a, p := e.callerAdmitted(ctx, c, true, Work{Kind: WorkSynthesis})
	if p == nil {
		b := body.Speech{Text: &text}
		if voice != "" {
			b.Voice = &voice
		}
		var speech *Audio
		if speech, _, p = e.synthesize(ctx, req, a, &b); p == nil {
			return speech, nil
		}
	}
	return nil, p.withID(req)
}

// SessionInput is what the body of create-session carries, for [Engine.CreateSession]: all
// optional.
type SessionInput struct {
	// PublicKey binds the session to a device key (a public JWK); its requests then need DPoP
	// proofs over HTTP.
	PublicKey json.RawMessage
	// GateKey is the public JWK of a key the app holds behind the device's biometric gate, which
	// signs action proofs; GateCredential is, instead, a passkey registration.
	GateKey        json.RawMessage
	GateCredential json.RawMessage
	// Metadata is a JSON object kept with the session.
	Metadata json.RawMessage
}

// SessionInfo is a session created by [Engine.CreateSession].
type SessionInfo struct {
	ID string
	// Token is the session token a client sends as Authorization over HTTP.
	Token     Secret
	CreatedAt time.Time
	ExpiresAt time.Time
	// Theme is the tenant's theme, a JSON object.
	Theme json.RawMessage
}

// CreateSession makes a session in-process, as the create-session endpoint does (the
// caller's SessionID is not read; a tenant that requires sessions is no obstacle). Its ID goes in the Caller of later calls. The error is a
// *[Problem] with the endpoint's status and code.
func (e *Engine) CreateSession(ctx context.Context, c *Caller, in *SessionInput) (*SessionInfo, error) {
	req, a, p := e.callerAdmitted(ctx, c, false, Work{Kind: WorkSession})
	if p == nil {
		if in == nil {
			in = &SessionInput{}
		}
		var res *body.SessionCreated
		res, p = e.createSession(ctx, req, a, &body.Session{PublicKey: in.PublicKey, GateKey: in.GateKey,
			GateCredential: in.GateCredential, Metadata: in.Metadata})
		if p == nil {
			created, _ := time.Parse(time.RFC3339, res.CreatedAt)
			expires, _ := time.Parse(time.RFC3339, res.ExpiresAt)
			return &SessionInfo{ID: res.SessionID, Token: Secret(res.SessionToken), CreatedAt: created, ExpiresAt: expires,
				Theme: res.Theme}, nil
		}
	}
	return nil, p.withID(req)
}
