package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/convengine/engine/internal/sse"
	"github.com/convengine/engine/widgets"
)

// Event is one event of a turn, as [Engine.Turn] yields it and the turn stream of POST
// /engine sends it: the same events, in the same order, with the same data. Type is one of
// EventStart, EventStatus, EventSpeak, EventWidget, EventError and EventDone; the fields of
// that type are set and the others are zero.
type Event struct {
	Type string
	// TurnID and ConversationID: start. The done event's Spec.Meta holds them too.
	TurnID         string
	ConversationID string
	// Transcript and Locale: start, for transports. Transcript is what the user said as the
	// turn takes it (of speech, what the transcriber heard; "" when it did not understand),
	// Locale the language of the answer. The stream's start event does not carry them; the
	// done event's Spec.Meta holds them.
	Transcript string
	Locale     string
	// Disclosure: start, on a conversation's first turn when the tenant has one
	// (Tenant.Disclosure): the line telling the user they talk to an AI, to show before the
	// answer and, on voice, to say first.
	Disclosure string
	// Delta: speak. The deltas of a turn, joined, are its Spec.Speak.
	Delta string
	// Status and Tool: status, when a data tool starts running.
	Status string
	Tool   string
	// Widget: widget, each widget of the spec before done.
	Widget widgets.Widget
	// Error: error, when the turn failed; the apology's deltas and done follow.
	Error *TurnError
	// Spec: done, the render spec; always the last event.
	Spec *widgets.Spec
}

// TurnError is the data of an error event, and the last error [Engine.Turn] yields for a turn
// that failed once started.
type TurnError struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
	// RequestID is the request id of the turn that failed (the caller's, or the one the engine
	// made), as a Problem carries it, so that a host can find the turn in the engine's log. It is
	// not in the error event's data: the response's X-Request-ID carries it there.
	RequestID string `json:"-"`
}

func (e *TurnError) Error() string { return "engine: turn failed: " + e.Code + ": " + e.Message }

// Data returns the event's data as the turn stream's data line carries it: the JSON object
// docs/protocol.md gives for each event.
func (ev Event) Data() ([]byte, error) {
	switch ev.Type {
	case EventStart:
		return sse.AppendStart(nil, ev.TurnID, ev.ConversationID, ev.Disclosure), nil
	case EventStatus:
		return sse.AppendStatus(nil, ev.Status, ev.Tool), nil
	case EventSpeak:
		return sse.AppendSpeak(nil, ev.Delta), nil
	case EventWidget:
		if ev.Widget == nil {
			return nil, errors.New("engine: a widget event without a widget")
		}
		return sse.EncodeWidget(ev.Widget)
	case EventError:
		if ev.Error == nil {
			return nil, errors.New("engine: an error event without its error")
		}
		return sse.AppendError(nil, ev.Error.Code, ev.Error.Message, ev.Error.Retryable), nil
	case EventDone:
		if ev.Spec == nil {
			return nil, errors.New("engine: a done event without a spec")
		}
		return sse.AppendDone(nil, ev.Spec)
	}
	return nil, fmt.Errorf("engine: unknown turn event %q", ev.Type)
}

// MarshalJSON writes the event as {"event": type, "data": data}, data being what [Event.Data]
// returns: one JSON line per event, as a host relaying turns over its own transport may send
// them.
func (ev Event) MarshalJSON() ([]byte, error) {
	data, err := ev.Data()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(data)+len(ev.Type)+20)
	b = append(b, `{"event":"`...)
	b = append(b, ev.Type...)
	b = append(b, `","data":`...)
	b = append(b, data...)
	return append(b, '}'), nil
}

// turnConsumer takes the events of a running turn: the range loop of [Engine.Turn], the
// turn stream's writer or the voice socket's sink.
type turnConsumer interface {
	// started is given the turn before its start event; its fields are final once the turn
	// returned.
	started(t *turn)
	// yield takes an event, or the problem of a turn that could not start; false stops the
	// turn.
	yield(ev Event, err error) bool
}

// seqConsumer is the consumer of a range loop over [Engine.Turn].
type seqConsumer struct {
	loop    func(Event, error) bool
	onStart func(*turn)
}

func (c *seqConsumer) started(t *turn) {
	if c.onStart != nil {
		c.onStart(t)
	}
}

func (c *seqConsumer) yield(ev Event, err error) bool { return c.loop(ev, err) }

// eventSink is the turn sink that hands each event to the turn's consumer. Once the consumer
// has stopped (a loop body broke out, a write failed), the turn is cancelled and nothing more
// is handed over. It lives in the turn, and all its methods run on the turn's goroutine.
type eventSink struct {
	to     turnConsumer
	ctx    context.Context    // the turn's
	cancel context.CancelFunc // the turn's
	// requestID is the turn's request id, which its TurnError carries.
	requestID string
	gone      bool
	spec      widgets.Spec // done's, which the event points to
	finished  bool         // done was sent
}

// deadline returns the turn's deadline.
func (s *eventSink) deadline() (time.Time, bool) { return s.ctx.Deadline() }

func (s *eventSink) send(ev Event) error {
	if s.gone {
		return errClientGone
	}
	if !s.to.yield(ev, nil) {
		s.gone = true
		s.cancel()
		return errClientGone
	}
	return nil
}

func (s *eventSink) Speak(delta string) error { return s.send(Event{Type: EventSpeak, Delta: delta}) }

func (s *eventSink) Status(text, tool string) {
	_ = s.send(Event{Type: EventStatus, Status: text, Tool: tool})
}

func (s *eventSink) Widget(w widgets.Widget) error {
	return s.send(Event{Type: EventWidget, Widget: w})
}

func (s *eventSink) Fail(code, message string, retryable bool) {
	_ = s.send(Event{Type: EventError, Error: &TurnError{Code: code, Message: message, Retryable: retryable, RequestID: s.requestID}})
}

func (s *eventSink) Done(spec widgets.Spec) error {
	s.spec, s.finished = spec, true
	return s.send(Event{Type: EventDone, Spec: &s.spec})
}

// done returns the spec of the done event sent, nil before it.
func (s *eventSink) done() *widgets.Spec {
	if !s.finished {
		return nil
	}
	return &s.spec
}
