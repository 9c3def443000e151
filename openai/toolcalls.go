package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/convengine/engine"
)

// Bounds of the tool calls of one completion: past them the stream is broken, not a turn.
const (
	maxToolCalls     = 128
	maxArgumentBytes = 1 << 20 // of all the calls' arguments together
)

// ErrBadToolCall is wrapped by the error of a completion whose tool calls cannot be run: more
// than 128 of them, arguments that are not a JSON object once the stream ended, or more than
// 1 MiB of arguments.
var ErrBadToolCall = errors.New("openai: the model sent a tool call that cannot be run")

// toolDelta is one entry of a chunk's tool_calls: a piece of a call, or a whole call.
type toolDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
		// Arguments is a string holding a piece of JSON, as OpenAI streams it, or the
		// arguments as a JSON object, as Ollama and others send whole calls.
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// toolCall is a call being assembled from its deltas.
type toolCall struct {
	index    int
	hasIndex bool
	id, name string
	typ      string
	args     []byte
}

// complete reports whether the call's arguments already are one JSON value, so that more
// arguments belong to another call.
func (c *toolCall) complete() bool { return len(c.args) > 0 && json.Valid(c.args) }

// toolCalls assembles the tool calls of a completion from their deltas, as servers really send
// them: OpenAI's pieces keyed by index, and also whole calls in one delta, calls without index
// or id, parallel calls that all say index 0, a name repeated in every delta, and arguments as
// an object.
type toolCalls struct {
	calls []*toolCall
	bytes int
}

// add files one delta with the call it continues, or starts a new call.
func (a *toolCalls) add(d *toolDelta) error {
	c := a.find(d)
	if c == nil {
		if len(a.calls) == maxToolCalls {
			return fmt.Errorf("%w: more than %d tool calls", ErrBadToolCall, maxToolCalls)
		}
		c = &toolCall{}
		if d.Index != nil && *d.Index >= 0 {
			c.index, c.hasIndex = *d.Index, true
		}
		a.calls = append(a.calls, c)
	}
	if c.id == "" {
		c.id = d.ID
	}
	if c.name == "" {
		c.name = d.Function.Name
	}
	if c.typ == "" {
		c.typ = d.Type
	}
	piece, err := argumentPiece(d.Function.Arguments)
	if err != nil {
		return err
	}
	if a.bytes += len(piece); a.bytes > maxArgumentBytes {
		return fmt.Errorf("%w: more than %d bytes of arguments", ErrBadToolCall, maxArgumentBytes)
	}
	c.args = append(c.args, piece...)
	return nil
}

// find returns the call d continues, or nil when d starts one. An id names its call; an index
// names the last call that has it, unless d names another tool, or repeats the name of a call
// whose arguments are complete (the same tool called again under the same index); without
// either, d continues the last call unless it names a tool that call cannot be.
func (a *toolCalls) find(d *toolDelta) *toolCall {
	if len(a.calls) == 0 {
		return nil
	}
	if d.ID != "" {
		for _, c := range a.calls {
			if c.id == d.ID {
				return c
			}
		}
		if last := a.calls[len(a.calls)-1]; last.id == "" && last.name == d.Function.Name && !last.complete() {
			return last // the id came after the call's first piece
		}
		return nil
	}
	var c *toolCall
	if d.Index != nil && *d.Index >= 0 {
		for i := len(a.calls) - 1; i >= 0; i-- {
			if a.calls[i].hasIndex && a.calls[i].index == *d.Index {
				c = a.calls[i]
				break
			}
		}
		if c == nil {
			return nil
		}
	} else {
		c = a.calls[len(a.calls)-1]
	}
	name := d.Function.Name
	switch {
	case name == "":
		return c
	case c.name != "" && name != c.name:
		return nil
	case c.complete() && len(bytes.TrimSpace(d.Function.Arguments)) > 0 && string(d.Function.Arguments) != `""`:
		return nil
	}
	return c
}

// argumentPiece returns the bytes a delta's arguments add: the text of a string, the JSON of an
// object, nothing for null.
func argumentPiece(raw json.RawMessage) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return nil, nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("%w: arguments that are not a JSON string", ErrBadToolCall)
		}
		return []byte(s), nil
	case raw[0] == '{':
		return raw, nil
	}
	return nil, fmt.Errorf("%w: arguments that are neither a string nor an object", ErrBadToolCall)
}

// events returns the finished calls as the engine's tool calls: function calls only, their
// arguments a JSON object ("{}" when none came).
func (a *toolCalls) events() ([]engine.ToolCall, error) {
	out := make([]engine.ToolCall, 0, len(a.calls))
	for _, c := range a.calls {
		if c.typ != "" && c.typ != "function" {
			continue
		}
		if c.name == "" {
			return nil, fmt.Errorf("%w: a call without a name", ErrBadToolCall)
		}
		args := bytes.TrimSpace(c.args)
		if len(args) == 0 {
			args = []byte(`{}`)
		}
		if args[0] != '{' || !json.Valid(args) {
			return nil, fmt.Errorf("%w: the arguments of %s are not a JSON object", ErrBadToolCall, c.name)
		}
		out = append(out, engine.ToolCall{ID: c.id, Name: c.name, Arguments: json.RawMessage(args)})
	}
	return out, nil
}
