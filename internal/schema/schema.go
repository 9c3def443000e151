// Package schema holds the engine's JSON Schemas: it checks the arguments of tool calls against
// the tools' schemas before any call reaches a backend; checks the schemas of a host's widget
// types ([Cache.CheckWidget]) and the calls of their tools ([Cache.WidgetFields]); and adds
// a host's widget types to the engine's OpenAPI document ([AddWidgets]) as the schemas of
// widgets a render spec may hold. The root package uses all three.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Cache resolves each distinct tool schema once: the same schemas come back on every
// turn. Schemas are JSON Schema (2020-12 or draft-07); remote references are refused, so a
// schema cannot make the engine fetch anything.
type Cache struct{ m sync.Map } // string(raw schema) → *jsonschema.Resolved or error

func (c *Cache) compile(raw json.RawMessage) (*jsonschema.Resolved, error) {
	if v, ok := c.m.Load(string(raw)); ok {
		if err, bad := v.(error); bad {
			return nil, err
		}
		return v.(*jsonschema.Resolved), nil
	}
	r, err := resolveSchema(raw)
	if err != nil {
		c.m.Store(string(raw), err)
		return nil, err
	}
	c.m.Store(string(raw), r)
	return r, nil
}

// Check validates args, which must be one JSON object, against the JSON Schema schema. It is
// safe for concurrent use.
func (c *Cache) Check(schema, args json.RawMessage) error {
	r, err := c.compile(schema)
	if err != nil {
		return err
	}
	return validate(r, args)
}

func resolveSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if len(bytes.TrimSpace(raw)) == 0 {
		s.Type = "object"
	} else if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("the tool's schema is not a JSON Schema: %w", err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("the tool's schema is invalid: %w", err)
	}
	return r, nil
}

// validate checks args, which must be one JSON object, against the resolved schema.
func validate(r *jsonschema.Resolved, args json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return fmt.Errorf("arguments are not valid JSON")
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("arguments must be a JSON object")
	}
	if err := r.Validate(v); err != nil {
		return errors.New(withoutValues(err.Error()))
	}
	return nil
}

// instance finds where a validation error quotes the value it refused. The arguments can hold
// a card number or a name, and the error reaches the model and the engine's log: it says what
// was wrong and where, never the value.
var instance = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`pattern: "(?:[^"\\]|\\.)*" does not match`), "pattern: the value does not match"},
	{regexp.MustCompile(`(minLength|maxLength): "(?:[^"\\]|\\.)*" contains \d+ Unicode code points`), "$1: the value has"},
	{regexp.MustCompile(`type: .*? has type "`), `type: the value has type "`},
	{regexp.MustCompile(`enum: .*? does not equal any of:`), "enum: the value does not equal any of:"},
	{regexp.MustCompile(`const: .*? does not equal `), "const: the value does not equal "},
	{regexp.MustCompile(`(multipleOf|minimum|maximum|exclusiveMinimum|exclusiveMaximum): \S+ is `), "$1: the value is "},
	{regexp.MustCompile(`contains: .*? does not have an item`), "contains: the array does not have an item"},
}

func withoutValues(msg string) string {
	for _, x := range instance {
		msg = x.re.ReplaceAllString(msg, x.with)
	}
	return msg
}

// Compile reports whether schema is a JSON Schema this package can check arguments against,
// and keeps it resolved for later checks.
func (c *Cache) Compile(schema json.RawMessage) error {
	_, err := c.compile(schema)
	return err
}
