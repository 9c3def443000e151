package widgets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// Names of the engine's UI tools. A model calls them to add to the spec; the engine turns each
// call into a widget, the follow-up line or the suggestions, and never forwards it to a backend.
const (
	ToolShowStat       = "show_stat"
	ToolShowList       = "show_list"
	ToolShowProgress   = "show_progress"
	ToolSetFollow      = "set_follow"
	ToolSetSuggestions = "set_suggestions"
)

// UITool describes one UI tool as a model sees it.
type UITool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the tool's arguments.
	Parameters json.RawMessage
}

// UITools returns the engine's UI tools, in a stable order.
func UITools() []UITool {
	return []UITool{
		{ToolShowStat, "Show one figure, such as a balance, under the spoken answer.", json.RawMessage(`{"type":"object","properties":{"label":{"type":"string","maxLength":200},"value":{"type":"string","maxLength":200},"delta":{"type":"string","maxLength":200}},"required":["label","value"],"additionalProperties":false}`)},
		{ToolShowList, "Show a titled list of rows, such as recent transactions.", json.RawMessage(`{"type":"object","properties":{"title":{"type":"string","maxLength":200},"items":{"type":"array","minItems":1,"maxItems":50,"items":{"type":"object","properties":{"title":{"type":"string","maxLength":200},"subtitle":{"type":"string","maxLength":200},"trailing":{"type":"string","maxLength":200}},"required":["title"],"additionalProperties":false}}},"required":["title","items"],"additionalProperties":false}`)},
		{ToolShowProgress, "Show progress towards a goal as a bar; value runs from 0 to 1.", json.RawMessage(`{"type":"object","properties":{"label":{"type":"string","maxLength":200},"value":{"type":"number","minimum":0,"maximum":1}},"required":["label","value"],"additionalProperties":false}`)},
		{ToolSetFollow, "Set one short follow-up line shown after the answer.", json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","maxLength":200}},"required":["text"],"additionalProperties":false}`)},
		{ToolSetSuggestions, "Offer up to eight short replies the user can tap.", json.RawMessage(`{"type":"object","properties":{"suggestions":{"type":"array","maxItems":8,"items":{"type":"string","maxLength":80}}},"required":["suggestions"],"additionalProperties":false}`)},
	}
}

// IsUITool reports whether name is one of the engine's UI tools.
func IsUITool(name string) bool {
	switch name {
	case ToolShowStat, ToolShowList, ToolShowProgress, ToolSetFollow, ToolSetSuggestions:
		return true
	}
	return false
}

// FromToolCall turns the arguments of a show_* tool call into a validated widget. A "type"
// member naming the tool's own widget type is allowed, since models often add it.
func FromToolCall(name string, args json.RawMessage) (Widget, error) {
	args = withoutOwnType(args, map[string]string{ToolShowStat: TypeStat, ToolShowList: TypeList, ToolShowProgress: TypeProgress}[name])
	var (
		w   Widget
		err error
	)
	switch name {
	case ToolShowStat:
		var v Stat
		err = strictUnmarshal(args, &v, statFields)
		w = v
	case ToolShowList:
		var v List
		err = strictUnmarshal(args, &v, listFields)
		w = v
	case ToolShowProgress:
		var v Progress
		err = strictUnmarshal(args, &v, progressFields)
		w = v
	default:
		return nil, fmt.Errorf("%w: %q is not a widget tool", ErrInvalid, name)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: arguments of %s: %v", ErrInvalid, name, err)
	}
	if err := w.Validate(); err != nil {
		return nil, err
	}
	return w, nil
}

// FollowFromToolCall reads the arguments of a set_follow call.
func FollowFromToolCall(args json.RawMessage) (string, error) {
	var v struct {
		Text string `json:"text"`
	}
	if err := strictUnmarshal(args, &v, followFields); err != nil {
		return "", fmt.Errorf("%w: arguments of %s: %v", ErrInvalid, ToolSetFollow, err)
	}
	return v.Text, text("text", v.Text, true, MaxTextLen)
}

// SuggestionsFromToolCall reads the arguments of a set_suggestions call.
func SuggestionsFromToolCall(args json.RawMessage) ([]string, error) {
	var v struct {
		Suggestions []string `json:"suggestions"`
	}
	if err := strictUnmarshal(args, &v, suggestionsFields); err != nil {
		return nil, fmt.Errorf("%w: arguments of %s: %v", ErrInvalid, ToolSetSuggestions, err)
	}
	if len(v.Suggestions) > MaxSuggests {
		return nil, invalid("suggestions", fmt.Sprintf("has more than %d entries", MaxSuggests))
	}
	for i, s := range v.Suggestions {
		if err := text(fmt.Sprintf("suggestions[%d]", i), s, true, 80); err != nil {
			return nil, err
		}
	}
	return v.Suggestions, nil
}

// strictUnmarshal decodes one JSON value into v, refusing members v has no field for and data
// after the value. fields names v's members for the fast path (see strict.go).
func strictUnmarshal(data []byte, v any, fields *fieldSet) error {
	if len(data) == 0 {
		data = []byte("{}")
	}
	if json.Unmarshal(data, v) == nil && fields.covers(data) {
		return nil
	}
	// The slow path decides, and words the error.
	reflect.ValueOf(v).Elem().SetZero()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the arguments")
	}
	return nil
}

// withoutOwnType drops a "type" member equal to typ from an object of arguments.
func withoutOwnType(args json.RawMessage, typ string) json.RawMessage {
	if typ == "" || !bytes.Contains(args, []byte(`"type"`)) {
		return args
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return args
	}
	var got string
	if json.Unmarshal(m["type"], &got) != nil || got != typ {
		return args
	}
	delete(m, "type")
	out, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return out
}
