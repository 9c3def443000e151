package client

import (
	"bytes"
	"errors"
	"io"
)

// ErrEventTooLarge is returned for a stream event larger than [Options.MaxEventSize].
var ErrEventTooLarge = errors.New("client: stream event too large")

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	id   string // the last event id seen so far
	name string // "message" when the event named none
	data []byte
}

// sseReader parses a server-sent event stream as the WHATWG HTML standard does: lines end in
// CR, LF or CRLF; lines starting with a colon are comments; "data" lines join with LF; an "id"
// persists across events; a blank line dispatches the event, unless it had no data.
type sseReader struct {
	lines  lineReader
	lastID string
	first  bool
}

func newSSEReader(r io.Reader, max int) *sseReader {
	return &sseReader{lines: lineReader{r: r, max: max, buf: make([]byte, 4096)}, first: true}
}

// next returns the next event, or io.EOF at the end of the stream. An event cut off by the
// end of the stream is dropped, as the standard says.
func (s *sseReader) next() (sseEvent, error) {
	var (
		name    string
		data    []byte
		hasData bool
	)
	for {
		line, err := s.lines.line()
		if err != nil {
			return sseEvent{}, err
		}
		if s.first {
			line = bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
			s.first = false
		}
		if len(line) == 0 {
			if !hasData {
				name = ""
				continue
			}
			if name == "" {
				name = "message"
			}
			return sseEvent{id: s.lastID, name: name, data: data}, nil
		}
		if line[0] == ':' {
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
				return sseEvent{}, ErrEventTooLarge
			}
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				s.lastID = string(value)
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
