package sse

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Logged is one event of a turn as a turn log keeps it: its id (from 1), its name and its data.
type Logged struct {
	ID   int
	Name string
	Data []byte
}

// Batch is what one read of a turn's log found: the events after the last one asked for, in
// order, and whether the turn is over.
type Batch struct {
	Events []Logged
	Done   bool
	// Lost: the turn will never be done, its replica gone; these are its last events.
	Lost bool
}

// End is how [Writer.Follow] ended.
type End int

const (
	// EndDone: the done event was written.
	EndDone End = iota
	// EndOver: the turn is over with nothing more to read, or the time to follow it ran out;
	// the client resumes again from its last event.
	EndOver
	// EndGap: the log lost events (a store that evicted them); the stream ends without done,
	// since an answer with a hole in it would read as whole.
	EndGap
	// EndBroken: a write failed.
	EndBroken
	// EndRead: reading the log failed.
	EndRead
	// EndLost: the events of a lost turn (Batch.Lost) were written, without done, which the
	// caller makes.
	EndLost
)

// Followed is what [Writer.Follow] did: how it ended, the id of the last event written (at a
// gap, Next is the id the log gave instead of After+1), how many it wrote, and the error of a
// read.
type Followed struct {
	End         End
	After, Next int
	Sent        int
	Err         error
}

// Follow replays on s the events of a turn after after, first those of first, then those next
// reads, each batch after the last event written, until the done event, the end of a turn that
// is over, or until. next waits up to wait for the events of a turn that runs, not at all for
// one that is over, whose batch may not hold all of the rest. What was written is flushed
// before each read, however long it waits.
func (s *Writer) Follow(after int, first Batch, until time.Time, wait time.Duration, next func(after int, wait time.Duration) (Batch, error)) Followed {
	f, b := Followed{After: after}, first
	for {
		for _, ev := range b.Events {
			if ev.ID != f.After+1 {
				f.End, f.Next = EndGap, ev.ID
				return f
			}
			if s.Replay(ev.ID, ev.Name, ev.Data) != nil {
				f.End = EndBroken
				return f
			}
			f.After, f.Sent = ev.ID, f.Sent+1
			if ev.Name == eventDone {
				f.End = EndDone
				return f
			}
		}
		if b.Lost {
			f.End = EndLost
			return f
		}
		if b.Done && len(b.Events) == 0 || !s.clock().Before(until) {
			f.End = EndOver
			return f
		}
		if s.Flush() != nil {
			f.End = EndBroken
			return f
		}
		w := wait
		if b.Done {
			w = 0
		}
		var err error
		if b, err = next(f.After, w); err != nil {
			f.End, f.Err = EndRead, err
			return f
		}
	}
}

// LastEventID reads the Last-Event-ID header: the id of the last event the client has, 0 when
// absent. When it is sent twice or is not such an id, bad is what is wrong with it, the detail
// of a problem that names the header.
func LastEventID(h http.Header) (id int, bad string) {
	vals := h.Values("Last-Event-ID")
	switch {
	case len(vals) == 0:
		return 0, ""
	case len(vals) > 1:
		return 0, "is sent more than once"
	}
	v := vals[0]
	n, err := strconv.Atoi(v)
	if err != nil || len(v) > 10 || strings.TrimLeft(v, "0123456789") != "" || n > 1<<30 {
		return 0, "must be the id of an event of the turn, a number from 0"
	}
	return n, ""
}

// Kept writes the events of a turn that a log keeps: each is numbered, handed to Log and
// written to Stream, until a write fails; after that the log alone takes them, for the client
// to resume.
type Kept struct {
	Stream *Writer
	Log    func(Logged)
	n      int
	broken bool
}

// Send numbers the event name of data, one line of JSON, logs it and writes it.
func (k *Kept) Send(name string, data []byte) {
	k.n++
	k.Log(Logged{ID: k.n, Name: name, Data: data})
	if !k.broken && k.Stream.Replay(k.n, name, data) != nil {
		k.broken = true
	}
}
