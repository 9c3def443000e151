package gotools

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/convengine/engine"
	"github.com/convengine/engine/widgets"
)

// ErrDuplicateTool is wrapped by the error of [New] given two tools of the same name.
var ErrDuplicateTool = errors.New("gotools: two tools have the same name")

// namePattern is what every model accepts as a tool's name.
var namePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Set is an [engine.Toolset] of Go functions. It is safe for concurrent use; nothing changes
// it after New.
type Set struct {
	list   []engine.Tool
	byName map[string]*Tool
}

// New gathers tools into a Set. It reports the first tool whose schema could not be derived,
// whose name is not 1 to 64 letters, digits, _ or -, or is one of the engine's UI tools, and
// two tools of the same name (wrapping [ErrDuplicateTool]).
func New(tools ...*Tool) (*Set, error) {
	s := &Set{byName: make(map[string]*Tool, len(tools))}
	for i, t := range tools {
		switch {
		case t == nil:
			return nil, fmt.Errorf("gotools: tool %d is nil", i)
		case t.err != nil:
			return nil, t.err
		case !namePattern.MatchString(t.def.Name):
			return nil, fmt.Errorf("gotools: tool name %q must be 1 to 64 letters, digits, _ or -", t.def.Name)
		case widgets.IsUITool(t.def.Name):
			return nil, fmt.Errorf("gotools: tool name %q is one of the engine's UI tools", t.def.Name)
		case s.byName[t.def.Name] != nil:
			return nil, fmt.Errorf("%w: %s", ErrDuplicateTool, t.def.Name)
		case t.def.Timeout < 0:
			return nil, fmt.Errorf("gotools: tool %s: the time-out is negative", t.def.Name)
		}
		s.byName[t.def.Name] = t
		s.list = append(s.list, t.def)
	}
	return s, nil
}

// Tools implements [engine.Toolset]: the same tools for every tenant, in the order given to
// New, each with the JSON Schema derived from its arguments' type.
func (s *Set) Tools(context.Context, *engine.ToolEnv) ([]engine.Tool, error) {
	return slices.Clone(s.list), nil
}

// Call implements [engine.Toolset]: it checks the call's arguments, decodes them and runs the
// tool's function within the tool's time-out. A call of a name the Set does not have wraps
// [engine.ErrToolNotFound].
func (s *Set) Call(ctx context.Context, env *engine.ToolEnv, call engine.ToolCall) (engine.ToolResult, error) {
	t := s.byName[call.Name]
	if t == nil {
		return engine.ToolResult{}, fmt.Errorf("%w: %q", engine.ErrToolNotFound, call.Name)
	}
	if t.def.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.def.Timeout)
		defer cancel()
	}
	return t.run(ctx, env, call.Arguments)
}
