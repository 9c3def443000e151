package usage

import (
	"time"

	"github.com/convengine/engine"
)

// Kinds of [Record].
const (
	KindModel         = "model"         // a call of the model: a step of a turn, or a warm-up
	KindTool          = "tool"          // a tool call of a turn, or an action run by execute
	KindTranscription = "transcription" // a recording transcribed
	KindSynthesis     = "synthesis"     // a text synthesized
)

// Breakdown is the name r is counted under beside its tenant's totals: a call's model, or a
// speech provider's name; "" and false for work counted in the totals alone.
func Breakdown(r *Record) (string, bool) {
	switch {
	case r.Kind == KindModel:
		return r.Model, true
	case (r.Kind == KindTranscription || r.Kind == KindSynthesis) && r.Provider != "":
		return r.Provider, true
	}
	return "", false
}

// Record is one metered piece of work: a call of the model, a tool call, a transcription or a
// synthesis. It is flat, so that a sink can write it as a row, and carries identifiers,
// figures and outcomes, never a token, a transcript, a prompt or a tool's arguments.
type Record struct {
	// Time is when the work ended.
	Time time.Time `json:"time"`
	// Kind is KindModel, KindTool, KindTranscription or KindSynthesis.
	Kind        string `json:"kind"`
	Tenant      string `json:"tenant"`
	Environment string `json:"environment,omitempty"`
	// User is the user's keyed hash ([engine.Engine.UserKey]), never the X-Token.
	User      string `json:"user,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	TurnID    string `json:"turn_id,omitempty"`
	RequestID string `json:"request_id,omitempty"`

	// Model is the model that answered, as its server named it; "" when it did not say.
	Model string `json:"model,omitempty"`
	// Step is the call's step in its turn, from 1; 0 for a warm-up.
	Step int `json:"step,omitempty"`
	// Warmup marks the call that primes a provider's prompt cache when a session is created.
	Warmup bool `json:"warmup,omitempty"`
	// Outcome is, for a call of the model, "ok", "cancelled", "timeout" or "error"; for a tool
	// call "ok", "declined", "unavailable", "timeout" or "cancelled"; for speech "ok" or
	// "error".
	Outcome string `json:"outcome"`
	// The tokens of a call of the model, as its server reported them; CachedInputTokens is a
	// part of InputTokens, ReasoningTokens a part of OutputTokens.
	InputTokens       int64 `json:"input_tokens,omitempty"`
	CachedInputTokens int64 `json:"cached_input_tokens,omitempty"`
	OutputTokens      int64 `json:"output_tokens,omitempty"`
	ReasoningTokens   int64 `json:"reasoning_tokens,omitempty"`
	// Estimated is true when the server reported no usage: InputTokens and OutputTokens are
	// then the engine's estimate, one token for four bytes of prompt and answer.
	Estimated bool `json:"estimated,omitempty"`
	// Retries counts the requests of the call that failed before the one that answered.
	Retries int `json:"retries,omitempty"`

	// Provider is, for speech, the service that heard or spoke it ("deepgram", "azure",
	// "elevenlabs", "offline"), when the Transcriber or Synthesizer named it.
	Provider string `json:"provider,omitempty"`

	// Tool is the tool called; Action is true when the execute endpoint ran it.
	Tool   string `json:"tool,omitempty"`
	Action bool   `json:"action,omitempty"`

	DurationMS int64 `json:"duration_ms"`
	// AudioSeconds is the audio transcribed, or synthesized and read; Characters the text a
	// synthesis was given.
	AudioSeconds float64 `json:"audio_seconds,omitempty"`
	Characters   int64   `json:"characters,omitempty"`
	// Error is true when the work failed (its Outcome is not "ok").
	Error bool `json:"error,omitempty"`
}

func modelRecord(now time.Time, e *engine.ModelCallEvent) Record {
	r := Record{Time: now, Kind: KindModel, Tenant: e.Tenant, Environment: e.Environment, User: e.User,
		SessionID: e.SessionID, TurnID: e.TurnID, RequestID: e.RequestID, Model: e.Model, Step: e.Step,
		Warmup: e.Warmup, Outcome: e.Outcome, Retries: e.Retries, DurationMS: e.Duration.Milliseconds(),
		Error: e.Outcome != "ok"}
	u := e.Usage
	if !u.Reported {
		u, r.Estimated = e.Estimated, true
	}
	r.InputTokens, r.CachedInputTokens = int64(u.InputTokens), int64(u.CachedTokens)
	r.OutputTokens, r.ReasoningTokens = int64(u.OutputTokens), int64(u.ReasoningTokens)
	return r
}

func toolRecord(now time.Time, e *engine.ToolEvent) Record {
	return Record{Time: now, Kind: KindTool, Tenant: e.Tenant, Environment: e.Environment, User: e.User,
		SessionID: e.SessionID, TurnID: e.TurnID, RequestID: e.RequestID, Tool: e.Tool, Action: e.Action,
		Outcome: e.Outcome, DurationMS: e.Duration.Milliseconds(), Error: e.Outcome != "ok"}
}

func speechRecord(now time.Time, e *engine.SpeechEvent) Record {
	r := Record{Time: now, Kind: e.Kind, Tenant: e.Tenant, Environment: e.Environment, User: e.User,
		SessionID: e.SessionID, RequestID: e.RequestID, Outcome: "ok", DurationMS: e.Duration.Milliseconds(),
		AudioSeconds: e.AudioSeconds, Characters: int64(e.Characters), Error: e.Err, Provider: e.Provider}
	if e.Err {
		r.Outcome = "error"
	}
	return r
}
