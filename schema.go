package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// schema is the part of JSON Schema that tool parameters use: type, properties, required,
// additionalProperties, items, enum, const, minimum and maximum (exclusive too), minLength,
// maxLength, pattern, minItems and maxItems. Keywords outside it are ignored, so a schema with
// them validates less, never more.
type schema struct {
	Type                 schemaType         `json:"type"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	AdditionalProperties *json.RawMessage   `json:"additionalProperties"`
	Items                *schema            `json:"items"`
	Enum                 []json.RawMessage  `json:"enum"`
	Const                *json.RawMessage   `json:"const"`
	Minimum              *float64           `json:"minimum"`
	Maximum              *float64           `json:"maximum"`
	ExclusiveMinimum     *float64           `json:"exclusiveMinimum"`
	ExclusiveMaximum     *float64           `json:"exclusiveMaximum"`
	MinLength            *int               `json:"minLength"`
	MaxLength            *int               `json:"maxLength"`
	Pattern              string             `json:"pattern"`
	MinItems             *int               `json:"minItems"`
	MaxItems             *int               `json:"maxItems"`

	pattern *regexp.Regexp
	extra   *schema // additionalProperties given as a schema
	noExtra bool    // additionalProperties: false
}

// schemaType is "type": one name or a list of names.
type schemaType []string

func (t *schemaType) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*t = schemaType{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("type must be a string or an array of strings")
	}
	*t = many
	return nil
}

// schemaCache compiles each distinct schema once; tool schemas repeat on every turn.
type schemaCache struct{ m sync.Map } // string(raw schema) → *schema or error

func (c *schemaCache) compile(raw json.RawMessage) (*schema, error) {
	if v, ok := c.m.Load(string(raw)); ok {
		if err, bad := v.(error); bad {
			return nil, err
		}
		return v.(*schema), nil
	}
	s, err := compileSchema(raw)
	if err != nil {
		c.m.Store(string(raw), err)
		return nil, err
	}
	c.m.Store(string(raw), s)
	return s, nil
}

func compileSchema(raw json.RawMessage) (*schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return &schema{}, nil
	}
	var s schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("invalid schema: %w", err)
	}
	return &s, s.prepare()
}

func (s *schema) prepare() error {
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			return fmt.Errorf("invalid pattern %q: %w", s.Pattern, err)
		}
		s.pattern = re
	}
	if s.AdditionalProperties != nil {
		var b bool
		if json.Unmarshal(*s.AdditionalProperties, &b) == nil {
			s.noExtra = !b
		} else {
			sub, err := compileSchema(*s.AdditionalProperties)
			if err != nil {
				return err
			}
			s.extra = sub
		}
	}
	for _, p := range s.Properties {
		if p == nil {
			continue
		}
		if err := p.prepare(); err != nil {
			return err
		}
	}
	if s.Items != nil {
		return s.Items.prepare()
	}
	return nil
}

// validateArguments checks args, a JSON object, against s. The error names the first path at
// fault, such as "amount: must be at most 10000".
func (s *schema) validateArguments(args json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return fmt.Errorf("arguments are not valid JSON")
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("arguments must be a JSON object")
	}
	return s.validate("", v)
}

func (s *schema) validate(path string, v any) error {
	if s == nil {
		return nil
	}
	at := func(format string, args ...any) error {
		p := path
		if p == "" {
			p = "arguments"
		}
		return fmt.Errorf("%s: "+format, append([]any{p}, args...)...)
	}
	if len(s.Type) > 0 && !slices.ContainsFunc(s.Type, func(t string) bool { return hasType(t, v) }) {
		return at("must be of type %s", strings.Join(s.Type, " or "))
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e json.RawMessage) bool { return jsonEqual(e, v) }) {
		return at("must be one of the allowed values")
	}
	if s.Const != nil && !jsonEqual(*s.Const, v) {
		return at("must be the constant value")
	}
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		switch {
		case s.Minimum != nil && f < *s.Minimum:
			return at("must be at least %v", *s.Minimum)
		case s.Maximum != nil && f > *s.Maximum:
			return at("must be at most %v", *s.Maximum)
		case s.ExclusiveMinimum != nil && f <= *s.ExclusiveMinimum:
			return at("must be more than %v", *s.ExclusiveMinimum)
		case s.ExclusiveMaximum != nil && f >= *s.ExclusiveMaximum:
			return at("must be less than %v", *s.ExclusiveMaximum)
		}
	case string:
		n := utf8.RuneCountInString(x)
		switch {
		case s.MinLength != nil && n < *s.MinLength:
			return at("must be at least %d characters", *s.MinLength)
		case s.MaxLength != nil && n > *s.MaxLength:
			return at("must be at most %d characters", *s.MaxLength)
		case s.pattern != nil && !s.pattern.MatchString(x):
			return at("does not match the pattern %q", s.Pattern)
		}
	case []any:
		switch {
		case s.MinItems != nil && len(x) < *s.MinItems:
			return at("must have at least %d items", *s.MinItems)
		case s.MaxItems != nil && len(x) > *s.MaxItems:
			return at("must have at most %d items", *s.MaxItems)
		}
		for i, item := range x {
			if err := s.Items.validate(fmt.Sprintf("%s[%d]", path, i), item); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, name := range s.Required {
			if _, ok := x[name]; !ok {
				return at("%s is required", name)
			}
		}
		names := make([]string, 0, len(x))
		for name := range x {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			sub := join(path, name)
			if p, ok := s.Properties[name]; ok {
				if err := p.validate(sub, x[name]); err != nil {
					return err
				}
				continue
			}
			if s.noExtra {
				return fmt.Errorf("%s: is not an allowed argument", sub)
			}
			if err := s.extra.validate(sub, x[name]); err != nil {
				return err
			}
		}
	}
	return nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func hasType(t string, v any) bool {
	switch x := v.(type) {
	case nil:
		return t == "null"
	case bool:
		return t == "boolean"
	case string:
		return t == "string"
	case json.Number:
		if t == "number" {
			return true
		}
		if t == "integer" {
			f, err := x.Float64()
			return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
		}
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	}
	return false
}

// jsonEqual compares a raw JSON value with a decoded one.
func jsonEqual(raw json.RawMessage, v any) bool {
	a, err1 := canonicalJSON(raw)
	b, err2 := json.Marshal(v)
	if err1 != nil || err2 != nil {
		return false
	}
	c, err := canonicalJSON(b)
	return err == nil && bytes.Equal(a, c)
}
