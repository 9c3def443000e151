package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/convengine/engine/widgets"
)

var toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// WidgetTypes are the host's widget types checked so far, whose types and tools the next may
// not take again. The zero value is ready to use.
type WidgetTypes struct{ types, tools map[string]bool }

// CheckWidgetType reports why a host's widget type typ, called by the UI tool tool with
// arguments of schema raw, cannot join seen, or nil once it has joined: typ must be a custom
// type that is not taken, tool a tool name that no UI tool and no other widget has, and raw a
// widget's schema ([Cache.CheckWidget]).
func (c *Cache) CheckWidgetType(seen *WidgetTypes, typ, tool string, raw json.RawMessage) error {
	switch {
	case !widgets.ValidCustomType(typ):
		return errors.New("the type must be 1 to 64 lower-case letters, digits or '_', and not a built-in type")
	case seen.types[typ]:
		return errors.New("the type is registered twice")
	case !toolNamePattern.MatchString(tool) || widgets.IsUITool(tool) || seen.tools[tool]:
		return fmt.Errorf("the tool %q is not a valid name, or is taken", tool)
	}
	if err := c.CheckWidget(raw); err != nil {
		return err
	}
	if seen.types == nil {
		seen.types, seen.tools = map[string]bool{}, map[string]bool{}
	}
	seen.types[typ], seen.tools[tool] = true, true
	return nil
}

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
