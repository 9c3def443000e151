package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/convengine/engine/internal/sse"
	"github.com/convengine/engine/widgets"
)

// TurnRequest is the body of a turn (the engine's POST /engine).
type TurnRequest struct {
	// Transcript is the user's typed text or final speech-to-text result.
	Transcript string
	// Audio is a 16 kHz mono 16-bit PCM WAV file for the engine to transcribe instead.
	Audio []byte
	// Mode is "text" (the default), "voice" or "home".
	Mode string
	// Messages are the prior turns, oldest first.
	Messages []Message
	Context  *TurnContext
	Meta     *TurnMeta
}

// Message is one prior turn of the conversation.
type Message struct {
	// Role is "user" or "assistant".
	Role    string `json:"role"`
	Content string `json:"content"`
}

// TurnContext is what the app knows about where the user is.
type TurnContext struct {
	// SessionID names the conversation; the spec's meta.conversationId repeats it.
	SessionID   string `json:"sessionId,omitempty"`
	Screen      any    `json:"screen,omitempty"`
	CountryCode string `json:"country_code,omitempty"`
}

// TurnMeta describes the app.
type TurnMeta struct {
	SDKVersion string `json:"sdkVersion,omitempty"`
	Platform   string `json:"platform,omitempty"`
	// Locale is a BCP 47 tag such as "en-US".
	Locale string `json:"locale,omitempty"`
}

// MarshalJSON writes the request as the engine reads it.
func (r TurnRequest) MarshalJSON() ([]byte, error) {
	type wire struct {
		Transcript  string       `json:"transcript,omitempty"`
		AudioBase64 string       `json:"audio_base64,omitempty"`
		Mode        string       `json:"mode,omitempty"`
		Messages    []Message    `json:"messages,omitempty"`
		Context     *TurnContext `json:"context,omitempty"`
		Meta        *TurnMeta    `json:"meta,omitempty"`
	}
	w := wire{Transcript: r.Transcript, Mode: r.Mode, Messages: r.Messages, Context: r.Context, Meta: r.Meta}
	if r.Audio != nil {
		w.AudioBase64 = base64.StdEncoding.EncodeToString(r.Audio)
	}
	return json.Marshal(w)
}

// An Event is one event of a turn stream: a [*StartEvent], [*StatusEvent], [*SpeakEvent],
// [*WidgetEvent], [*ErrorEvent], [*DoneEvent], or an [*UnknownEvent] of a newer engine.
type Event interface {
	// EventName returns the event's name on the wire, such as "speak".
	EventName() string
}

// StartEvent opens a turn.
type StartEvent struct {
	ID             string `json:"-"`
	TurnID         string `json:"turnId"`
	ConversationID string `json:"conversationId"`
}

// StatusEvent says what the engine is doing while a tool runs; it is not part of the spec.
type StatusEvent struct {
	ID   string `json:"-"`
	Text string `json:"text"`
	Tool string `json:"tool"`
}

// SpeakEvent is a delta of the spoken answer, sent as soon as the model wrote it.
type SpeakEvent struct {
	ID    string `json:"-"`
	Delta string `json:"delta"`
}

// WidgetEvent carries one widget, after the last speak delta.
type WidgetEvent struct {
	ID     string
	Widget widgets.Widget
}

// ErrorEvent reports a failure after the stream started; a [DoneEvent] with an apology follows.
// On the voice socket an error before the turn's transcript ends the turn by itself.
type ErrorEvent struct {
	ID string `json:"-"`
	// TurnID is the turn the error concerns, on the voice socket; empty when it concerns none.
	TurnID    string `json:"-"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
}

// DoneEvent ends the turn with the whole render spec.
type DoneEvent struct {
	ID   string
	Spec widgets.Spec
	// TurnID is the turn's id, on the voice socket (where Spec is that of the [*SpecEvent]
	// before it).
	TurnID string
}

// UnknownEvent is an event this version of the client does not know.
type UnknownEvent struct {
	ID   string
	Name string
	Data json.RawMessage
}

// Event names of the turn stream.
const (
	EventStart  = "start"
	EventStatus = "status"
	EventSpeak  = "speak"
	EventWidget = "widget"
	EventError  = "error"
	EventDone   = "done"
)

// EventName returns "start".
func (*StartEvent) EventName() string { return EventStart }

// EventName returns "status".
func (*StatusEvent) EventName() string { return EventStatus }

// EventName returns "speak".
func (*SpeakEvent) EventName() string { return EventSpeak }

// EventName returns "widget".
func (*WidgetEvent) EventName() string { return EventWidget }

// EventName returns "error".
func (*ErrorEvent) EventName() string { return EventError }

// EventName returns "done".
func (*DoneEvent) EventName() string { return EventDone }

// EventName returns the name the event arrived with.
func (e *UnknownEvent) EventName() string { return e.Name }

// ErrEventTooLarge is returned for a stream event larger than [Options.MaxEventSize].
var ErrEventTooLarge = sse.ErrEventTooLarge

// ErrIncompleteStream is returned when a turn stream ends before its done event.
var ErrIncompleteStream = errors.New("client: the turn stream ended before done")

// TurnStream is a running turn. Read it with [TurnStream.Events] or [TurnStream.Spec], from one
// goroutine, and close it, from any goroutine: a read in progress then ends.
type TurnStream struct {
	mu     sync.Mutex // guards body and closed against Close
	body   io.ReadCloser
	closed bool
	events *sse.Reader

	// What resuming the turn needs: the client, the turn's context, its id, the id of the
	// last event read, and the resumes tried since an event last came.
	c       *Client
	ctx     context.Context
	turnID  string
	lastID  string
	resumes int

	speak   strings.Builder
	widgets []widgets.Widget
	spec    *widgets.Spec
	err     error
}

// Turn runs a turn. A problem found before the stream started (headers, body, session) is
// returned as an [*Error], after the retry rules of the package; later failures come as an
// [*ErrorEvent] in the stream.
func (c *Client) Turn(ctx context.Context, req *TurnRequest) (*TurnStream, error) {
	if req == nil {
		req = &TurnRequest{}
	}
	resp, err := c.postJSON(ctx, PathTurn, req, "text/event-stream")
	if err != nil {
		return nil, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body.Close()
		return nil, fmt.Errorf("client: the turn answered %q, not an event stream", mt)
	}
	return &TurnStream{body: resp.Body, events: sse.NewReader(resp.Body, c.maxEvent), c: c, ctx: ctx}, nil
}

// PathTurns is where the engine resumes a turn: GET PathTurns + turnId.
const PathTurns = "/engine/turns/"

// maxResumes bounds the resumes of a turn in a row that bring no event.
const maxResumes = 5

// resume asks the engine for the turn's events after the last one read: an engine that keeps
// its turns (Config.TurnLog) answers them and the rest of the turn, from any replica. A resume
// that fails for the network, or is refused for a while (a replica shutting down, a store
// failing over: 503, retryable), is tried again after a pause, up to maxResumes in a row.
func (t *TurnStream) resume() bool {
	var resp *http.Response
	for resp == nil {
		if t.resumes >= maxResumes || t.turnID == "" || t.ctx.Err() != nil || t.isClosed() {
			return false // the caller's Close broke the stream, not the network
		}
		if t.resumes > 0 {
			select {
			case <-time.After(time.Duration(t.resumes) * 500 * time.Millisecond):
			case <-t.ctx.Done():
				return false
			}
		}
		t.resumes++
		hdr := http.Header{}
		if t.lastID != "" {
			hdr.Set("Last-Event-ID", t.lastID)
		}
		var err error
		resp, err = t.c.do(t.ctx, call{method: http.MethodGet, path: PathTurns + url.PathEscape(t.turnID), accept: "text/event-stream", header: hdr})
		if perr := (*Error)(nil); errors.As(err, &perr) && !perr.Retryable {
			return false
		}
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body.Close()
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		resp.Body.Close()
		return false
	}
	t.body.Close()
	t.body, t.events = resp.Body, sse.NewReader(resp.Body, t.c.maxEvent)
	return true
}

func (t *TurnStream) isClosed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// Events returns the turn's events as they arrive. The sequence ends after the done event, or
// with an error: the connection's, [ErrEventTooLarge], or [ErrIncompleteStream] when the stream
// ended before done. Stopping early leaves the rest for a later call.
func (t *TurnStream) Events() iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for t.spec == nil && t.err == nil {
			ev, err := t.next()
			if err != nil {
				t.err = err
				yield(nil, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func (t *TurnStream) next() (Event, error) {
	raw, err := t.events.Next()
	for err != nil && !errors.Is(err, ErrEventTooLarge) && t.resume() {
		// The stream broke (a network change): the turn goes on, and is read from where it
		// was left.
		raw, err = t.events.Next()
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, ErrIncompleteStream
	}
	if err != nil {
		return nil, err
	}
	if raw.ID != "" {
		t.lastID, t.resumes = raw.ID, 0
	}
	bad := func(err error) (Event, error) {
		return nil, fmt.Errorf("client: %s event %s: %w", raw.Name, raw.ID, err)
	}
	switch raw.Name {
	case EventStart:
		ev := &StartEvent{ID: raw.ID}
		if err := json.Unmarshal(raw.Data, ev); err != nil {
			return bad(err)
		}
		t.turnID = ev.TurnID
		return ev, nil
	case EventStatus:
		ev := &StatusEvent{ID: raw.ID}
		if err := json.Unmarshal(raw.Data, ev); err != nil {
			return bad(err)
		}
		return ev, nil
	case EventSpeak:
		ev := &SpeakEvent{ID: raw.ID}
		if err := json.Unmarshal(raw.Data, ev); err != nil {
			return bad(err)
		}
		t.speak.WriteString(ev.Delta)
		return ev, nil
	case EventWidget:
		w, err := widgets.Decode(raw.Data)
		if err != nil {
			return bad(err)
		}
		t.widgets = append(t.widgets, w)
		return &WidgetEvent{ID: raw.ID, Widget: w}, nil
	case EventError:
		ev := &ErrorEvent{ID: raw.ID}
		if err := json.Unmarshal(raw.Data, ev); err != nil {
			return bad(err)
		}
		return ev, nil
	case EventDone:
		ev := &DoneEvent{ID: raw.ID}
		if err := json.Unmarshal(raw.Data, &ev.Spec); err != nil {
			return bad(err)
		}
		t.spec = &ev.Spec
		return ev, nil
	default:
		return &UnknownEvent{ID: raw.ID, Name: raw.Name, Data: json.RawMessage(raw.Data)}, nil
	}
}

// Spec reads the rest of the stream and returns the render spec of its done event. When the
// stream failed before done, it returns what arrived, assembled (the speak deltas joined and
// the widgets in order), with the error.
func (t *TurnStream) Spec() (*widgets.Spec, error) {
	for _, err := range t.Events() {
		if err != nil {
			break
		}
	}
	if t.spec != nil {
		return t.spec, nil
	}
	return &widgets.Spec{Speak: t.speak.String(), Widgets: t.widgets}, t.err
}

// Close ends the stream; a turn still running on the engine is cancelled, unless the engine
// keeps its turns (they then run to their end, for a client to resume).
func (t *TurnStream) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	return t.body.Close()
}

// closeOnly discards a response body.
func closeOnly(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}
