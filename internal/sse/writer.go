package sse

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/convengine/engine/widgets"
)

// Event names of the turn stream.
const (
	eventStart  = "start"
	eventStatus = "status"
	eventSpeak  = "speak"
	eventWidget = "widget"
	eventError  = "error"
	eventDone   = "done"
)

// Writer writes the events of a turn stream as server-sent events, numbered from 1, each
// flushed at once. It is safe for concurrent use: tool calls running in parallel report their
// status through it while the keep-alive timer may write a ping. After a write failed (the
// client went away) every method does nothing and returns that error.
type Writer struct {
	widgetData [][]byte // the widgets sent so far, encoded, for Done
	mu         sync.Mutex
	w          http.ResponseWriter
	rc         http.ResponseController
	id         int
	buf        []byte // the event being written; its first bytes live in small
	last       time.Time
	err        error
	clock      func() time.Time
	// writeTimeout bounds each write; onFail runs once when a write fails.
	writeTimeout time.Duration
	onFail       func()

	// The keep-alive: a timer whose function pings after idle of silence, until stopped.
	idle    time.Duration
	timer   *time.Timer
	stopped bool

	small [512]byte
}

// NewWriter sends the headers of an event stream with status 200 and returns its writer. Each
// write may wait writeTimeout (none when 0) for a client that does not read; it then fails, as
// every later one does, and onFail (when not nil) runs, to stop the work that feeds the stream.
// The caller calls Close when the stream is over.
func NewWriter(w http.ResponseWriter, clock func() time.Time, writeTimeout time.Duration, onFail func()) *Writer {
	h := w.Header()
	h["Content-Type"] = []string{"text/event-stream"}
	h["Cache-Control"] = []string{"no-cache"}
	h["X-Accel-Buffering"] = []string{"no"}
	h.Del("Content-Length")
	w.WriteHeader(http.StatusOK)
	s := &Writer{w: w, rc: *http.NewResponseController(w), clock: clock, last: clock(), writeTimeout: writeTimeout, onFail: onFail}
	s.buf = s.small[:0]
	return s
}

// Start writes the start event.
func (s *Writer) Start(turnID, conversationID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endLocked(AppendStart(s.header(eventStart), turnID, conversationID))
}

// Speak writes a speak event.
func (s *Writer) Speak(delta string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endLocked(AppendSpeak(s.header(eventSpeak), delta))
}

// Status writes a status event: a tool is running.
func (s *Writer) Status(text, tool string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.endLocked(AppendStatus(s.header(eventStatus), text, tool))
}

// Widget writes a widget event and keeps its bytes for Done, so that each widget is encoded
// once per turn.
func (s *Writer) Widget(w widgets.Widget) error {
	data, err := EncodeWidget(w)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.widgetData = append(s.widgetData, data)
	return s.endLocked(append(s.header(eventWidget), data...))
}

// Fail writes an error event.
func (s *Writer) Fail(code, message string, retryable bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.endLocked(AppendError(s.header(eventError), code, message, retryable))
}

// Done writes the done event around the widgets already sent; a spec whose widgets were not
// all sent first is encoded whole.
func (s *Writer) Done(spec widgets.Spec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.widgetData) != len(spec.Widgets) {
		b, err := AppendDone(s.header(eventDone), &spec)
		if err != nil {
			s.id-- // nothing was sent under this id
			return err
		}
		return s.endLocked(b)
	}
	return s.endLocked(appendSpec(s.header(eventDone), &spec, s.widgetData))
}

// Replay writes an event of a turn as it was sent before, under its own id: a resumed
// stream carries the ids of the first, so that Last-Event-ID means the same on both. data is
// one line of JSON.
func (s *Writer) Replay(id int, name string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.id = id - 1
	return s.endLocked(append(s.header(name), data...))
}

// header starts the next event in s.buf: its id, its name and the data field's name. The
// caller holds s.mu.
func (s *Writer) header(name string) []byte {
	s.id++
	b := append(s.buf[:0], "id: "...)
	b = strconv.AppendInt(b, int64(s.id), 10)
	b = append(b, "\nevent: "...)
	b = append(b, name...)
	return append(b, "\ndata: "...)
}

// endLocked ends the event in b and sends it. The caller holds s.mu.
func (s *Writer) endLocked(b []byte) error {
	if s.err != nil {
		return s.err
	}
	b = append(b, "\n\n"...)
	s.buf = b
	return s.flushLocked(b)
}

func (s *Writer) flushLocked(b []byte) error {
	if s.writeTimeout > 0 && s.rc.SetWriteDeadline(time.Now().Add(s.writeTimeout)) != nil {
		s.writeTimeout = 0 // a writer that cannot take deadlines (a recorder, a host's wrapper) just writes
	}
	_, err := s.w.Write(b)
	if err == nil {
		err = s.rc.Flush()
	}
	if err != nil {
		s.err = err
		if s.onFail != nil {
			s.onFail()
		}
		return err
	}
	s.last = s.clock()
	return nil
}

// Close ends the writer's use of the connection: the keep-alive stops, and the write deadline
// is lifted so that it does not apply to the connection's next request.
func (s *Writer) Close() {
	if s.timer != nil {
		s.stopKeepAlive()
	}
	if s.writeTimeout > 0 {
		s.rc.SetWriteDeadline(time.Time{})
	}
}

// KeepAlive pings while the stream is silent for idle. The returned function stops it; once
// it returned, the keep-alive writes nothing more.
func (s *Writer) KeepAlive(idle time.Duration) (stop func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idle = idle
	s.timer = time.AfterFunc(idle, s.pingIfIdle)
	return s.stopKeepAlive
}

// pingIfIdle writes ": ping" when nothing was written for at least idle, and sets the timer
// for the next check.
func (s *Writer) pingIfIdle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.err != nil {
		return
	}
	next := s.idle
	if since := s.clock().Sub(s.last); since < s.idle {
		next = s.idle - since
	} else {
		s.flushLocked([]byte(": ping\n\n"))
	}
	s.timer.Reset(next)
}

func (s *Writer) stopKeepAlive() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	s.timer.Stop()
}
