// Package gotools makes Go functions a tenant's tools: an [engine.Toolset] whose tools take
// and return Go values.
//
// # Tools
//
// [Func] makes a tool of a function of a struct. The JSON Schema the model receives is derived
// from the struct by github.com/google/jsonschema-go ([jsonschema.For]):
//
//   - a property per exported field, named as encoding/json names it (the json tag);
//   - fields without omitempty or omitzero are required, and no other property is allowed;
//   - the jsonschema tag is the property's description: `jsonschema:"the amount, in dollars"`;
//   - integers are "integer" (with their range for sized types), floats "number", slices
//     "array", pointers also allow null, time.Time is a string.
//
// Enums and formats are not struct tags: give the type of such a field a schema of its own with
// [TypeSchemas], for example a Currency string type whose schema has "enum": ["USD", "EUR"].
//
// Every call's arguments are checked against the resolved schema, then decoded into the
// struct, before the function runs: arguments that do not fit are a result with IsError set
// ({"error":"invalid_arguments","message":…}), which the model sees and may correct, and the
// function is not called. The function's result is marshalled as the tool's JSON result; an
// error it returns is a result with IsError set ({"error":"tool_error","message":err.Error()}),
// so its message reaches the model and must hold nothing secret. Two errors are not results:
// an error wrapping [engine.ErrToolNotReached] (nothing was done: a confirmed action may be
// tried again), and any error once the call's context is done (the engine says the tool did
// not answer in time).
//
// # Sets
//
// [New] gathers tools into a [Set], the Toolset given to [engine.Config].Toolset (or returned
// for some tenants by an [engine.ToolsetByTenant]). Every tenant of the engine then has the
// same tools; the function reads the tenant, environment and user token of each call from its
// [engine.ToolEnv].
//
// # Actions
//
// A tool made with [Action] changes something, and follows the rules of every action tool: the
// engine never runs it during a turn. It runs only when the tenant lists it in
// [engine.Tenant].Actions, with the copy of its confirm widget; the model's call then becomes a
// confirm widget, and the function runs once the user confirms it through the execute
// endpoint ([engine.Engine.Execute]), with env.IdempotencyKey set. An Action tool that the
// tenant does not list is refused to the model.
package gotools
