package gotools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/convengine/engine"
)

// Tool is one Go function as a tool, made by [Func]. It is safe for concurrent use.
type Tool struct {
	def    engine.Tool
	types  map[reflect.Type]*jsonschema.Schema
	schema *jsonschema.Resolved
	err    error // from deriving the schema, reported by New
	run    func(ctx context.Context, env *engine.ToolEnv, args json.RawMessage) (engine.ToolResult, error)
}

// An Option changes a tool made by [Func].
type Option func(*Tool)

// Action marks the tool as an action: it runs only once the user confirmed it (see the
// package's section on actions).
func Action() Option { return func(t *Tool) { t.def.Action = true } }

// Timeout bounds one call of the tool, during turns and on the execute endpoint; zero means the
// tenant's default.
func Timeout(d time.Duration) Option { return func(t *Tool) { t.def.Timeout = d } }

// Status is the short line clients show while the tool runs, such as "Checking your balance".
func Status(s string) Option { return func(t *Tool) { t.def.Status = s } }

// TypeSchemas gives some types the schema they have wherever they appear in the arguments,
// instead of the one derived from them: an enum, a format, a pattern. The schemas are cloned.
func TypeSchemas(m map[reflect.Type]*jsonschema.Schema) Option {
	return func(t *Tool) {
		if t.types == nil {
			t.types = make(map[reflect.Type]*jsonschema.Schema, len(m))
		}
		for typ, s := range m {
			t.types[typ] = s.CloneSchemas()
		}
	}
}

// Func makes fn a tool named name, described to the model by description. Its parameters are
// the JSON Schema derived from In, which must be a struct; Out is marshalled with
// encoding/json as the result. A type the schema cannot describe (a channel, a function, a
// recursive type), like a nil fn, is reported by [New].
func Func[In, Out any](name, description string, fn func(ctx context.Context, env *engine.ToolEnv, in In) (Out, error), opts ...Option) *Tool {
	t := &Tool{def: engine.Tool{Name: name, Description: description}}
	for _, o := range opts {
		o(t)
	}
	t.derive(reflect.TypeFor[In]())
	if fn == nil {
		t.err = fmt.Errorf("gotools: tool %s: the function is nil", name)
	}
	t.run = func(ctx context.Context, env *engine.ToolEnv, args json.RawMessage) (engine.ToolResult, error) {
		var in In
		if res, ok := t.decode(args, &in); !ok {
			return res, nil
		}
		out, err := fn(ctx, env, in)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, engine.ErrToolNotReached) {
				return engine.ToolResult{}, fmt.Errorf("%s: %w", name, err)
			}
			return errorResult("tool_error", err.Error()), nil
		}
		content, err := json.Marshal(out)
		if err != nil {
			return engine.ToolResult{}, fmt.Errorf("%s: marshalling the result: %w", name, err)
		}
		return engine.ToolResult{Content: content}, nil
	}
	return t
}

// derive sets the tool's parameters, and the resolved schema its calls are checked against.
func (t *Tool) derive(in reflect.Type) {
	s, err := jsonschema.ForType(in, &jsonschema.ForOptions{TypeSchemas: t.types})
	if err != nil {
		t.err = fmt.Errorf("gotools: tool %s: deriving the schema of %s: %w", t.def.Name, in, err)
		return
	}
	if s.Type != "object" {
		t.err = fmt.Errorf("gotools: tool %s: the arguments %s must be a struct, not %s", t.def.Name, in, typeOf(s))
		return
	}
	if t.def.Parameters, err = json.Marshal(s); err == nil {
		t.schema, err = s.Resolve(nil)
	}
	if err != nil {
		t.err = fmt.Errorf("gotools: tool %s: the schema of %s: %w", t.def.Name, in, err)
	}
}

func typeOf(s *jsonschema.Schema) string {
	switch {
	case s.Type != "":
		return s.Type
	case len(s.Types) > 0:
		return fmt.Sprint(s.Types)
	}
	return "any value"
}

// decode checks args against the schema and decodes them into in; when they do not fit, it
// returns the result the model gets instead.
func (t *Tool) decode(args json.RawMessage, in any) (engine.ToolResult, bool) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return errorResult("invalid_arguments", "the arguments are not valid JSON"), false
	}
	if _, ok := v.(map[string]any); !ok {
		return errorResult("invalid_arguments", "the arguments must be a JSON object"), false
	}
	if err := t.schema.Validate(v); err != nil {
		return errorResult("invalid_arguments", err.Error()), false
	}
	// The schema allows what encoding/json may still refuse: a string that is no time.Time, a
	// number too large for its integer type.
	if err := json.Unmarshal(args, in); err != nil {
		return errorResult("invalid_arguments", err.Error()), false
	}
	return engine.ToolResult{}, true
}

// errorResult is a result with IsError set, in the shape the engine and backends use.
func errorResult(code, message string) engine.ToolResult {
	content, _ := json.Marshal(map[string]string{"error": code, "message": message})
	return engine.ToolResult{Content: content, IsError: true}
}
