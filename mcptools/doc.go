// Package mcptools is an [engine.Toolset] over the Model Context Protocol: a tenant's tools live
// on an MCP server reached over streamable HTTP, one per tenant environment.
//
// A tenant opts in with an "mcp" section in the tenants file; the server's URL is the
// environment's backend URL joined with the path:
//
//	tenants:
//	  - key: pk_live_acme
//	    environments:
//	      production: {backend_url: "https://tools.acme.example"}
//	    mcp:
//	      path: /mcp          # default /mcp
//	      timeout: 10s        # one call; default the tenant's tool time-out
//	      status:             # optional lines shown while a tool runs
//	        get_balance: Checking your balance
//	    actions:
//	      transfer: {confirm: {...}}
//
// # Sessions and headers
//
// The Toolset keeps one MCP session per tenant environment, opened on first use (or by the
// engine's warm-up at session creation) and shared by that environment's users, so a turn
// never pays the MCP handshake. Every HTTP request of a call carries that call's user token
// (X-Token), request id (X-Request-ID), the forwarded headers and, for actions run by the
// execute endpoint, Idempotency-Key: the MCP server must authorize each request by its own
// X-Token, never by the session. X-Client-Metadata and X-Engine-Key are never sent. The
// standalone SSE stream is disabled: the engine only makes requests. A session the server
// no longer knows is replaced once, transparently.
//
// # Results
//
// Structured content is the tool's result when the server sends it; otherwise text content
// that is JSON is used as is, and other text is wrapped as {"text": "…"}. A result with isError
// set is a tool error the model can explain. A tool is an action when the tenant allow-lists it
// or the server marks it destructive (destructiveHint true and readOnlyHint false); an action
// never runs during a turn.
package mcptools
