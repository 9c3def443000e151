package schema

import (
	"encoding/json"
	"errors"
)

// CheckWidget reports why raw cannot be the schema of a host's widget type, or nil: it must be
// a JSON Schema of "type": "object" that this package can check arguments against, without a
// "type" property of its own (the engine sets it). It keeps the schema resolved for later checks.
func (c *Cache) CheckWidget(raw json.RawMessage) error {
	var s struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	switch {
	case json.Unmarshal(raw, &s) != nil || s.Type != "object":
		return errors.New(`the schema must be a JSON Schema of "type": "object"`)
	case s.Properties["type"] != nil:
		return errors.New(`the schema has a "type" property: the engine sets it`)
	}
	return c.Compile(raw)
}

// WidgetFields returns the arguments of a call of a host widget's tool as the widget's fields,
// checked against schema: without a "type" member naming the widget's own type typ, which
// models often add.
func (c *Cache) WidgetFields(schema, args json.RawMessage, typ string) (json.RawMessage, error) {
	args = withoutType(args, typ)
	return args, c.Check(schema, args)
}

// withoutType returns args without a "type" member whose value is typ.
func withoutType(args json.RawMessage, typ string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return args
	}
	raw, ok := m["type"]
	var s string
	if !ok || json.Unmarshal(raw, &s) != nil || s != typ {
		return args
	}
	delete(m, "type")
	out, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return out
}
