package sse

import (
	"bytes"
	"encoding/json"

	"github.com/convengine/engine/internal/jsonenc"
	"github.com/convengine/engine/widgets"
)

// appendSpec appends the render spec as the done event carries it: the members of
// [widgets.Spec] in its order, with the widgets already encoded (ws, in the order of
// s.Widgets).
func appendSpec(b []byte, s *widgets.Spec, ws [][]byte) []byte {
	b = append(b, `{"speak":`...)
	b = jsonenc.AppendString(b, s.Speak)
	b = append(b, `,"widgets":[`...)
	for i, w := range ws {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, w...)
	}
	b = append(b, ']')
	if s.Follow != "" {
		b = append(b, `,"follow":`...)
		b = jsonenc.AppendString(b, s.Follow)
	}
	if len(s.Suggestions) > 0 {
		b = append(b, `,"suggestions":[`...)
		for i, sg := range s.Suggestions {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, sg)
		}
		b = append(b, ']')
	}
	b = append(b, `,"meta":`...)
	b = appendMeta(b, &s.Meta)
	return append(b, '}')
}

// appendMeta appends m as encoding/json writes [widgets.Meta]: the same members, order and
// omissions.
func appendMeta(b []byte, m *widgets.Meta) []byte {
	str := func(b []byte, name, v string) []byte {
		b = append(b, ',', '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		return jsonenc.AppendString(b, v)
	}
	b = append(b, `{"conversationId":`...)
	b = jsonenc.AppendString(b, m.ConversationID)
	if m.TurnID != "" {
		b = str(b, "turnId", m.TurnID)
	}
	if m.Locale != "" {
		b = str(b, "locale", m.Locale)
	}
	b = str(b, "direction", m.Direction)
	if m.Transcript != "" {
		b = str(b, "transcript", m.Transcript)
	}
	if len(m.Theme) > 0 {
		// The theme is a JSON object from the tenant's configuration; it may span lines, and
		// an event's data must not.
		buf := bytes.NewBuffer(append(b, `,"theme":`...))
		if err := json.Compact(buf, m.Theme); err == nil {
			b = buf.Bytes()
		}
	}
	if m.Error != "" {
		b = str(b, "error", m.Error)
	}
	return append(b, '}')
}
