package enginetest

import (
	"context"
	"encoding/json"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/convengine/engine"
)

// ScriptedModel is an [engine.Model] that plays back Steps: the first completion of a turn
// yields Steps[0], the completion after the first round of tool results Steps[1], and so on.
// Steps past the end yield a plain finish. It is safe for concurrent use.
type ScriptedModel struct {
	Steps [][]engine.ModelEvent
	// Delay is waited before each event, as a model's token rate would.
	Delay time.Duration
	// FirstDelay is waited before the first event of each completion.
	FirstDelay time.Duration

	calls     atomic.Int64
	cancelled atomic.Int64
	requests  chan *engine.ModelRequest
}

// Calls returns how many completions were started.
func (m *ScriptedModel) Calls() int { return int(m.calls.Load()) }

// Cancelled returns how many completions ended because their context was cancelled.
func (m *ScriptedModel) Cancelled() int { return int(m.cancelled.Load()) }

// Stream implements [engine.Model].
func (m *ScriptedModel) Stream(ctx context.Context, req *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	m.calls.Add(1)
	step := StepOf(req.Messages)
	return func(yield func(engine.ModelEvent, error) bool) {
		var events []engine.ModelEvent
		if step < len(m.Steps) {
			events = m.Steps[step]
		}
		for i, ev := range events {
			d := m.Delay
			if i == 0 {
				d += m.FirstDelay
			}
			if err := sleep(ctx, d); err != nil {
				m.cancelled.Add(1)
				yield(engine.ModelEvent{}, err)
				return
			}
			if !yield(ev, nil) {
				if ctx.Err() != nil {
					m.cancelled.Add(1) // the engine stopped reading because the turn ended
				}
				return
			}
		}
		if len(events) == 0 || events[len(events)-1].Kind != engine.EventFinish {
			yield(engine.FinishEvent(engine.FinishStop), nil)
		}
	}
}

// StepOf returns how many rounds of tool results follow the last user message: 0 for the first
// completion of a turn, 1 after the first tool results, and so on.
func StepOf(msgs []engine.Message) int {
	n := 0
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role != engine.RoleUser; i-- {
		if msgs[i].Role == engine.RoleAssistant && len(msgs[i].ToolCalls) > 0 {
			n++
		}
	}
	return n
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Text returns events that stream s as deltas of the given words, then finish.
func Text(words ...string) []engine.ModelEvent {
	evs := make([]engine.ModelEvent, 0, len(words)+1)
	for _, w := range words {
		evs = append(evs, engine.TextEvent(w))
	}
	return append(evs, engine.FinishEvent(engine.FinishStop))
}

// ModelFunc is a Model whose completion is computed from the request, as http.HandlerFunc is a
// handler: the events it returns are streamed in order.
type ModelFunc func(ctx context.Context, req *engine.ModelRequest) []engine.ModelEvent

// Stream streams the events f returns for req.
func (f ModelFunc) Stream(ctx context.Context, req *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	evs := f(ctx, req)
	return func(yield func(engine.ModelEvent, error) bool) {
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// ToolCall is the event of a complete tool call: id, the tool's name and its arguments as JSON.
func ToolCall(id, name, args string) engine.ModelEvent {
	return engine.ToolCallEvent(engine.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)})
}

// RecordingModel is a Model that keeps the messages of every request it is sent, each
// request's as a JSON array, and answers with what Answer returns: for tests of what reached
// the model. It is safe for concurrent use.
type RecordingModel struct {
	Answer func(req *engine.ModelRequest) []engine.ModelEvent

	mu       sync.Mutex
	requests []string
}

// Stream records req's messages and streams Answer's events.
func (m *RecordingModel) Stream(ctx context.Context, req *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	b, _ := json.Marshal(req.Messages)
	m.mu.Lock()
	m.requests = append(m.requests, string(b))
	m.mu.Unlock()
	return ModelFunc(func(context.Context, *engine.ModelRequest) []engine.ModelEvent { return m.Answer(req) }).Stream(ctx, req)
}

// Requests returns the messages of the requests so far, in order.
func (m *RecordingModel) Requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.requests)
}
