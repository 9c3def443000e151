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

// Writer writes the events of a turn stream as server-sent events, numbered from 1. Events
// produced together go out in one write and one flush, and none waits for the producer's next
// wait: the first speak event, and the first event after a pause of the producer, are flushed
// by the call that writes them; a later event is flushed by a goroutine of the writer, which
// takes with it every event written meanwhile, so that a burst of deltas the model produced
// back to back is one write, while a delta followed by a wait for the model leaves during that
// wait. Widget and error events, which the done event (and an
// apology) follow at once, wait for it: Done flushes them with it.
//
// It is safe for concurrent use: tool calls running in parallel report their status through it
// while the keep-alive timer may write a ping. After a write failed (the client went away) every
// method does nothing and returns that error. No goroutine of the writer outlives Close.
type Writer struct {
	// wmu is held while writing to the connection, before mu: the producer writes events into
	// pending while the previous ones are being written.
	wmu          sync.Mutex
	w            http.ResponseWriter
	rc           http.ResponseController
	writeTimeout time.Duration // bounds each write; onFail runs once when a write fails
	onFail       func()

	mu         sync.Mutex
	widgetData [][]byte // the widgets sent so far, encoded, for Done
	id         int
	pending    []byte // events written, not yet sent
	spare      []byte // the buffer being sent, or the last one, for the next events
	hold       bool   // pending ends with a widget or an error: done follows at once
	spoke      bool   // a speak event was sent
	flushing   bool   // a goroutine is on its way to send pending
	closed     bool
	last       time.Time // of the last write
	produced   time.Time // of the last event
	err        error
	clock      func() time.Time
	flushers   sync.WaitGroup

	// The keep-alive: a timer whose function pings after idle of silence, until stopped.
	idle    time.Duration
	timer   *time.Timer
	stopped bool

	small [4096]byte // pending's first bytes: a turn of a few dozen deltas fits
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
	s := &Writer{w: w, rc: *http.NewResponseController(w), clock: clock, writeTimeout: writeTimeout, onFail: onFail}
	s.last = clock()
	s.produced = s.last
	s.pending = s.small[:0]
	return s
}

// Start writes the start event, with the tenant's AI disclosure when it is not "".
func (s *Writer) Start(turnID, conversationID, disclosure string) error {
	s.mu.Lock()
	if s.err != nil {
		defer s.mu.Unlock()
		return s.err
	}
	s.pending = AppendStart(s.header(eventStart), turnID, conversationID, disclosure)
	return s.endUnlock(eventStart)
}

// Speak writes a speak event.
func (s *Writer) Speak(delta string) error {
	s.mu.Lock()
	if s.err != nil {
		defer s.mu.Unlock()
		return s.err
	}
	s.pending = AppendSpeak(s.header(eventSpeak), delta)
	return s.endUnlock(eventSpeak)
}

// Status writes a status event: a tool is running.
func (s *Writer) Status(text, tool string) {
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return
	}
	s.pending = AppendStatus(s.header(eventStatus), text, tool)
	_ = s.endUnlock(eventStatus)
}

// Widget writes a widget event and keeps its bytes for Done, so that each widget is encoded
// once per turn.
func (s *Writer) Widget(w widgets.Widget) error {
	data, err := EncodeWidget(w)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.err != nil {
		defer s.mu.Unlock()
		return s.err
	}
	s.widgetData = append(s.widgetData, data)
	s.pending = append(s.header(eventWidget), data...)
	return s.endUnlock(eventWidget)
}

// Fail writes an error event.
func (s *Writer) Fail(code, message string, retryable bool) {
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return
	}
	s.pending = AppendError(s.header(eventError), code, message, retryable)
	_ = s.endUnlock(eventError)
}

// Done writes the done event around the widgets already sent, and sends it with the events
// before it; a spec whose widgets were not all sent first is encoded whole.
func (s *Writer) Done(spec widgets.Spec) error {
	s.mu.Lock()
	if s.err != nil {
		defer s.mu.Unlock()
		return s.err
	}
	if len(s.widgetData) != len(spec.Widgets) {
		n := len(s.pending)
		b, err := AppendDone(s.header(eventDone), &spec)
		if err != nil {
			s.id-- // nothing was sent under this id
			s.pending = b[:n]
			s.mu.Unlock()
			return err
		}
		s.pending = b
	} else {
		s.pending = appendSpec(s.header(eventDone), &spec, s.widgetData)
	}
	return s.endUnlock(eventDone)
}

// Replay writes an event of a turn as it was sent before, under its own id: a resumed
// stream carries the ids of the first, so that Last-Event-ID means the same on both. data is
// one line of JSON. The event is sent as one of its name written by its own method is.
func (s *Writer) Replay(id int, name string, data []byte) error {
	s.mu.Lock()
	if s.err != nil {
		defer s.mu.Unlock()
		return s.err
	}
	s.id = id - 1
	s.pending = append(s.header(name), data...)
	return s.endUnlock(name)
}

// Flush sends the events written so far, and returns once they are sent or the write failed:
// the caller is about to wait for its next events.
func (s *Writer) Flush() error {
	s.mu.Lock()
	s.hold = false
	return s.flushUnlock()
}

// header starts the next event in s.pending: its id, its name and the data field's name. The
// caller holds s.mu.
func (s *Writer) header(name string) []byte {
	s.id++
	b := append(s.pending, "id: "...)
	b = strconv.AppendInt(b, int64(s.id), 10)
	b = append(b, "\nevent: "...)
	b = append(b, name...)
	return append(b, "\ndata: "...)
}

// endUnlock ends the event at the end of s.pending and unlocks s.mu. The event is sent before
// endUnlock returns when it is done, the first speak event, the first after a pause of the
// producer, or one past maxPending bytes that wait; a widget or an error waits for the done
// event that follows it at once; any other event is sent by a goroutine of the writer, with
// those written meanwhile.
func (s *Writer) endUnlock(name string) error {
	s.pending = append(s.pending, "\n\n"...)
	switch name {
	case eventWidget, eventError:
		s.hold = true
	case eventDone:
		s.hold = false
	}
	first := name == eventSpeak && !s.spoke
	if name == eventSpeak {
		s.spoke = true
	}
	now := s.clock()
	paused := now.Sub(s.produced) >= pause
	s.produced = now
	switch {
	case name == eventDone, (first || paused && !s.flushing) && !s.hold, len(s.pending) >= maxPending:
		return s.flushUnlock()
	case !s.hold && !s.flushing && !s.closed:
		s.flushing = true
		s.flushers.Add(1)
		go s.flushLater()
	}
	s.mu.Unlock()
	return nil
}

// pause is the silence of the producer after which its next event is taken to start a new
// burst, and is sent by the call that writes it: a model's deltas come in bursts that many
// deltas read at once make, apart by its token rate; those of a burst come microseconds apart.
const pause = time.Millisecond

// maxPending bounds the bytes that wait for a write under way: past it the producer waits for
// the client, as it would without a buffer.
const maxPending = 64 << 10

// flushUnlock sends what is pending, once the write under way is over. The caller holds s.mu,
// which it unlocks.
func (s *Writer) flushUnlock() error {
	s.mu.Unlock()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.err
	}
	return s.sendLocked(nil)
}

// flushLater sends what is pending, from its own goroutine, until nothing more is, or what is
// pending waits for done.
func (s *Writer) flushLater() {
	defer s.flushers.Done()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.pending) > 0 && !s.hold && !s.closed && s.err == nil {
		s.sendLocked(nil)
	}
	s.flushing = false
}

// sendLocked writes what is pending, followed by tail, and flushes it. The caller holds s.wmu
// and s.mu; s.mu is released during the write, so that the events that come meanwhile go to
// another buffer.
func (s *Writer) sendLocked(tail []byte) error {
	if s.err != nil {
		return s.err
	}
	b := append(s.pending, tail...)
	if len(b) == 0 {
		return nil
	}
	s.pending, s.spare = s.spare[:0], nil
	s.mu.Unlock()
	err := s.write(b)
	s.mu.Lock()
	if len(s.pending) == 0 {
		// Nothing came during the write: the next events reuse b.
		s.pending, s.spare = b[:0], s.pending
	} else {
		s.spare = b[:0]
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

// write writes b to the connection and flushes it. The caller holds s.wmu.
func (s *Writer) write(b []byte) error {
	if s.writeTimeout > 0 && s.rc.SetWriteDeadline(time.Now().Add(s.writeTimeout)) != nil {
		s.writeTimeout = 0 // a writer that cannot take deadlines (a recorder, a host's wrapper) just writes
	}
	_, err := s.w.Write(b)
	if err == nil {
		err = s.rc.Flush()
	}
	return err
}

// Close sends what is pending and ends the writer's use of the connection: the keep-alive
// stops, and the write deadline is lifted so that it does not apply to the connection's next
// request.
func (s *Writer) Close() {
	if s.timer != nil {
		s.stopKeepAlive()
	}
	s.wmu.Lock()
	s.mu.Lock()
	s.sendLocked(nil)
	s.closed = true
	s.mu.Unlock()
	if s.writeTimeout > 0 {
		s.rc.SetWriteDeadline(time.Time{})
	}
	s.wmu.Unlock()
	s.flushers.Wait()
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
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.err != nil || s.closed {
		return
	}
	next := s.idle
	if since := s.clock().Sub(s.last); since < s.idle {
		next = s.idle - since
	} else {
		s.sendLocked(ping)
	}
	s.timer.Reset(next)
}

var ping = []byte(": ping\n\n")

func (s *Writer) stopKeepAlive() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	s.timer.Stop()
}
