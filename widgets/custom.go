package widgets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// MaxCustomBytes bounds the JSON of one widget of a host's own type.
const MaxCustomBytes = 8 << 10

// customType is what the type of a host's widget may be.
var customType = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// Custom is a widget of a type the host registered with the engine (engine.WidgetType), such
// as a bank's card: its fields as the host's JSON Schema describes them, which the engine
// checked. Clients that do not know the type draw it from its fields ([Text]).
type Custom struct {
	Type string
	// Fields is a JSON object: the widget's members other than "type".
	Fields json.RawMessage
}

// WidgetType returns the host's type.
func (c Custom) WidgetType() string { return c.Type }

// Validate checks the type's name, that it is not a built-in type, and that the fields are
// one JSON object within MaxCustomBytes. The fields' own rules are the host's schema's.
func (c Custom) Validate() error {
	switch {
	case !ValidCustomType(c.Type):
		return invalid("type", fmt.Sprintf("%q must be 1 to 64 lower-case letters, digits or '_', and not a built-in type", c.Type))
	case !isJSONObject(c.Fields):
		return invalid("fields", "must be a JSON object")
	case len(c.Fields) > MaxCustomBytes:
		return invalid("fields", fmt.Sprintf("are larger than %d bytes", MaxCustomBytes))
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(c.Fields, &probe) == nil {
		if _, ok := probe["type"]; ok {
			return invalid("fields", `hold a "type" member`)
		}
	}
	return nil
}

// ValidCustomType reports whether name may be the type of a host's widget: 1 to 64 lower-case
// letters, digits or '_', starting with a letter, and none of the built-in types.
func ValidCustomType(name string) bool {
	switch name {
	case TypeStat, TypeList, TypeProgress, TypeConfirm:
		return false
	}
	return customType.MatchString(name)
}

// MarshalJSON writes the widget as one object whose first member is "type".
func (c Custom) MarshalJSON() ([]byte, error) {
	fields := bytes.TrimSpace(c.Fields)
	if len(fields) < 2 || fields[0] != '{' {
		return nil, invalid("fields", "must be a JSON object")
	}
	var buf bytes.Buffer
	buf.Grow(len(fields) + len(c.Type) + 12)
	buf.WriteString(`{"type":`)
	t, _ := json.Marshal(c.Type)
	buf.Write(t)
	if inner := bytes.TrimSpace(fields[1 : len(fields)-1]); len(inner) > 0 {
		buf.WriteByte(',')
		buf.Write(inner)
	}
	buf.WriteByte('}')
	// Compact: the widget travels as one line of an event stream.
	var out bytes.Buffer
	if err := json.Compact(&out, buf.Bytes()); err != nil {
		return nil, invalid("fields", "are not valid JSON")
	}
	return out.Bytes(), nil
}

// Text writes any widget as readable plain text, for clients that draw what they know and
// must still show what they do not (a host's own widget types, or types of a newer engine),
// and for places without a screen (logs of a conversation, notifications). Built-in widgets
// are written from their fields; others from their JSON: the title or label first, then
// "Field: value" lines, nested objects indented, at most three levels and twenty fields per
// level.
func Text(w Widget) string {
	var b strings.Builder
	switch v := w.(type) {
	case Stat:
		b.WriteString(v.Label + ": " + v.Value)
		if v.Delta != "" {
			b.WriteString(" (" + v.Delta + ")")
		}
	case List:
		b.WriteString(v.Title)
		for _, it := range v.Items {
			b.WriteString("\n- " + it.Title)
			if it.Subtitle != "" {
				b.WriteString(", " + it.Subtitle)
			}
			if it.Trailing != "" {
				b.WriteString(": " + it.Trailing)
			}
		}
	case Progress:
		b.WriteString(v.Label + ": " + strconv.Itoa(int(v.Value*100+0.5)) + "%")
	case Confirm:
		b.WriteString(v.Title + "\n" + v.Body)
	default:
		raw, err := json.Marshal(w)
		if err != nil {
			return Humanize(w.WidgetType())
		}
		var fields map[string]any
		if json.Unmarshal(raw, &fields) != nil {
			return Humanize(w.WidgetType())
		}
		delete(fields, "type")
		title := Humanize(w.WidgetType())
		for _, k := range []string{"title", "label"} {
			if s, ok := fields[k].(string); ok && s != "" {
				title = s
				delete(fields, k)
				break
			}
		}
		b.WriteString(title)
		writeFields(&b, fields, 0)
	}
	return b.String()
}

// Limits of Text on what it writes of an unknown widget.
const (
	textDepth  = 3
	textFields = 20
)

func writeFields(b *strings.Builder, fields map[string]any, depth int) {
	keys := slices.Sorted(maps.Keys(fields))
	indent := strings.Repeat("  ", depth)
	n := 0
	for _, k := range keys {
		v := fields[k]
		if v == nil || v == "" {
			continue
		}
		if n == textFields {
			b.WriteString("\n" + indent + "…")
			return
		}
		n++
		b.WriteString("\n" + indent + Humanize(k) + ":")
		writeValue(b, v, depth)
	}
}

func writeValue(b *strings.Builder, v any, depth int) {
	switch x := v.(type) {
	case string:
		b.WriteString(" " + x)
	case float64:
		b.WriteString(" " + strconv.FormatFloat(x, 'f', -1, 64))
	case bool:
		if x {
			b.WriteString(" Yes")
		} else {
			b.WriteString(" No")
		}
	case map[string]any:
		if depth+1 >= textDepth {
			b.WriteString(" …")
			return
		}
		writeFields(b, x, depth+1)
	case []any:
		scalars := make([]string, 0, len(x))
		for _, e := range x {
			switch s := e.(type) {
			case string:
				scalars = append(scalars, s)
			case float64:
				scalars = append(scalars, strconv.FormatFloat(s, 'f', -1, 64))
			case bool:
				scalars = append(scalars, map[bool]string{true: "Yes", false: "No"}[s])
			}
		}
		if len(scalars) == len(x) {
			if len(scalars) > textFields {
				scalars = append(scalars[:textFields], "…")
			}
			b.WriteString(" " + strings.Join(scalars, ", "))
			return
		}
		if depth+1 >= textDepth {
			b.WriteString(" …")
			return
		}
		for i, e := range x {
			if i == textFields {
				b.WriteString("\n" + strings.Repeat("  ", depth+1) + "…")
				return
			}
			if m, ok := e.(map[string]any); ok {
				writeFields(b, m, depth+1)
			} else if e != nil {
				writeValue(b, e, depth+1)
			}
		}
	}
}

// Humanize writes a field or type name for people: "loan_offer" and "loanOffer" are "Loan
// offer".
func Humanize(name string) string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == ' ':
			flush()
		case r >= 'A' && r <= 'Z' && len(cur) > 0 && !(cur[len(cur)-1] >= 'A' && cur[len(cur)-1] <= 'Z'):
			flush() // a word starts: "loanOffer", not "APR"
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	s := strings.Join(words, " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
