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
	// whole is the last piece that was a whole JSON object by itself after other pieces: vLLM
	// sends the arguments again whole with its finish reason, after their fragments.
	whole []byte
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
	if len(c.args) > 0 && len(piece) > 0 && piece[0] == '{' && json.Valid(piece) {
		c.whole = piece
	}
	c.args = append(c.args, piece...)
	return nil
}

// find returns the call d continues, or nil when d starts one. An id names its call, and an
// index the last call that has it; without either, d continues the last call. Whatever names
// the call, d starts another when it names a different tool, or repeats the tool's name with
// more arguments after the call's arguments were complete (the same tool called again: parallel
// calls that all say index 0, or several index-less calls in one array).
func (a *toolCalls) find(d *toolDelta) *toolCall {
	if len(a.calls) == 0 {
		return nil
	}
	name := d.Function.Name
	var c *toolCall
	if d.ID != "" {
		for _, call := range a.calls {
			if call.id == d.ID {
				c = call
			}
		}
		if c == nil && name != "" {
			return nil // a new id with a name starts a call
		}
		// An unknown id without a name continues a call: some servers (OCI through
		// LiteLLM) send a new id with every piece of one call.
	}
	switch {
	case c != nil:
	case d.Index != nil && *d.Index >= 0:
		for i := len(a.calls) - 1; i >= 0 && c == nil; i-- {
			if a.calls[i].hasIndex && a.calls[i].index == *d.Index {
				c = a.calls[i]
			}
		}
	default:
		c = a.calls[len(a.calls)-1]
	}
	switch {
	case c == nil || name == "":
		return c
	case c.name != "" && name != c.name:
		return nil
	case c.complete() && !emptyArguments(d.Function.Arguments):
		return nil
	}
	return c
}

// emptyArguments reports whether a delta's arguments add nothing: absent, null or "".
func emptyArguments(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null" || string(raw) == `""`
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
// arguments a JSON object ("{}" when none came), each with an id of its own (servers that send
// none, or the same for every call, get "call_<n>" ids).
func (a *toolCalls) events() ([]engine.ToolCall, error) {
	out := make([]engine.ToolCall, 0, len(a.calls))
	used := make(map[string]bool, len(a.calls))
	for i, c := range a.calls {
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
		if !json.Valid(args) && c.whole != nil {
			args = c.whole // fragments, then the arguments again whole
		}
		if args[0] != '{' || !json.Valid(args) {
			return nil, fmt.Errorf("%w: the arguments of %s are not a JSON object", ErrBadToolCall, c.name)
		}
		id := c.id
		for n := 0; id == "" || used[id]; n++ {
			id = fmt.Sprintf("call_%d_%d", i, n)
		}
		used[id] = true
		out = append(out, engine.ToolCall{ID: id, Name: c.name, Arguments: json.RawMessage(args)})
	}
	return out, nil
}
