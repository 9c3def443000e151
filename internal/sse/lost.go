package sse

import (
	"encoding/json"

	"github.com/convengine/engine/widgets"
)

// LostEnd is the end made of a turn whose replica died before its done event: an error event
// (code, message, retryable), the apology's speak delta and done, numbered after evs, the
// turn's events from its start. As a turn that fails ends, done's speak is the deltas sent
// joined with the apology (apology gives the delta that follows what was said), its widgets
// those sent, and its meta names the error; locale is the apology's language. Every reader
// of the same log makes the same end.
func LostEnd(evs []Logged, code, message string, apology func(said string) string, locale, direction string) ([]Logged, error) {
	spec := widgets.Spec{Meta: widgets.Meta{Locale: locale, Direction: direction, Error: code}}
	var said []byte
	for _, ev := range evs {
		switch ev.Name {
		case eventStart:
			var start struct {
				TurnID         string `json:"turnId"`
				ConversationID string `json:"conversationId"`
			}
			if err := json.Unmarshal(ev.Data, &start); err != nil {
				return nil, err
			}
			spec.Meta.TurnID, spec.Meta.ConversationID = start.TurnID, start.ConversationID
		case eventSpeak:
			var sp struct{ Delta string }
			if err := json.Unmarshal(ev.Data, &sp); err != nil {
				return nil, err
			}
			said = append(said, sp.Delta...)
		case eventWidget:
			w, err := widgets.Decode(ev.Data)
			if err != nil {
				return nil, err
			}
			spec.Widgets = append(spec.Widgets, w)
		}
	}
	delta := apology(string(said))
	spec.Speak = string(said) + delta
	done, err := AppendDone(nil, &spec)
	if err != nil {
		return nil, err
	}
	n := len(evs)
	if n > 0 {
		n = evs[n-1].ID
	}
	return []Logged{
		{ID: n + 1, Name: eventError, Data: AppendError(nil, code, message, true)},
		{ID: n + 2, Name: eventSpeak, Data: AppendSpeak(nil, delta)},
		{ID: n + 3, Name: eventDone, Data: done},
	}, nil
}
