package enginetest

import (
	"context"
	"sync"

	"github.com/convengine/engine"
)

// FuncToolset is an [engine.Toolset] whose tools are Go functions. It records every call with
// the environment it ran in. It is safe for concurrent use.
type FuncToolset struct {
	ToolList []engine.Tool
	// Funcs run the tools by name. A tool without a function returns engine.ErrToolNotFound.
	Funcs map[string]func(ctx context.Context, env *engine.ToolEnv, call engine.ToolCall) (engine.ToolResult, error)

	mu    sync.Mutex
	calls []Call
}

// Call is one recorded tool call.
type Call struct {
	Env  engine.ToolEnv
	Call engine.ToolCall
}

// Tools implements [engine.Toolset].
func (f *FuncToolset) Tools(context.Context, *engine.ToolEnv) ([]engine.Tool, error) {
	return f.ToolList, nil
}

// Call implements [engine.Toolset].
func (f *FuncToolset) Call(ctx context.Context, env *engine.ToolEnv, call engine.ToolCall) (engine.ToolResult, error) {
	f.mu.Lock()
	f.calls = append(f.calls, Call{Env: *env, Call: call})
	f.mu.Unlock()
	fn := f.Funcs[call.Name]
	if fn == nil {
		return engine.ToolResult{}, engine.ErrToolNotFound
	}
	return fn(ctx, env, call)
}

// Calls returns the calls made so far.
func (f *FuncToolset) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}
