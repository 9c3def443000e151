package mcptools

import (
	"context"

	"github.com/convengine/engine"
	"github.com/convengine/engine/toolsets"
)

// servers are the MCP servers of a tenant's "mcp" section. With more than one, combined
// lists and routes their tools: package toolsets decides what two servers listing one name
// means, for MCP servers as for any toolsets.
type servers struct {
	configs  []*Config
	combined *toolsets.Toolset // nil for one server
}

// newServers returns the servers of configs, combined when there are several.
func (ts *Toolset) newServers(configs []*Config) *servers {
	s := &servers{configs: configs}
	if len(configs) > 1 {
		members := make([]toolsets.Member, len(configs))
		for i, cfg := range configs {
			members[i] = toolsets.Member{Name: "MCP server " + cfg.Path, Toolset: server{ts: ts, cfg: cfg}}
		}
		s.combined = toolsets.New(members...)
	}
	return s
}

// listsPerUser reports whether a server lists tools with each user's token: one without
// credentials.
func (s *servers) listsPerUser() bool {
	for _, cfg := range s.configs {
		if len(cfg.Credentials) == 0 {
			return true
		}
	}
	return false
}

// server is one MCP server of a tenant's list, a member of the tenant's combination. Its
// sessions are the Toolset's, named by its endpoint.
type server struct {
	ts  *Toolset
	cfg *Config
}

var _ engine.UserToolset = server{}

func (s server) Tools(ctx context.Context, env *engine.ToolEnv) ([]engine.Tool, error) {
	return s.ts.serverTools(ctx, env, s.cfg)
}

func (s server) Call(ctx context.Context, env *engine.ToolEnv, call engine.ToolCall) (engine.ToolResult, error) {
	return s.ts.serverCall(ctx, env, s.cfg, call)
}

func (s server) ListsPerUser(*engine.ToolEnv) bool { return len(s.cfg.Credentials) == 0 }
