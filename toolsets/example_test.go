package toolsets_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/toolsets"
)

// Combining two toolsets: the tools of both are listed, and each call goes to its own.
func Example() {
	greet := func(_ context.Context, _ *engine.ToolEnv, call engine.ToolCall) (engine.ToolResult, error) {
		return engine.ToolResult{Content: json.RawMessage(`{"hello":"` + call.Name + `"}`)}, nil
	}
	a := &enginetest.FuncToolset{ToolList: []engine.Tool{{Name: "weather"}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){"weather": greet}}
	b := &enginetest.FuncToolset{ToolList: []engine.Tool{{Name: "news"}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){"news": greet}}
	ts := toolsets.New(toolsets.Member{Name: "a", Toolset: a}, toolsets.Member{Name: "b", Toolset: b})

	ctx := context.Background()
	env := &engine.ToolEnv{Tenant: &engine.Tenant{Key: "demo"}, Environment: &engine.Environment{Name: "production"}}
	tools, _ := ts.Tools(ctx, env)
	for _, tool := range tools {
		fmt.Println("tool:", tool.Name)
	}
	res, _ := ts.Call(ctx, env, engine.ToolCall{Name: "news"})
	fmt.Println(string(res.Content), "from b:", len(b.Calls()) == 1)

	clash := toolsets.New(toolsets.Member{Name: "a", Toolset: a}, toolsets.Member{Name: "again", Toolset: a})
	_, err := clash.Tools(ctx, env)
	fmt.Println(err)
	// Output:
	// tool: weather
	// tool: news
	// {"hello":"news"} from b: true
	// toolsets: two toolsets list the same tool: tool "weather" is listed by a and by again; rename one of them
}
