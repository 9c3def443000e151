package agui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"strings"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/jsonenc"
	"github.com/convengine/engine/widgets"
)

// ProtocolVersion is the AG-UI version the handler speaks, sent in RUN_STARTED.
const ProtocolVersion = "1.0"

// Names of the CUSTOM events the handler sends.
const (
	// CustomWidget carries a widget of the turn, as the turn stream's widget event has it.
	CustomWidget = "widget"
	// CustomStatus carries a turn's status: {"status": …, "tool": …} as its status event.
	CustomStatus = "status"
	// CustomSpec carries a render spec that comes after the run's turn, while a run follows
	// what goes on outside it (Options.Follow): a person's message (meta.from "person",
	// meta.name), or a handoff's change of status. Its text follows as a text message.
	CustomSpec = "spec"
	// CustomDisclosure carries the tenant's AI disclosure on a conversation's first run:
	// {"text": …}, to show before the answer.
	CustomDisclosure = "disclosure"
	// CustomDone carries the card of a confirmed action that ran: {"type", "title", "line1",
	// "line2"}.
	CustomDone = "done"
)

// ReasonConfirm is the reason of the interrupt a confirm widget ends a run with.
const ReasonConfirm = "confirmation_required"

// Options configures [Handler]. A nil *Options means the defaults.
type Options struct {
	// MaxBodyBytes bounds the RunAgentInput body; 0 means 1 MiB.
	MaxBodyBytes int64
	// Follow, when set, is asked after each run's turn (one that asks no confirmation) what
	// comes next outside the turn: a run that handed the conversation to a person (package
	// handoff's Switchboard.Follow) stays open while the handoff does, and each spec Follow
	// yields (a person's message, a change of status) is a CUSTOM "spec" event, its widgets'
	// "widget" events and a text message of its speak, before RUN_FINISHED. The iterator ends
	// when the client goes away (its context).
	Follow func(ctx context.Context, c *engine.Caller, spec *widgets.Spec) iter.Seq[*widgets.Spec]
}

// Handler returns the handler of AG-UI runs over eng: a POST of a RunAgentInput, answered by
// a text/event-stream of AG-UI events. Who the run is for is read from the request as the
// engine's own handlers read it ([engine.Engine.CallerFromRequest]); a request the engine
// refuses before the run starts is answered with its application/problem+json. The handler
// is safe for concurrent use; each run lives in the request's goroutine, and a client that
// goes away stops its turn.
func Handler(eng *engine.Engine, opts *Options) http.Handler {
	h := &handler{eng: eng, maxBody: 1 << 20}
	if opts != nil && opts.MaxBodyBytes > 0 {
		h.maxBody = opts.MaxBodyBytes
	}
	if opts != nil {
		h.follow = opts.Follow
	}
	return h
}

type handler struct {
	eng     *engine.Engine
	maxBody int64
	follow  func(ctx context.Context, c *engine.Caller, spec *widgets.Spec) iter.Seq[*widgets.Spec]
}

// runInput is RunAgentInput, as far as the handler reads it.
type runInput struct {
	ThreadID       *string         `json:"threadId"`
	RunID          *string         `json:"runId"`
	Messages       []message       `json:"messages"`
	ForwardedProps json.RawMessage `json:"forwardedProps"`
	Resume         []resumeEntry   `json:"resume"`
}

type message struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type resumeEntry struct {
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"`
	Payload     json.RawMessage `json:"payload"`
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		engine.WriteProblem(w, engine.NewProblem(http.StatusMethodNotAllowed, engine.CodeMethodNotAllowed, "an AG-UI run is a POST"))
		return
	}
	caller, err := h.eng.CallerFromRequest(r)
	if err != nil {
		engine.WriteProblem(w, err)
		return
	}
	in, p := h.readInput(w, r)
	if p != nil {
		p.RequestID = caller.RequestID
		engine.WriteProblem(w, p)
		return
	}
	if len(in.Resume) > 0 {
		h.resume(w, r, caller, in)
		return
	}
	h.turn(w, r, caller, in)
}

// readInput decodes and checks the body.
func (h *handler) readInput(w http.ResponseWriter, r *http.Request) (*runInput, *engine.Problem) {
	if p := jsonenc.ContentType(r.Header.Get("Content-Type")); p != nil { // the engine's rule: application/json, UTF-8
		return nil, engine.NewProblem(p.Status, p.Code, p.Detail)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, h.maxBody)); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, engine.NewProblem(http.StatusRequestEntityTooLarge, engine.CodePayloadTooLarge, "the body is too large")
		}
		return nil, invalid("", "the body could not be read")
	}
	var in runInput
	if err := json.Unmarshal(buf.Bytes(), &in); err != nil {
		return nil, invalid("", "the body must be a RunAgentInput JSON object")
	}
	switch {
	case in.ThreadID == nil || !validID(*in.ThreadID):
		return nil, invalid("threadId", "must be 1 to 128 letters, digits or ._:-")
	case in.RunID == nil || *in.RunID == "" || len(*in.RunID) > 128:
		return nil, invalid("runId", "must be a string of 1 to 128 characters")
	}
	for i, e := range in.Resume {
		if e.Status != "resolved" && e.Status != "cancelled" {
			return nil, invalid("resume["+itoa(i)+"].status", `must be "resolved" or "cancelled"`)
		}
	}
	return &in, nil
}

// invalid is a 400 invalid_request problem about field.
func invalid(field, detail string) *engine.Problem {
	if field != "" {
		return engine.InvalidField(field, detail)
	}
	return engine.NewProblem(http.StatusBadRequest, engine.CodeInvalidRequest, detail)
}

// validID says whether s can name a conversation: 1 to 128 letters, digits or ._:-.
func validID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// locale returns forwardedProps.locale, if the props are an object that has one.
func (in *runInput) locale() string {
	var props struct {
		Locale string `json:"locale"`
	}
	if len(in.ForwardedProps) > 0 && json.Unmarshal(in.ForwardedProps, &props) == nil {
		return props.Locale
	}
	return ""
}

// text returns the text of a message's content: a string, or the text parts of an array.
func (m *message) text() (string, bool) {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s, true
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) != nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), b.Len() > 0
}

// turnInput makes the turn of in: its last message, a user's, is the transcript; the user's
// and assistant's text messages before it are the history, other roles are left out.
func (in *runInput) turnInput() (*engine.TurnInput, *engine.Problem) {
	n := len(in.Messages)
	if n == 0 || in.Messages[n-1].Role != "user" {
		return nil, invalid("messages", "must end with the user's message")
	}
	transcript, ok := in.Messages[n-1].text()
	if !ok || strings.TrimSpace(transcript) == "" {
		return nil, invalid("messages", "the last message must have text content")
	}
	t := &engine.TurnInput{Transcript: transcript, ConversationID: *in.ThreadID, Locale: in.locale()}
	for _, m := range in.Messages[:n-1] {
		if m.Role != "user" && m.Role != "assistant" {
			continue
		}
		if s, ok := m.text(); ok && s != "" {
			t.Messages = append(t.Messages, engine.Message{Role: engine.Role(m.Role), Content: s})
		}
	}
	return t, nil
}

// confirmOf returns the widget's confirm, if it is one.
func confirmOf(w widgets.Widget) (widgets.Confirm, bool) {
	switch c := w.(type) {
	case widgets.Confirm:
		return c, true
	case *widgets.Confirm:
		if c != nil {
			return *c, true
		}
	}
	return widgets.Confirm{}, false
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
