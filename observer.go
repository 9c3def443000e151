package engine

import (
	"cmp"
	"context"
	"time"
	"unicode/utf8"

	"github.com/convengine/engine/internal/response"
)

// Observer receives what the engine does, for tracing and metrics, like
// [net/http/httptrace.ClientTrace]: set the hooks you need, leave the others nil. Hooks run on
// the goroutine of the work they describe and must return quickly. Package otel implements
// them with OpenTelemetry.
//
// Events carry identifiers, names, durations and outcome codes, never a token, a forwarded
// value, a transcript or a tool's arguments or result.
type Observer struct {
	// Request is called after every request on the engine's routes; for the voice socket,
	// after its upgrade (status 101), and Socket tells when the socket closes.
	Request func(ctx context.Context, e RequestEvent)
	// TurnStart is called when a turn's answer begins (over SSE or the voice socket). The
	// context it returns is the turn's from then on, so that it can carry a span.
	TurnStart func(ctx context.Context, e TurnEvent) context.Context
	// FirstSpeak is called when the first speech of a turn leaves, with the time since the
	// turn started.
	FirstSpeak func(ctx context.Context, e TurnEvent, elapsed time.Duration)
	// TurnEnd is called when a turn is over, with its outcome filled in.
	TurnEnd func(ctx context.Context, e TurnEvent)
	// ToolStart is called before a tool call; the context it returns is the call's, and goes
	// to the Toolset (so that a transport can propagate a trace).
	ToolStart func(ctx context.Context, e ToolEvent) context.Context
	// ToolEnd is called after a tool call with its duration and outcome.
	ToolEnd func(ctx context.Context, e ToolEvent)
	// Speech is called after each synthesis or transcription.
	Speech func(ctx context.Context, e SpeechEvent)
	// RateLimit is called when a rate limit refuses a request, and for each request checked
	// against the process's own buckets while Config.RateLimiter fails.
	RateLimit func(ctx context.Context, e RateLimitEvent)
	// Socket is called when a voice socket opens (open true) and when it closes.
	Socket func(ctx context.Context, tenant string, open bool)
	// Overload is called when one of the engine's bounds (concurrent turns, syntheses,
	// sockets, buffered audio) refuses work.
	Overload func(ctx context.Context, e OverloadEvent)
	// ModelCall is called after each call of the model in a turn (each step), with what it
	// cost: for usage metering, budgets and traces.
	ModelCall func(ctx context.Context, e ModelCallEvent)
	// Breaker is called when the breaker of a model or of a tenant backend changes state
	// (packages breaker, fallback, httptools), and when a chain's degraded last resort answers.
	Breaker func(ctx context.Context, e BreakerEvent)
}

// BreakerEvent names a model, or a backend by its URL, and its breaker's new state ("closed",
// "open", "half-open"), or "degraded" for a completion of Tenant its last resort answered.
type BreakerEvent struct{ Name, State, Tenant string }

// ModelCallEvent describes one call of the model, a step of a turn.
type ModelCallEvent struct {
	RequestID   string
	Tenant      string
	Environment string
	TurnID      string
	SessionID   string // "" without a session
	// User names the turn's user as [Engine.UserKey] does: a keyed hash, never the token.
	User string
	// Step is 1 for the turn's first call; 0 for a warm-up.
	Step int
	// Warmup marks the call that primes a provider's prompt cache when a session is created
	// ([Warmer]): it belongs to no turn (TurnID and User are "").
	Warmup bool
	// Model is the model that answered, as its server named it; "" when it did not say.
	Model string
	// Retries counts the requests of the call that failed before the one that answered.
	Retries int
	// Outcome is "ok", "cancelled" (the client went away or the turn was stopped), "timeout"
	// (the turn's time limit) or "error" (the model failed).
	Outcome string
	Finish  FinishReason
	// Usage is what the server reported. When it reported nothing (Usage.Reported false: a
	// server that does not, an offline model, a call cut short), Estimated holds the engine's
	// estimate instead, one token for four bytes of the prompt (system prompt, messages, tool
	// descriptions) and of the answer (text and tool calls) so far; it is zero otherwise.
	Usage     Usage
	Estimated Usage
	Duration  time.Duration
	// FirstOutput is the time to the model's first text or tool call; 0 when none came.
	FirstOutput time.Duration
}

// RequestEvent describes one request to a route of the engine.
type RequestEvent struct {
	Route     string // the route's path, such as "/engine"; "" for no route of the engine
	Method    string // "OTHER" for a method HTTP does not define
	Status    int
	Code      string // the problem code of an error answer
	RequestID string
	Duration  time.Duration
}

// TurnEvent describes a turn.
type TurnEvent struct {
	RequestID   string
	Tenant      string
	Environment string
	TurnID      string
	Mode        Mode
	Locale      string

	// ConversationID is the turn's session's id when it runs in one (create-session), else
	// the conversationId of its spec's meta.
	ConversationID string

	// Outcome, set on TurnEnd:
	Steps     int
	ToolCalls int
	Widgets   int
	ErrorCode string // "" when the turn answered
	Duration  time.Duration
	// PersonalData is what the turn's Shield (Config.Privacy) handled; nil without one.
	PersonalData []PersonalData
}

// ToolEvent describes one tool call.
type ToolEvent struct {
	RequestID   string
	Tenant      string
	Environment string
	TurnID      string // "" for an action
	SessionID   string
	User        string // a keyed hash, as [Engine.UserKey]
	Tool        string
	// CallID is the model's id of the call, or the action's id for an action.
	CallID string
	Action bool // run by the execute endpoint
	// Outcome, set on ToolEnd: "ok", "declined" (the backend refused), "unavailable",
	// "timeout" or "cancelled".
	Outcome  string
	Duration time.Duration
}

// SpeechEvent describes one synthesis or transcription, once its work is done: a synthesis
// when its audio has been read to the end or closed, so that Duration is the synthesis's, not
// the time it took to start.
type SpeechEvent struct {
	Kind        string // "synthesis" or "transcription"
	RequestID   string
	Tenant      string
	Environment string
	SessionID   string
	User        string // a keyed hash, as [Engine.UserKey]
	Provider    string // the provider that did the work, when named ([SpeechEventOf])
	Duration    time.Duration
	Err         bool
	// AudioSeconds is the audio transcribed, or synthesized and read; Characters the text a
	// synthesis was given (after Config.SpeechText).
	AudioSeconds float64
	Characters   int
}

// observeTool runs call as the tool call e describes, reporting it to the observer.
func (e *Engine) observeTool(ctx context.Context, ev ToolEvent, call func(context.Context) (ToolResult, error)) (ToolResult, error) {
	o := e.obs
	if o.ToolStart != nil {
		ctx = o.ToolStart(ctx, ev)
	}
	start := e.now()
	res, err := call(ctx)
	if o.ToolEnd != nil {
		ev.Duration = e.now().Sub(start)
		switch {
		case err == nil && res.IsError:
			ev.Outcome = "declined"
		case err == nil:
			ev.Outcome = "ok"
		case ctx.Err() == context.DeadlineExceeded:
			ev.Outcome = "timeout"
		case ctx.Err() != nil:
			ev.Outcome = "cancelled"
		default:
			ev.Outcome = "unavailable"
		}
		o.ToolEnd(ctx, ev)
	}
	return res, err
}

func (e *Engine) observeSpeech(ctx context.Context, ev SpeechEvent, start time.Time, err error) {
	if e.obs.Speech != nil {
		ev.Duration, ev.Err = e.now().Sub(start), err != nil
		e.obs.Speech(ctx, ev)
	}
}

// meterSynthesis reports a synthesis that failed at once, or returns its audio counted: once
// it has been read to the end, failed, or been closed, the Observer learns of it and its budget
// reservation r (if any) is settled to the seconds it spoke.
func (e *Engine) meterSynthesis(ctx context.Context, ev SpeechEvent, r Reservation, tenant *Tenant, text string, start time.Time, speech *Audio, err error) *Audio {
	if e.obs.Speech == nil && r == nil {
		return speech
	}
	ev.Kind, ev.Characters = "synthesis", utf8.RuneCountInString(text)
	if err != nil {
		e.settle(ctx, r, Spend{Tenant: tenant})
		e.observeSpeech(ctx, ev, start, err)
		return speech
	}
	return &Audio{SampleRate: speech.SampleRate, PCM: response.Counted(speech.PCM, func(n int64, err error) {
		if speech.SampleRate > 0 {
			ev.AudioSeconds = float64(n/2) / float64(speech.SampleRate)
		}
		e.settle(ctx, r, Spend{Tenant: tenant, SpeechSeconds: ev.AudioSeconds})
		e.observeSpeech(ctx, ev, start, err)
	})}
}

// keysUsers reports whether a turn's events name its user: the user's keyed hash costs a MAC.
func (e *Engine) keysUsers() bool {
	return e.obs.ModelCall != nil || e.obs.ToolStart != nil || e.obs.ToolEnd != nil
}

// speechEvent is the speech event of req's work, its figures to be filled in.
func (e *Engine) speechEvent(req *request) SpeechEvent {
	return SpeechEvent{RequestID: req.ID, Tenant: req.Tenant.Key, Environment: req.Environment.Name,
		SessionID: req.sessionID(), User: e.userOf(req)}
}

// turnEvent describes t for the observer.
func (t *turn) event() TurnEvent {
	return TurnEvent{RequestID: t.req.ID, Tenant: t.req.Tenant.Key, Environment: t.req.Environment.Name,
		TurnID: t.turnID, ConversationID: cmp.Or(t.sessionID, t.conversationID), Mode: t.mode, Locale: t.locale, Steps: t.steps, ToolCalls: t.toolCalls,
		Widgets: len(t.widgets), ErrorCode: t.errCode}
}
