package main

import (
	"github.com/convengine/engine"
	"github.com/convengine/engine/breaker"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/mcptools"
)

// newToolset returns the reference server's tools: a tenant with an "mcp" section reaches its
// MCP servers, any other its HTTP tools. close ends the MCP sessions.
// Each backend has a breaker, reported to events.
func newToolset(events *breakerEvents) (ts engine.Toolset, close func()) {
	web := httptools.New(&httptools.Options{Breakers: breaker.New(&breaker.Options{OnChange: events.change})})
	mcp := mcptools.New(nil)
	pick := func(t *engine.Tenant) engine.Toolset {
		if len(t.MCP) > 0 {
			return mcp
		}
		return web
	}
	return engine.ToolsetByTenant(pick), func() { mcp.Close() }
}
