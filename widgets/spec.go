package widgets

import (
	"encoding/json"
	"fmt"
)

// Spec is the render spec: what the user hears, then what the client draws. The turn stream's
// "done" event and the voice socket's "spec" message carry one.
type Spec struct {
	Speak       string   `json:"speak"`
	Widgets     []Widget `json:"widgets"`
	Follow      string   `json:"follow,omitempty"`
	Suggestions []string `json:"suggestions,omitempty"`
	Meta        Meta     `json:"meta"`
}

// Meta describes the turn a spec answers.
type Meta struct {
	ConversationID string `json:"conversationId"`
	TurnID         string `json:"turnId,omitempty"`
	Locale         string `json:"locale,omitempty"`
	// Direction is "ltr" or "rtl", from the script of the locale.
	Direction string `json:"direction"`
	// Transcript is the text the engine heard, on turns that sent audio.
	Transcript string `json:"transcript,omitempty"`
	// Theme repeats the tenant's theme on home-mode specs.
	Theme json.RawMessage `json:"theme,omitempty"`
	// Error is the code of the failure that ended the turn early.
	Error string `json:"error,omitempty"`
	// From is "person" on a spec a person wrote during a handoff (package handoff), and Name
	// is then that person's name; both are empty on the assistant's.
	From string `json:"from,omitempty"`
	Name string `json:"name,omitempty"`
}

// MarshalJSON writes s with "widgets" always present, as an array.
func (s Spec) MarshalJSON() ([]byte, error) {
	type plain Spec
	if s.Widgets == nil {
		s.Widgets = []Widget{}
	}
	return json.Marshal(plain(s))
}

// UnmarshalJSON reads a spec, decoding each widget with [Decode].
func (s *Spec) UnmarshalJSON(data []byte) error {
	type plain Spec
	var raw struct {
		plain
		Widgets []json.RawMessage `json:"widgets"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*s = Spec(raw.plain)
	s.Widgets = make([]Widget, 0, len(raw.Widgets))
	for i, w := range raw.Widgets {
		v, err := Decode(w)
		if err != nil {
			return fmt.Errorf("widgets[%d]: %w", i, err)
		}
		s.Widgets = append(s.Widgets, v)
	}
	return nil
}
