// Package toolsets combines several [engine.Toolset]s into one, so that one tenant's tools may
// live in several places at once: Go functions in the host's process, the tenant's HTTP backend
// (package httptools) and MCP servers (package mcptools).
//
// # Names
//
// The combination lists the union of its members' tools. A tool name is unique among them: a
// name that two members list is an error of [Toolset.Tools] naming the tool and both members,
// never a silent choice of one. The engine answers such a turn with tools_unavailable and logs
// the error, so that the clash is found when the tenant is first used, not when a user asks for
// the tool that happens to be shadowed.
//
// # Calls
//
// A call goes to the member that listed the tool, with the call's [engine.ToolEnv] untouched:
// each member keeps its own time-outs (each [engine.Tool]'s Timeout is the member's), sets its
// own headers ([engine.ToolEnv.SetHeaders]), and an action confirmed through the execute
// endpoint reaches its own backend with its idempotency key and device proof.
//
// # Optional interfaces
//
// A [Toolset] implements every optional interface of the engine and forwards it to the members
// that implement it: [engine.UserToolset] (the combination lists per user when any member does),
// [engine.Preconnector] (every member preconnects, at the same time) and [engine.DeviceChecker]
// (every member with a device check is asked; see [Toolset.CheckDevice]).
package toolsets
