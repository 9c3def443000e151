package sse

import (
	"bytes"
	"errors"
	"io"
)

// ErrEventTooLarge is returned for an event, or a line, larger than a [Reader]'s bound.
var ErrEventTooLarge = errors.New("sse: event too large")

// Event is one dispatched server-sent event.
type Event struct {
	ID   string // the last event id seen so far
	Name string // "message" when the event named none
	Data []byte
	// Comments counts the comment lines (keep-alives) read since the previous event.
	Comments int
	// Error is the value of a non-standard "error" field, which some servers (llama.cpp's,
	// for one) write instead of data; only a [Reader.Lenient] reader reads it.
	Error []byte
}

// Reader parses a server-sent event stream as the WHATWG HTML standard does: lines end in
// CR, LF or CRLF; lines starting with a colon are comments; "data" lines join with LF; an "id"
// persists across events; a blank line dispatches the event, unless it had no data.
type Reader struct {
	// Lenient reads what servers write beside the standard: an "error" field dispatches its
	// event as data does, and the last event is dispatched at a clean end of the stream even
	// when the blank line that ends it never came.
	Lenient bool

	lines  lineReader
	lastID string
	first  bool
}

// NewReader returns a reader of the stream r whose events hold at most max bytes of data.
func NewReader(r io.Reader, max int) *Reader {
	return &Reader{lines: lineReader{r: r, max: max, buf: make([]byte, 4096)}, first: true}
}

// Next returns the next event, or io.EOF at the end of the stream. An event cut off by the
// end of the stream is dropped, as the standard says.
func (s *Reader) Next() (Event, error) {
	var (
		name     string
		data     []byte
		hasData  bool
		comments int
		errField []byte
	)
	dispatch := func() Event {
		if name == "" {
			name = "message"
		}
		return Event{ID: s.lastID, Name: name, Data: data, Comments: comments, Error: errField}
	}
	for {
		line, err := s.lines.line()
		if err != nil {
			if err == io.EOF && s.Lenient && (hasData || errField != nil) {
				return dispatch(), nil
			}
			return Event{}, err
		}
		if s.first {
			line = bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
			s.first = false
		}
		if len(line) == 0 {
			if !hasData && errField == nil {
				name = ""
				continue
			}
			return dispatch(), nil
		}
		if line[0] == ':' {
			comments++
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
			if len(data) > s.lines.max {
				return Event{}, ErrEventTooLarge
			}
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				s.lastID = string(value)
			}
		case "error":
			if s.Lenient {
				if len(errField)+len(value) > s.lines.max {
					return Event{}, ErrEventTooLarge
				}
				errField = append(errField, value...)
			}
		}
	}
}

// lineReader splits a stream into lines ending in CR, LF or CRLF, without a bound on how the
// stream is chunked and without rescanning what it already scanned.
type lineReader struct {
	r          io.Reader
	max        int
	buf        []byte
	start, end int  // unread bytes are buf[start:end]
	scanned    int  // bytes after start known to hold no line end
	skipLF     bool // the last line ended in CR: a LF right after it belongs to it
	err        error
}

// limit bounds a line: an event's data and its field name.
func (l *lineReader) limit() int { return l.max + 64 }

// line returns the next line without its end. The slice is valid until the next call.
func (l *lineReader) line() ([]byte, error) {
	for {
		if l.skipLF && l.start < l.end {
			if l.buf[l.start] == '\n' {
				l.start++
			}
			l.skipLF = false
		}
		if !l.skipLF {
			if i := bytes.IndexAny(l.buf[l.start+l.scanned:l.end], "\r\n"); i >= 0 {
				i += l.start + l.scanned
				if i-l.start > l.limit() {
					return nil, ErrEventTooLarge
				}
				line := l.buf[l.start:i]
				l.skipLF = l.buf[i] == '\r'
				l.start, l.scanned = i+1, 0
				return line, nil
			}
			l.scanned = l.end - l.start
		}
		if l.err != nil {
			if l.start < l.end {
				if l.end-l.start > l.limit() {
					return nil, ErrEventTooLarge
				}
				line := l.buf[l.start:l.end]
				l.start, l.scanned = l.end, 0
				return line, nil
			}
			return nil, l.err
		}
		if l.end-l.start > l.limit() {
			return nil, ErrEventTooLarge
		}
		if l.start > 0 {
			n := copy(l.buf, l.buf[l.start:l.end])
			l.start, l.end = 0, n
		}
		if l.end == len(l.buf) {
			l.buf = append(l.buf, make([]byte, len(l.buf))...)
		}
		n, err := l.r.Read(l.buf[l.end:])
		l.end += n
		if err != nil {
			l.err = err
		}
	}
}
