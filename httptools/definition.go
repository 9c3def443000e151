package httptools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/convengine/engine"
)

// Definition describes one tool of a tenant as the tenant file writes it.
type Definition struct {
	// Name is what the model calls the tool: 1 to 64 letters, digits, '_' or '-', unique
	// among the tenant's tools.
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the arguments, an object schema. Default: an object
	// with no properties.
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// Method is GET, POST, PUT, PATCH or DELETE.
	Method string `json:"method"`
	// Path is appended to the environment's backend URL; it starts with '/'.
	Path string `json:"path"`
	// Status is a short line shown while the tool runs, such as "Checking your balance".
	Status string `json:"status,omitempty"`
	// Timeout bounds one call, as "5s"; zero means the tenant's default.
	Timeout engine.Duration `json:"timeout,omitempty"`
	// Action marks a tool that changes something, which runs only once the user confirmed it.
	Action bool `json:"action,omitempty"`
	// Bind fills arguments from the request's client metadata (X-Client-Metadata), by
	// argument name: {"user_id": "userId"} sends the metadata's userId as user_id; a dotted
	// path reaches into objects ("user.id"). Bound arguments are hidden from the model, and a
	// value the model sends for one is replaced, so metadata reaches a backend only through the
	// arguments a tenant declared, and a model cannot choose them.
	Bind map[string]string `json:"bind,omitempty"`
}

var namePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// emptyParameters is the schema of a tool whose definition names no parameters.
const emptyParameters = `{"type":"object","properties":{}}`

// Parse reads a tenant's tool configuration: a JSON array of definitions. Empty or null raw
// means no tools. Unknown fields are errors, and every error names its field, as in
// "tools[1].path: must start with /"; all the mistakes found are joined.
func Parse(raw json.RawMessage) ([]Definition, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, errors.New("tools: must be a JSON array of tool definitions")
	}
	defs := make([]Definition, 0, len(items))
	var errs []error
	seen := make(map[string]int, len(items))
	for i, item := range items {
		field := fmt.Sprintf("tools[%d]", i)
		d, err := parseDefinition(field, item)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if first, dup := seen[d.Name]; dup {
			errs = append(errs, fmt.Errorf("%s.name: %q is already the name of tools[%d]", field, d.Name, first))
			continue
		}
		seen[d.Name] = i
		defs = append(defs, d)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return defs, nil
}

func parseDefinition(field string, item json.RawMessage) (Definition, error) {
	// Timeout is decoded apart, because engine.Duration's errors do not name the field.
	var raw struct {
		Definition
		Timeout json.RawMessage `json:"timeout,omitempty"`
	}
	if t := bytes.TrimSpace(item); len(t) == 0 || t[0] != '{' {
		return Definition{}, fmt.Errorf("%s: must be an object", field)
	}
	dec := json.NewDecoder(bytes.NewReader(item))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			what := "a string"
			if typeErr.Type.Kind() == reflect.Bool {
				what = "true or false"
			}
			// The path of the field starts with the embedded struct's name.
			name := strings.TrimPrefix(typeErr.Field, "Definition.")
			return Definition{}, fmt.Errorf("%s.%s: must be %s", field, name, what)
		}
		return Definition{}, fmt.Errorf("%s: %s", field, strings.TrimPrefix(err.Error(), "json: "))
	}
	d := raw.Definition

	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s.%s: "+format, append([]any{field, name}, args...)...))
	}
	if !namePattern.MatchString(d.Name) {
		bad("name", "must be 1 to 64 letters, digits, '_' or '-'")
	}
	switch d.Method {
	case "GET", "POST", "PUT", "PATCH", "DELETE":
	default:
		bad("method", "must be GET, POST, PUT, PATCH or DELETE")
	}
	switch {
	case !strings.HasPrefix(d.Path, "/"):
		bad("path", "must start with /")
	case strings.HasPrefix(d.Path, "//") || strings.ContainsFunc(d.Path, func(r rune) bool {
		return r == '?' || r == '#' || r <= ' ' || r == 0x7f
	}):
		bad("path", "must be a plain path, without '?', '#', spaces or a leading '//'")
	}
	if len(d.Parameters) == 0 || string(d.Parameters) == "null" {
		d.Parameters = json.RawMessage(emptyParameters)
	} else {
		var schema map[string]json.RawMessage
		if err := json.Unmarshal(d.Parameters, &schema); err != nil || schema == nil {
			bad("parameters", "must be a JSON Schema object")
		} else if typ := ""; json.Unmarshal(schema["type"], &typ) != nil || typ != "object" {
			bad("parameters.type", `must be "object"`)
		}
	}
	for arg, path := range d.Bind {
		if !namePattern.MatchString(arg) {
			bad("bind", "%q is not an argument name", arg)
		}
		if path == "" || strings.HasPrefix(path, ".") || strings.HasSuffix(path, ".") || strings.Contains(path, "..") {
			bad("bind."+arg, "must be a metadata field such as \"userId\" or \"user.id\"")
		}
	}
	if len(raw.Timeout) > 0 && string(raw.Timeout) != "null" {
		if err := json.Unmarshal(raw.Timeout, &d.Timeout); err != nil {
			bad("timeout", "%v", err)
		} else if d.Timeout < 0 {
			bad("timeout", "must not be negative")
		}
	}
	return d, errors.Join(errs...)
}

// tool returns the engine's view of d: the model never sees bound arguments.
func (d *Definition) tool() engine.Tool {
	return engine.Tool{
		Name:        d.Name,
		Description: d.Description,
		Parameters:  hideBound(d.Parameters, d.Bind),
		Action:      d.Action,
		Status:      d.Status,
		Timeout:     time.Duration(d.Timeout),
	}
}

// hideBound removes the bound arguments from an object schema's properties and required list.
func hideBound(schema json.RawMessage, bind map[string]string) json.RawMessage {
	if len(bind) == 0 {
		return schema
	}
	var s map[string]any
	if json.Unmarshal(schema, &s) != nil {
		return schema
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for arg := range bind {
			delete(props, arg)
		}
	}
	if req, ok := s["required"].([]any); ok {
		kept := req[:0]
		for _, r := range req {
			if name, _ := r.(string); bind[name] == "" {
				kept = append(kept, r)
			}
		}
		s["required"] = kept
	}
	out, err := json.Marshal(s)
	if err != nil {
		return schema
	}
	return out
}

// metadataValue finds a dotted path in client metadata.
func metadataValue(md map[string]any, path string) (any, bool) {
	var cur any = md
	for part := range strings.SplitSeq(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}
