package agui

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/google/uuid"
)

// event is an AG-UI event, with the fields the handler sends; the zero ones are left out.
type event struct {
	Type            string          `json:"type"`
	Timestamp       int64           `json:"timestamp,omitempty"`
	ThreadID        string          `json:"threadId,omitempty"`
	RunID           string          `json:"runId,omitempty"`
	ProtocolVersion string          `json:"protocolVersion,omitempty"`
	MessageID       string          `json:"messageId,omitempty"`
	Role            string          `json:"role,omitempty"`
	Delta           string          `json:"delta,omitempty"`
	Name            string          `json:"name,omitempty"`
	Value           json.RawMessage `json:"value,omitempty"`
	Message         string          `json:"message,omitempty"`
	Code            string          `json:"code,omitempty"`
	Result          json.RawMessage `json:"result,omitempty"`
	Outcome         *outcome        `json:"outcome,omitempty"`
	Metadata        map[string]any  `json:"metadata,omitempty"`
}

// outcome is RUN_FINISHED's outcome: "success" or "interrupt" with its interrupts.
type outcome struct {
	Type       string      `json:"type"`
	Interrupts []interrupt `json:"interrupts,omitempty"`
}

// interrupt is AG-UI's Interrupt.
type interrupt struct {
	ID             string         `json:"id"`
	Reason         string         `json:"reason"`
	Message        string         `json:"message,omitempty"`
	ResponseSchema map[string]any `json:"responseSchema,omitempty"`
	ExpiresAt      string         `json:"expiresAt,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
}

// stream writes the events of one run as server-sent events, each a data line of JSON, and
// keeps the state AG-UI's clients check: the text message open, if any. After a failed
// write it writes nothing more.
type stream struct {
	w        http.ResponseWriter
	rc       *http.ResponseController
	threadID string
	runID    string
	open     string // the id of the text message started and not ended
	broken   bool
	started  bool
}

func newStream(w http.ResponseWriter, threadID, runID string) *stream {
	return &stream{w: w, rc: http.NewResponseController(w), threadID: threadID, runID: runID}
}

// send writes ev; false when the client is gone.
func (s *stream) send(ev event) bool {
	if s.broken {
		return false
	}
	if !s.started {
		s.started = true
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no")
		s.w.WriteHeader(http.StatusOK)
	}
	ev.Timestamp = time.Now().UnixMilli()
	data, err := json.Marshal(ev)
	if err == nil {
		buf := make([]byte, 0, len(data)+8)
		buf = append(append(append(buf, "data: "...), data...), "\n\n"...)
		_, err = s.w.Write(buf)
	}
	if err == nil {
		err = s.rc.Flush()
	}
	if err != nil {
		s.broken = true
		return false
	}
	return true
}

func (s *stream) runStarted(meta map[string]any) bool {
	return s.send(event{Type: "RUN_STARTED", ThreadID: s.threadID, RunID: s.runID, ProtocolVersion: ProtocolVersion, Metadata: meta})
}

// text appends delta to the assistant's text message, starting one if none is open.
func (s *stream) text(delta string) bool {
	if delta == "" {
		return !s.broken
	}
	if s.open == "" {
		s.open = uuid.NewString()
		if !s.send(event{Type: "TEXT_MESSAGE_START", MessageID: s.open, Role: "assistant"}) {
			return false
		}
	}
	return s.send(event{Type: "TEXT_MESSAGE_CONTENT", MessageID: s.open, Delta: delta})
}

// endText ends the open text message, if any.
func (s *stream) endText() bool {
	if s.open == "" {
		return !s.broken
	}
	id := s.open
	s.open = ""
	return s.send(event{Type: "TEXT_MESSAGE_END", MessageID: id})
}

func (s *stream) custom(name string, value json.RawMessage) bool {
	return s.send(event{Type: "CUSTOM", Name: name, Value: value})
}

// finished ends the run: success, or an interrupt when interrupts are given.
func (s *stream) finished(result json.RawMessage, interrupts []interrupt) bool {
	if !s.endText() {
		return false
	}
	o := &outcome{Type: "success"}
	if len(interrupts) > 0 {
		o = &outcome{Type: "interrupt", Interrupts: interrupts}
	}
	return s.send(event{Type: "RUN_FINISHED", ThreadID: s.threadID, RunID: s.runID, Result: result, Outcome: o})
}

// failed ends the run with RUN_ERROR.
func (s *stream) failed(code, message string) bool {
	if !s.endText() {
		return false
	}
	if message == "" {
		message = code
	}
	return s.send(event{Type: "RUN_ERROR", Message: message, Code: code})
}
