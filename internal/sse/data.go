package sse

import (
	"encoding/json"
	"strconv"

	"github.com/convengine/engine/internal/jsonenc"
	"github.com/convengine/engine/widgets"
)

// The data of each event of a turn stream, appended to b as one line of JSON. The writer
// sends them; the engine's in-process turns encode their events with the same functions, so
// that both say the same bytes.

// AppendStart appends the data of a start event.
func AppendStart(b []byte, turnID, conversationID, disclosure string) []byte {
	b = append(b, `{"conversationId":`...)
	b = jsonenc.AppendString(b, conversationID)
	b = append(b, `,"turnId":`...)
	b = jsonenc.AppendString(b, turnID)
	if disclosure != "" {
		b = append(b, `,"disclosure":`...)
		b = jsonenc.AppendString(b, disclosure)
	}
	return append(b, '}')
}

// AppendStartResumable appends the data of a start event that says whether the turn is kept
// for resumes.
func AppendStartResumable(b []byte, turnID, conversationID, disclosure string, resumable bool) []byte {
	b = AppendStart(b, turnID, conversationID, disclosure)
	b = append(b[:len(b)-1], `,"resumable":`...)
	return append(strconv.AppendBool(b, resumable), '}')
}

// AppendSpeak appends the data of a speak event. It is the hot path of a turn: the delta is
// encoded in place, without reflection or a copy.
func AppendSpeak(b []byte, delta string) []byte {
	b = append(b, `{"delta":`...)
	b = jsonenc.AppendString(b, delta)
	return append(b, '}')
}

// AppendStatus appends the data of a status event: a tool is running.
func AppendStatus(b []byte, text, tool string) []byte {
	b = append(b, `{"text":`...)
	b = jsonenc.AppendString(b, text)
	b = append(b, `,"tool":`...)
	b = jsonenc.AppendString(b, tool)
	return append(b, '}')
}

// AppendError appends the data of an error event.
func AppendError(b []byte, code, message string, retryable bool) []byte {
	b = append(b, `{"code":`...)
	b = jsonenc.AppendString(b, code)
	b = append(b, `,"message":`...)
	b = jsonenc.AppendString(b, message)
	if retryable {
		return append(b, `,"retryable":true}`...)
	}
	return append(b, `,"retryable":false}`...)
}

// EncodeWidget returns the data of a widget event. Widgets of package widgets write
// themselves: their MarshalJSON output is final, so that encoding/json's second pass over it
// is skipped.
func EncodeWidget(w widgets.Widget) ([]byte, error) {
	if m, ok := w.(json.Marshaler); ok {
		return m.MarshalJSON()
	}
	return json.Marshal(w)
}

// AppendDone appends the data of a done event: the render spec.
func AppendDone(b []byte, spec *widgets.Spec) ([]byte, error) {
	ws := make([][]byte, len(spec.Widgets))
	for i, w := range spec.Widgets {
		data, err := EncodeWidget(w)
		if err != nil {
			return b, err
		}
		ws[i] = data
	}
	return appendSpec(b, spec, ws), nil
}
