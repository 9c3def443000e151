package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/convengine/engine/internal/prompt"
)

// A Model produces one streamed completion: text deltas, tool calls and a finish event. The
// engine runs the tool loop around it: it calls Stream again with the tool results appended to
// the messages until the model finishes without asking for data.
//
// Stream must stop promptly and yield ctx.Err() once ctx is cancelled. It is called from many
// goroutines at once and must not keep state between calls. It must not modify req: parts of it,
// such as the tool descriptions, are shared by concurrent turns. The engine stops ranging over the
// sequence early when the client goes away; the sequence must then release what it holds.
type Model interface {
	Stream(ctx context.Context, req *ModelRequest) iter.Seq2[ModelEvent, error]
}

// Warmer is implemented by a [Model] that can prepare a tenant's prompt ahead of its first turn,
// for example by priming a provider's prompt cache. The engine calls it in the background when a
// session starts, with a request that holds the tenant's System and Tools exactly as its turns
// will, and no Context or Messages. Warm returns the finish event of the completion it sent,
// with its usage, so that the warm-up is metered as what it cost; a Warmer that sends nothing
// returns the zero event.
type Warmer interface {
	Warm(ctx context.Context, req *ModelRequest) (ModelEvent, error)
}

// Mode is how a turn's answer will be used.
type Mode string

// The modes of a turn.
const (
	// ModeText answers typed input; speak may be read on screen.
	ModeText Mode = "text"
	// ModeVoice answers speech; speak is written for the ear: short, no markup.
	ModeVoice Mode = "voice"
	// ModeHome is the tenant's silent opening glance, with no user input.
	ModeHome Mode = "home"
)

// Role is the author of a [Message].
type Role string

// The roles of messages.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of the conversation a [Model] sees. Assistant messages may carry the tool
// calls the model asked for; each tool message answers one of them by ToolCallID.
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	// Name is the tool a tool message answers.
	Name string `json:"name,omitempty"`
	// IsError marks a tool message that reports a failed call.
	IsError bool `json:"isError,omitempty"`
}

// ModelRequest is everything a [Model] needs for one completion.
type ModelRequest struct {
	// Tenant is the assistant addressed. Models that read their own configuration from the
	// tenant file (such as the offline intent model) find it in Tenant.Intents.
	Tenant *Tenant
	// Environment is "production" or "staging".
	Environment string
	// System is the stable part of the system prompt: the tenant's prompt and the engine's
	// fixed rules. It is the same for every turn of a tenant, byte for byte, so that a model can
	// send it first and providers can cache it (see [Warmer]).
	System string
	// Context is the part of the system prompt that changes from turn to turn: locale, mode and
	// country, all checked by the engine. Models send it after System, for example as a second
	// system message, never before it.
	Context string
	// Messages is the conversation so far and this turn's transcript. When the app sent a screen
	// or client metadata, a user-role message just before the transcript quotes them as JSON
	// between <app_context> tags (see [Message.IsAppContext]): any client writes them, so they
	// never reach the system prompt.
	Messages []Message
	// Tools lists the tenant's tools and the engine's UI tools the model may call.
	Tools []ToolSpec
	// MaxOutputTokens bounds the completion's output tokens, reasoning included (OpenAI's
	// max_completion_tokens); 0 leaves it to the model. A budget relies on it.
	MaxOutputTokens int
	Mode            Mode
	Locale          string
	Country         string
	Screen          string
	Metadata        map[string]any
}

// ToolSpec describes a tool to a [Model].
type ToolSpec struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments.
	Parameters json.RawMessage
	// Kind says what calling the tool does.
	Kind ToolKind
}

// ToolKind says what the engine does with a call of a tool.
type ToolKind int

// The kinds of tools.
const (
	// ToolData tools read the tenant's backend; the engine calls them and returns the result.
	ToolData ToolKind = iota
	// ToolAction tools change something; the engine turns a call into a confirm widget and
	// never runs it during a turn.
	ToolAction
	// ToolUI tools add widgets, follow-up copy or suggestions to the spec.
	ToolUI
)

// ModelEventKind tells which field of a [ModelEvent] is set.
type ModelEventKind int

// The kinds of model events.
const (
	// EventText carries a delta of speech in Text.
	EventText ModelEventKind = iota + 1
	// EventToolCall carries one complete tool call in ToolCall.
	EventToolCall
	// EventFinish ends the completion; Finish and Usage are set.
	EventFinish
)

// ModelEvent is one event of a streamed completion.
type ModelEvent struct {
	Kind     ModelEventKind
	Text     string
	ToolCall ToolCall
	Finish   FinishReason
	Usage    Usage
	// Model, on a finish event, names the model that answered as its server did (which may
	// differ from the one asked for); "" when it did not say.
	Model string
	// Retries, on a finish event, counts the requests of the completion that failed before the
	// one that answered (a rate limit, a server error, a stream cut before its first token).
	// Servers report no usage for them: they are counted, not billed.
	Retries int
}

// FinishReason says why a completion ended.
type FinishReason string

// The reasons a completion ends.
const (
	FinishStop      FinishReason = "stop"
	FinishToolCalls FinishReason = "tool_calls"
	FinishLength    FinishReason = "length"
	// FinishRefused is a refusal or a content-filter stop.
	FinishRefused FinishReason = "refused"
)

// Usage counts the tokens of one completion as its server reported them. When a server reports
// usage more than once in a completion (a running total on every chunk, or two reports), the
// last report counts, never their sum.
type Usage struct {
	// InputTokens counts the prompt's tokens (OpenAI's prompt_tokens), cached ones included.
	InputTokens int
	// OutputTokens counts the tokens generated (completion_tokens), reasoning tokens included,
	// as OpenAI counts them.
	OutputTokens int
	// CachedTokens counts the prompt tokens read from the provider's prompt cache
	// (prompt_tokens_details.cached_tokens): a part of InputTokens, usually billed for less.
	CachedTokens int
	// ReasoningTokens counts the tokens of a reasoning the model did not say
	// (completion_tokens_details.reasoning_tokens): a part of OutputTokens.
	ReasoningTokens int
	// Reported is true when the server reported the usage. False means it reported none, or
	// only figures that cannot be right (negative, absurdly large, not numbers): the counts are
	// then zero, not a measure, and a consumer that needs one estimates it.
	Reported bool
}

// TextEvent returns an [EventText] event.
func TextEvent(delta string) ModelEvent { return ModelEvent{Kind: EventText, Text: delta} }

// ToolCallEvent returns an [EventToolCall] event.
func ToolCallEvent(c ToolCall) ModelEvent { return ModelEvent{Kind: EventToolCall, ToolCall: c} }

// FinishEvent returns an [EventFinish] event.
func FinishEvent(r FinishReason) ModelEvent { return ModelEvent{Kind: EventFinish, Finish: r} }

// ModelByTenant is a [Model] that hands each completion to the Model the function picks for
// the request's tenant, as [ToolsetByTenant] does for tools: one engine then answers tenants
// with different models (an offline one for one, an OpenAI-compatible server for another),
// usually chosen by [Tenant].Model. A nil pick fails the turn with model_error. Warm is passed
// on to the picked model when it is a [Warmer].
type ModelByTenant func(t *Tenant) Model

// ErrModelUnavailable is wrapped by the error of a model with nothing to answer with now, such
// as a fallback chain whose every model is down: the turn fails with model_unavailable.
var ErrModelUnavailable = errors.New("engine: no model is available")

// ErrNoModel is the error of a completion for a tenant that [ModelByTenant] has no model for.
var ErrNoModel = errors.New("engine: no model for the tenant")

// Stream runs the completion on the tenant's Model.
func (f ModelByTenant) Stream(ctx context.Context, req *ModelRequest) iter.Seq2[ModelEvent, error] {
	if m := f(req.Tenant); m != nil {
		return m.Stream(ctx, req)
	}
	return func(yield func(ModelEvent, error) bool) {
		yield(ModelEvent{}, fmt.Errorf("%w %q (model %q)", ErrNoModel, req.Tenant.Key, req.Tenant.Model))
	}
}

// Warm warms the tenant's Model, when it is a [Warmer].
func (f ModelByTenant) Warm(ctx context.Context, req *ModelRequest) (ModelEvent, error) {
	if w, ok := f(req.Tenant).(Warmer); ok {
		return w.Warm(ctx, req)
	}
	return ModelEvent{}, nil
}

// modelRequest composes what the model sees for a turn: the tenant's prompt with the engine's
// rules, the facts of this turn, the conversation so far, the app's data quoted, and the tools.
func (e *Engine) modelRequest(t *turn) *ModelRequest {
	msgs := make([]Message, 0, len(t.history)+2)
	msgs = append(msgs, t.history...)
	data := prompt.AppContext(t.screen, t.req.Metadata)
	if data != "" {
		msgs = append(msgs, Message{Role: RoleUser, Content: data})
	}
	if t.mode != ModeHome {
		msgs = append(msgs, Message{Role: RoleUser, Content: t.transcript})
	}
	for i := range msgs {
		if t.shield != nil {
			msgs[i].Content = t.shield.ToModel(msgs[i].Content)
		}
	}
	return &ModelRequest{
		Tenant: t.req.Tenant, Environment: t.req.Environment.Name,
		System: prompt.Stable(t.req.Tenant.Prompt), Context: prompt.Facts(t.locale, string(t.mode), t.country, data != ""),
		Messages: msgs, Tools: t.specs, Mode: t.mode, Locale: t.locale, Country: t.country,
		Screen: t.screen, Metadata: t.req.Metadata, MaxOutputTokens: t.req.Tenant.Limits.maxOutputTokens(),
	}
}

// IsAppContext reports whether m is the block in which the engine quotes the app's data for a
// turn rather than something the user said. Models that read the user's words skip it.
func (m Message) IsAppContext() bool {
	return m.Role == RoleUser && prompt.IsAppContext(m.Content)
}
