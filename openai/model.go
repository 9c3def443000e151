package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/openai/openai-go/v3"

	"github.com/convengine/engine"
)

// Model is an [engine.Model] over the Chat Completions API of OpenAI or of any compatible
// server. It is safe for concurrent use and keeps no state between completions.
type Model struct {
	s    *settings
	chat openai.ChatCompletionService
}

var (
	_ engine.Model  = (*Model)(nil)
	_ engine.Warmer = (*Model)(nil)
)

// NewModel returns a model configured by opts; nil means the defaults (OpenAI's API,
// [DefaultModel], no API key).
func NewModel(opts *Options) (*Model, error) {
	s, err := newSettings(opts)
	if err != nil {
		return nil, err
	}
	return &Model{s: s, chat: openai.NewChatCompletionService(s.requestOptions()...)}, nil
}

// Stream implements [engine.Model]: one streamed chat completion. Text deltas are yielded as
// they arrive; the tool calls, assembled from their deltas, follow the last of them; a finish
// event with the reason and the usage ends the sequence. Failures before the first event are
// retried as [Options] says; a failure after it is yielded as the sequence's last value.
// Cancelling ctx, or stopping the range early, closes the HTTP stream at once.
func (m *Model) Stream(ctx context.Context, req *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	return func(yield func(engine.ModelEvent, error) bool) {
		m.stream(ctx, m.params(req), yield)
	}
}

// errStopped ends an attempt whose caller stopped ranging.
var errStopped = errors.New("openai: the caller stopped reading")

func (m *Model) stream(ctx context.Context, p openai.ChatCompletionNewParams, yield func(engine.ModelEvent, error) bool) {
	stopped := false
	once := func(ev engine.ModelEvent, err error) bool {
		stopped = stopped || !yield(ev, err)
		return !stopped
	}
	err := m.s.retry(ctx, func(ctx context.Context, a *attempt) error {
		return m.attempt(ctx, a, p, once)
	})
	switch {
	case stopped, err == nil:
		// A caller that stopped ranging must not be yielded to again.
	case ctx.Err() != nil:
		yield(engine.ModelEvent{}, ctx.Err())
	default:
		yield(engine.ModelEvent{}, fmt.Errorf("openai: chat completion: %w", err))
	}
}

// attempt sends the request once and yields what it streams. Its errors are final once an event
// was yielded.
func (m *Model) attempt(ctx context.Context, a *attempt, p openai.ChatCompletionNewParams, yield func(engine.ModelEvent, error) bool) error {
	stream := m.chat.NewStreaming(ctx, p)
	defer stream.Close()
	var (
		acc     openai.ChatCompletionAccumulator
		yielded bool
		finish  string
		fail    = func(err error) error {
			if yielded {
				return final{err}
			}
			return err
		}
	)
	for stream.Next() {
		a.answered()
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			return fail(errors.New("openai: the stream sent a chunk that does not fit the ones before"))
		}
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				continue
			}
			if c.Delta.Content != "" {
				yielded = true
				if !yield(engine.TextEvent(c.Delta.Content), nil) {
					return final{errStopped}
				}
			}
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil && (finish == "" || ctx.Err() != nil) {
		// An error after the finish reason only loses the usage report.
		return fail(apiError(err))
	}
	if finish == "" {
		return fail(ErrStreamCut)
	}
	var msg openai.ChatCompletionMessage
	if len(acc.Choices) > 0 {
		msg = acc.Choices[0].Message
	}
	for _, tc := range msg.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		call := engine.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: toolArguments(tc.Function.Arguments)}
		if !yield(engine.ToolCallEvent(call), nil) {
			return final{errStopped}
		}
	}
	reason := finishReason(finish)
	if msg.Refusal != "" {
		reason = engine.FinishRefused
	}
	u := acc.Usage
	yield(engine.ModelEvent{Kind: engine.EventFinish, Finish: reason, Usage: engine.Usage{
		InputTokens: int(u.PromptTokens), OutputTokens: int(u.CompletionTokens),
		CachedTokens: int(u.PromptTokensDetails.CachedTokens),
	}}, nil)
	return nil
}

// toolArguments returns a call's arguments as JSON. Arguments that are not JSON are passed on as
// a JSON string, which the engine's schema check rejects and explains to the model.
func toolArguments(s string) json.RawMessage {
	if s == "" {
		return json.RawMessage(`{}`)
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

func finishReason(s string) engine.FinishReason {
	switch s {
	case "tool_calls", "function_call":
		return engine.FinishToolCalls
	case "length":
		return engine.FinishLength
	case "content_filter":
		return engine.FinishRefused
	}
	return engine.FinishStop
}
