package widgets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// Widget types as they appear in the "type" field.
const (
	TypeStat     = "stat"
	TypeList     = "list"
	TypeProgress = "progress"
	TypeConfirm  = "confirm"
)

// Limits on widget content. They keep a model from sending a client more than it can draw.
const (
	MaxTextLen  = 200 // characters in one label, title, value or subtitle
	MaxBodyLen  = 1000
	MaxListLen  = 50 // items in a list
	MaxWidgets  = 16 // widgets in one spec
	MaxSuggests = 8  // suggestions in one spec
)

// ErrInvalid is wrapped by every validation error of this package.
var ErrInvalid = errors.New("widgets: invalid widget")

// A Widget is something a client draws after the spoken answer.
type Widget interface {
	// WidgetType returns the value of the widget's "type" field.
	WidgetType() string
	// Validate reports whether the widget can be sent to a client.
	Validate() error
}

// Stat is a single figure with a label and an optional change, such as an account balance.
type Stat struct {
	Label string `json:"label"`
	Value string `json:"value"`
	Delta string `json:"delta,omitempty"`
}

// List is a titled list of rows, such as recent transactions.
type List struct {
	Title string     `json:"title"`
	Items []ListItem `json:"items"`
}

// ListItem is one row of a [List].
type ListItem struct {
	Title    string `json:"title"`
	Subtitle string `json:"subtitle,omitempty"`
	Trailing string `json:"trailing,omitempty"`
}

// Progress is a labelled bar; Value runs from 0 to 1.
type Progress struct {
	Label string  `json:"label"`
	Value float64 `json:"value"`
}

// Confirm asks the user to approve an action. The client shows it, passes its device gate
// (Face ID, Touch ID or passcode) and then posts Execute to the execute endpoint unchanged.
type Confirm struct {
	ID           string    `json:"id"`
	Title        string    `json:"title"`
	Body         string    `json:"body"`
	ConfirmLabel string    `json:"confirmLabel"`
	CancelLabel  string    `json:"cancelLabel"`
	ExpiresAt    time.Time `json:"expiresAt"`
	Execute      Execute   `json:"execute"`
}

// Execute is what a [Confirm] widget carries to the execute endpoint.
type Execute struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Token     string          `json:"token"`
}

// Unknown holds a widget of a type this package does not know, as it was received.
type Unknown struct {
	Type string
	Raw  json.RawMessage
}

func (Stat) WidgetType() string     { return TypeStat }
func (List) WidgetType() string     { return TypeList }
func (Progress) WidgetType() string { return TypeProgress }
func (Confirm) WidgetType() string  { return TypeConfirm }
func (u Unknown) WidgetType() string {
	return u.Type
}

// Validate reports whether s has a label and a value of reasonable length.
func (s Stat) Validate() error {
	return errors.Join(
		text("label", s.Label, true, MaxTextLen),
		text("value", s.Value, true, MaxTextLen),
		text("delta", s.Delta, false, MaxTextLen),
	)
}

// Validate reports whether l has a title and between one and [MaxListLen] items, each titled.
func (l List) Validate() error {
	errs := []error{text("title", l.Title, true, MaxTextLen)}
	switch {
	case len(l.Items) == 0:
		errs = append(errs, invalid("items", "is empty"))
	case len(l.Items) > MaxListLen:
		errs = append(errs, invalid("items", fmt.Sprintf("has more than %d entries", MaxListLen)))
	}
	for i, it := range l.Items {
		if text("", it.Title, true, MaxTextLen) == nil && text("", it.Subtitle, false, MaxTextLen) == nil &&
			text("", it.Trailing, false, MaxTextLen) == nil {
			continue // the field names are written only for an error
		}
		f := fmt.Sprintf("items[%d].", i)
		errs = append(errs,
			text(f+"title", it.Title, true, MaxTextLen),
			text(f+"subtitle", it.Subtitle, false, MaxTextLen),
			text(f+"trailing", it.Trailing, false, MaxTextLen))
	}
	return errors.Join(errs...)
}

// Validate reports whether p has a label and a value from 0 to 1.
func (p Progress) Validate() error {
	err := text("label", p.Label, true, MaxTextLen)
	if math.IsNaN(p.Value) || p.Value < 0 || p.Value > 1 {
		err = errors.Join(err, invalid("value", "is not a number from 0 to 1"))
	}
	return err
}

// Validate reports whether c is complete: texts, an expiry and the action it confirms.
func (c Confirm) Validate() error {
	errs := []error{
		text("id", c.ID, true, MaxTextLen),
		text("title", c.Title, true, MaxTextLen),
		text("body", c.Body, true, MaxBodyLen),
		text("confirmLabel", c.ConfirmLabel, true, MaxTextLen),
		text("cancelLabel", c.CancelLabel, true, MaxTextLen),
		text("execute.tool", c.Execute.Tool, true, MaxTextLen),
	}
	if c.ExpiresAt.IsZero() {
		errs = append(errs, invalid("expiresAt", "is missing"))
	}
	if !isJSONObject(c.Execute.Arguments) {
		errs = append(errs, invalid("execute.arguments", "is not a JSON object"))
	}
	if c.Execute.Token == "" {
		errs = append(errs, invalid("execute.token", "is missing"))
	}
	return errors.Join(errs...)
}

// Validate always fails: a widget of an unknown type is never sent.
func (u Unknown) Validate() error {
	return invalid("type", fmt.Sprintf("%q is not a known widget type", u.Type))
}

// MarshalJSON writes s with its "type" field.
func (s Stat) MarshalJSON() ([]byte, error) {
	type plain Stat
	return marshalTyped(TypeStat, plain(s))
}

// MarshalJSON writes l with its "type" field.
func (l List) MarshalJSON() ([]byte, error) {
	type plain List
	if l.Items == nil {
		l.Items = []ListItem{}
	}
	return marshalTyped(TypeList, plain(l))
}

// MarshalJSON writes p with its "type" field.
func (p Progress) MarshalJSON() ([]byte, error) {
	type plain Progress
	return marshalTyped(TypeProgress, plain(p))
}

// MarshalJSON writes c with its "type" field.
func (c Confirm) MarshalJSON() ([]byte, error) {
	type plain Confirm
	return marshalTyped(TypeConfirm, plain(c))
}

// MarshalJSON writes u as it was received.
func (u Unknown) MarshalJSON() ([]byte, error) {
	if len(u.Raw) == 0 {
		return json.Marshal(map[string]string{"type": u.Type})
	}
	return u.Raw, nil
}

// marshalTyped writes v, a struct, as a JSON object whose first member is "type".
func marshalTyped(typ string, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(body)+len(typ)+10)
	out = append(out, `{"type":"`...)
	out = append(out, typ...)
	out = append(out, '"')
	if len(body) > 2 {
		out = append(out, ',')
	}
	return append(out, body[1:]...), nil
}

// Decode reads one widget object. A type this package does not know becomes an [Unknown];
// Decode does not validate the widget.
func Decode(data []byte) (Widget, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("widgets: decoding widget: %w", err)
	}
	var (
		w   Widget
		err error
	)
	switch head.Type {
	case TypeStat:
		var v Stat
		err = json.Unmarshal(data, &v)
		w = v
	case TypeList:
		var v List
		err = json.Unmarshal(data, &v)
		w = v
	case TypeProgress:
		var v Progress
		err = json.Unmarshal(data, &v)
		w = v
	case TypeConfirm:
		var v Confirm
		err = json.Unmarshal(data, &v)
		w = v
	case "":
		return nil, fmt.Errorf("widgets: decoding widget: %w", invalid("type", "is missing"))
	default:
		w = Unknown{Type: head.Type, Raw: append(json.RawMessage(nil), data...)}
	}
	if err != nil {
		return nil, fmt.Errorf("widgets: decoding %s widget: %w", head.Type, err)
	}
	return w, nil
}

func text(field, v string, required bool, max int) error {
	switch {
	case required && strings.TrimSpace(v) == "":
		return invalid(field, "is empty")
	case !utf8.ValidString(v):
		return invalid(field, "is not valid UTF-8")
	case utf8.RuneCountInString(v) > max:
		return invalid(field, fmt.Sprintf("is longer than %d characters", max))
	}
	return nil
}

func invalid(field, problem string) error {
	return fmt.Errorf("%w: %s %s", ErrInvalid, field, problem)
}

// isJSONObject reports whether raw is one JSON object.
func isJSONObject(raw json.RawMessage) bool {
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(raw)
}
