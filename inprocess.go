package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"

	"github.com/google/uuid"
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
}

// TurnInput is a turn asked of [Engine.Turn]: what the headers and the body of POST /engine
// carry, as Go values. The host has authenticated its user; the engine checks the rest as its
// handlers do, with the same problems.
type TurnInput struct {
	// EngineKey names the tenant, as X-Engine-Key does.
	EngineKey string
	// UserToken is the end user's token, passed to the tenant's tools (X-Token). Required.
	UserToken string
	// Environment is EnvProduction (the default) or EnvStaging.
	Environment string
	// RequestID identifies the turn in logs and to the tenant's backend: 1 to 128 letters,
	// digits or ._:-. Empty means a new UUID.
	RequestID string
	// SessionID names a session of the tenant (from [Engine.CreateSession] or POST
	// /engine/sessions) that the turn belongs to, as a session token does: its confirm
	// widgets can only be executed in it. Empty: none.
	SessionID string
	// Metadata is what X-Client-Metadata carries: it reaches the tools' environment.
	Metadata map[string]any
	// Forward holds headers to pass to the tenant's backend, named as the backend receives
	// them (without the X-Engine-Forward- prefix). They are filtered as forwarded headers are:
	// reserved and malformed names are dropped, and so is what passes 32 headers or 16 KB.
	Forward http.Header

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
// EventError followed by the apology and EventDone, as on the stream.
//
//	for ev, err := range eng.Turn(ctx, &engine.TurnInput{EngineKey: key, UserToken: tok, Transcript: "What's my balance?"}) {
//		if err != nil {
//			return err
//		}
//		if ev.Type == engine.EventSpeak {
//			fmt.Print(ev.Delta)
//		}
//	}
func (e *Engine) Turn(ctx context.Context, in *TurnInput) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		start := e.now()
		req, p := e.inProcessRequest(ctx, in)
		if p == nil {
			p = e.rateLimit(ctx, req)
		}
		var release func()
		if p == nil {
			release, p = e.acquireTurn(ctx, req)
		}
		if p != nil {
			p.RequestID = req.idOrEmpty()
			yield(Event{}, p)
			return
		}
		defer release()
		body, p := in.body()
		if p != nil {
			p.RequestID = req.ID
			yield(Event{}, p)
			return
		}
		var t *turn
		for ev, err := range e.turnEvents(ctx, req, body, func(x *turn) { t = x }) {
			if p, ok := err.(*Problem); ok {
				p.RequestID = req.ID
			}
			if !yield(ev, err) {
				break
			}
		}
		if t != nil {
			e.log.LogAttrs(ctx, slog.LevelInfo, "turn",
				slog.String("requestId", req.ID), slog.String("tenant", req.Tenant.Key), slog.String("env", req.Environment.Name),
				slog.Bool("inProcess", true), slog.String("mode", string(t.mode)), slog.Int("steps", t.steps),
				slog.Int("toolCalls", t.toolCalls), slog.Int("widgets", len(t.widgets)), slog.String("error", t.errCode),
				slog.Float64("ms", float64(e.now().Sub(start).Microseconds())/1000))
		}
	}
}

// inProcessRequest checks what a host says of a request as readHeaders checks the headers,
// in the same order, with the same problems.
func (e *Engine) inProcessRequest(ctx context.Context, in *TurnInput) (*request, *Problem) {
	if in == nil {
		return nil, newProblem(http.StatusBadRequest, CodeInvalidRequest, "the turn input is nil")
	}
	id := in.RequestID
	if id == "" {
		id = uuid.NewString()
	} else if !requestIDChars(id) {
		return nil, newProblem(http.StatusBadRequest, CodeInvalidRequestID, "the request id must be 1 to 128 letters, digits or ._:-")
	}
	req := &request{ID: id}
	p := e.identify(ctx, req, in.EngineKey, in.Environment, in.UserToken)
	if p != nil {
		return req, p
	}
	if in.SessionID != "" {
		if req.Session, p = e.inProcessSession(ctx, req, in.SessionID); p != nil {
			return req, p
		}
	} else if req.Tenant.RequireSession {
		return req, newProblem(http.StatusUnauthorized, CodeInvalidSession, "this assistant requires a session; create one first")
	}
	req.Metadata = in.Metadata
	if len(in.Forward) > 0 {
		h := make(http.Header, len(in.Forward))
		for name, vals := range in.Forward {
			h[HeaderForwardPrefix+name] = vals
		}
		req.Forward = forwardedHeaders(h, nil)
	}
	return req, nil
}

// identify finds the tenant of key, its environment env ("" is production) and checks the
// user's token, for requests that do not come with the protocol's headers.
func (e *Engine) identify(ctx context.Context, req *request, key, env, token string) *Problem {
	if key == "" {
		return newProblem(http.StatusUnauthorized, CodeUnknownEngineKey, "the engine key is missing")
	}
	t, err := e.tenants.Tenant(ctx, key)
	switch {
	case errors.Is(err, ErrUnknownTenant):
		return newProblem(http.StatusUnauthorized, CodeUnknownEngineKey, "the engine key is not known")
	case err != nil:
		e.log.ErrorContext(ctx, "tenant lookup failed", "requestId", req.ID, "err", err)
		return newProblem(http.StatusServiceUnavailable, CodeTenantUnavailable, "the tenant could not be looked up; try again")
	}
	req.Tenant = t
	if env == "" {
		env = EnvProduction
	}
	if env != EnvProduction && env != EnvStaging {
		return newProblem(http.StatusForbidden, CodeEnvironmentUnavailable, "the environment must be production or staging")
	}
	if req.Environment = t.Environments[env]; req.Environment == nil {
		return newProblem(http.StatusForbidden, CodeEnvironmentUnavailable, "the tenant has no "+env+" environment")
	}
	switch {
	case token == "":
		return newProblem(http.StatusUnauthorized, CodeMissingUserToken, "the user's token is missing")
	case len(token) > maxUserToken:
		return newProblem(http.StatusUnauthorized, CodeMissingUserToken, fmt.Sprintf("the user's token is longer than %d bytes", maxUserToken))
	}
	req.UserToken = Secret(token)
	return nil
}

// inProcessSession returns the session id names, which must be the tenant's and not over.
func (e *Engine) inProcessSession(ctx context.Context, req *request, id string) (*Session, *Problem) {
	s, err := e.sessions.Session(ctx, id)
	switch {
	case errors.Is(err, ErrSessionNotFound):
		return nil, newProblem(http.StatusUnauthorized, CodeInvalidSession, "the session is unknown or has ended; create a new session")
	case err != nil:
		e.log.ErrorContext(ctx, "looking up a session failed", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		return nil, newProblem(http.StatusServiceUnavailable, CodeStoreUnavailable, "the session could not be looked up; try again")
	case s.TenantKey != req.Tenant.Key || !e.now().Before(s.ExpiresAt):
		return nil, newProblem(http.StatusUnauthorized, CodeInvalidSession, "the session is unknown or has ended; create a new session")
	}
	return s, nil
}

// body is the input as the body of POST /engine, checked by the same code.
func (in *TurnInput) body() (*turnRequest, *Problem) {
	b := &turnRequest{Context: &turnContext{SessionID: in.ConversationID, CountryCode: in.CountryCode}}
	if in.Transcript != "" {
		b.Transcript = &in.Transcript
	}
	if in.Audio != nil {
		if in.Transcript != "" {
			return nil, invalidField("audio", "and transcript cannot both be given")
		}
		b.wav = in.Audio
	}
	if in.Mode != "" {
		m := string(in.Mode)
		b.Mode = &m
	}
	for _, m := range in.Messages {
		b.Messages = append(b.Messages, historyMessage{Role: string(m.Role), Content: m.Content})
	}
	if in.Screen != "" {
		b.Context.Screen, _ = json.Marshal(in.Screen)
	}
	if in.Locale != "" {
		b.Meta = &turnMeta{Locale: in.Locale}
	}
	return b, nil
}
