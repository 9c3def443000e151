package engine

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Event names of the turn stream (PROTOCOL 4).
const (
	EventStart  = "start"
	EventStatus = "status"
	EventSpeak  = "speak"
	EventWidget = "widget"
	EventError  = "error"
	EventDone   = "done"
)

// sseWriter writes server-sent events, numbered from 1, each flushed at once. It is safe for
// concurrent use: tool calls running in parallel report their status through it while the
// keep-alive timer may write a ping.
type sseWriter struct {
	widgetData [][]byte // the widgets sent so far, encoded, for done
	mu         sync.Mutex
	w          http.ResponseWriter
	rc         http.ResponseController
	id         int
	buf        []byte // the event being written; its first bytes live in small
	last       time.Time
	err        error
	clock      func() time.Time

	// The keep-alive: a timer whose function pings after idle of silence, until stopped.
	idle    time.Duration
	timer   *time.Timer
	stopped bool

	small [512]byte
}

func newSSEWriter(w http.ResponseWriter, clock func() time.Time) *sseWriter {
	h := w.Header()
	h["Content-Type"] = []string{"text/event-stream"}
	h["Cache-Control"] = []string{"no-cache"}
	h["X-Accel-Buffering"] = []string{"no"}
	h.Del("Content-Length")
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, rc: *http.NewResponseController(w), clock: clock, last: clock()}
	s.buf = s.small[:0]
	return s
}

// event writes one event whose data is v as one line of JSON. After a write failed (the client
// went away) it does nothing and returns that error.
func (s *sseWriter) event(name string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.raw(name, data)
}

// raw writes one event whose data is already one line of JSON.
func (s *sseWriter) raw(name string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	b := append(s.header(name), data...)
	return s.endLocked(b)
}

// encoded writes one event whose data enc appends, as one line of JSON, to the buffer it is
// given.
func (s *sseWriter) encoded(name string, enc func([]byte) []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	return s.endLocked(enc(s.header(name)))
}

// speak writes a speak event. It is the hot path of a turn: the data is encoded in place,
// without reflection or a copy.
func (s *sseWriter) speak(delta string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	b := append(s.header(EventSpeak), `{"delta":`...)
	b = appendJSONString(b, delta)
	return s.endLocked(append(b, '}'))
}

// start writes the start event.
func (s *sseWriter) start(turnID, conversationID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := append(s.header(EventStart), `{"conversationId":`...)
	b = appendJSONString(b, conversationID)
	b = append(b, `,"turnId":`...)
	b = appendJSONString(b, turnID)
	return s.endLocked(append(b, '}'))
}

// statusEvent writes a status event.
func (s *sseWriter) statusEvent(text, tool string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	b := append(s.header(EventStatus), `{"text":`...)
	b = appendJSONString(b, text)
	b = append(b, `,"tool":`...)
	b = appendJSONString(b, tool)
	return s.endLocked(append(b, '}'))
}

// header starts the next event in s.buf: its id, its name and the data field's name. The
// caller holds s.mu.
func (s *sseWriter) header(name string) []byte {
	s.id++
	b := append(s.buf[:0], "id: "...)
	b = strconv.AppendInt(b, int64(s.id), 10)
	b = append(b, "\nevent: "...)
	b = append(b, name...)
	return append(b, "\ndata: "...)
}

// endLocked ends the event in b and sends it. The caller holds s.mu.
func (s *sseWriter) endLocked(b []byte) error {
	if s.err != nil {
		return s.err
	}
	b = append(b, "\n\n"...)
	s.buf = b
	return s.flushLocked(b)
}

func (s *sseWriter) flushLocked(b []byte) error {
	if _, err := s.w.Write(b); err != nil {
		s.err = err
		return err
	}
	if err := s.rc.Flush(); err != nil {
		s.err = err
		return err
	}
	s.last = s.clock()
	return nil
}

// keepAlive pings while the stream is silent for idle. The returned function stops it; once
// it returned, the keep-alive writes nothing more.
func (s *sseWriter) keepAlive(idle time.Duration) (stop func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idle = idle
	s.timer = time.AfterFunc(idle, s.pingIfIdle)
	return s.stopKeepAlive
}

// pingIfIdle writes ": ping" when nothing was written for at least idle, and sets the timer
// for the next check.
func (s *sseWriter) pingIfIdle() {
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

func (s *sseWriter) stopKeepAlive() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	s.timer.Stop()
}

// appendJSONString appends s to b as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json writes it; U+2028 and U+2029 are escaped so the line is safe in JavaScript too.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
