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
// keep-alive goroutine may write a ping.
type sseWriter struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	rc      *http.ResponseController
	id      int
	buf     []byte
	scratch []byte // the data of a speak event
	last    time.Time
	err     error
	clock   func() time.Time
}

func newSSEWriter(w http.ResponseWriter, clock func() time.Time) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Del("Content-Length")
	w.WriteHeader(http.StatusOK)
	return &sseWriter{w: w, rc: http.NewResponseController(w), clock: clock, last: clock(), buf: make([]byte, 0, 512)}
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

// speak writes a speak event. It is the hot path of a turn, so it encodes without reflection.
func (s *sseWriter) speak(delta string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scratch = appendJSONString(append(s.scratch[:0], `{"delta":`...), delta)
	s.scratch = append(s.scratch, '}')
	return s.writeLocked(EventSpeak, s.scratch)
}

// raw writes one event whose data is already one line of JSON.
func (s *sseWriter) raw(name string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeLocked(name, data)
}

func (s *sseWriter) writeLocked(name string, data []byte) error {
	if s.err != nil {
		return s.err
	}
	s.id++
	b := append(s.buf[:0], "id: "...)
	b = strconv.AppendInt(b, int64(s.id), 10)
	b = append(b, "\nevent: "...)
	b = append(b, name...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	s.buf = b
	return s.flushLocked(b)
}

// pingIfIdle writes ": ping" when nothing was written for at least idle, and returns how long
// to wait before the next check.
func (s *sseWriter) pingIfIdle(idle time.Duration) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return idle
	}
	since := s.clock().Sub(s.last)
	if since < idle {
		return idle - since
	}
	s.flushLocked([]byte(": ping\n\n"))
	return idle
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

// keepAlive pings while the stream is silent, until stop is closed. The returned function stops
// it and waits for it to end.
func (s *sseWriter) keepAlive(idle time.Duration) (stop func()) {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTimer(idle)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				t.Reset(s.pingIfIdle(idle))
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
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
