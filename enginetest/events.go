package enginetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/convengine/engine/internal/sse"
	"github.com/convengine/engine/widgets"
)

// Event is one event of a turn stream as a client reads it.
type Event struct {
	ID   int
	Name string
	Data json.RawMessage
	// Pings counts the keep-alive comments that came before the event.
	Pings int
}

// ReadEvents reads a whole turn stream and checks its framing as the engine writes it: events
// numbered from 1, each with one line of JSON data.
func ReadEvents(r io.Reader) ([]Event, error) {
	sr := sse.NewReader(r, 8<<20)
	var out []Event
	for {
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		id, _ := strconv.Atoi(ev.ID)
		e := Event{ID: id, Name: ev.Name, Data: json.RawMessage(ev.Data), Pings: ev.Comments}
		switch {
		case id != len(out)+1:
			return out, fmt.Errorf("event %d (%s) has id %q", len(out)+1, ev.Name, ev.ID)
		case bytes.IndexByte(ev.Data, '\n') >= 0 || !json.Valid(ev.Data):
			return out, fmt.Errorf("event %d (%s) has data that is not one line of JSON: %q", id, ev.Name, ev.Data)
		}
		out = append(out, e)
	}
}

// Turn is a finished turn as a client sees it: its events, the speech of its speak events, and
// the spec of its done event.
type Turn struct {
	Events []Event
	Speak  string
	Spec   widgets.Spec
}

// Names returns the names of the turn's events, joined by commas.
func (t *Turn) Names() string {
	names := make([]string, len(t.Events))
	for i, e := range t.Events {
		names[i] = e.Name
	}
	return strings.Join(names, ",")
}

// ReadTurn reads a whole turn stream with [ReadEvents] and requires that it ends with done.
func ReadTurn(r io.Reader) (*Turn, error) {
	events, err := ReadEvents(r)
	t := &Turn{Events: events}
	if err != nil {
		return t, err
	}
	for _, ev := range events {
		switch ev.Name {
		case "speak":
			var d struct{ Delta string }
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				return t, fmt.Errorf("speak event %d: %w", ev.ID, err)
			}
			t.Speak += d.Delta
		case "done":
			if err := json.Unmarshal(ev.Data, &t.Spec); err != nil {
				return t, fmt.Errorf("done event %d: %w", ev.ID, err)
			}
		}
	}
	if n := len(events); n == 0 || events[n-1].Name != "done" {
		return t, fmt.Errorf("the stream does not end with done: %s", t.Names())
	}
	return t, nil
}
