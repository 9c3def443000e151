// Package mcptools is an [engine.Toolset] over the Model Context Protocol: a tenant's tools live
// on one or several MCP servers reached over streamable HTTP, in each tenant environment.
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
// # Several servers
//
// A tenant whose tools live on several MCP servers lists them, each entry with the fields of
// the single form ([Config]) and a path of its own:
//
//	mcp:
//	  - path: /accounts/mcp
//	    credentials: {Authorization: "Bearer ${ACME_ACCOUNTS_TOKEN}"}
//	  - path: /cards/mcp
//	    timeout: 5s
//
// The model is offered the tools of every server, and each call goes to the server that listed
// its tool. They are combined as package toolsets combines toolsets: the servers are listed at
// the same time, one that fails fails the listing, and a tool name that two servers list is an
// error of [Toolset.Tools] naming the tool and both servers (wrapping [toolsets.ErrNameClash]),
// never a silent choice of one. Each server has its own sessions, opened as its entry says.
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
