package engine

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/convengine/engine/internal/headers"
)

// A Toolset reaches a tenant's backend. The engine asks it which tools a tenant environment has
// and calls them on the end user's behalf, with the user's token.
//
// Both methods are called from many goroutines at once. Call must honour ctx: the engine cancels
// it when the client goes away or the call's time-out passes.
type Toolset interface {
	// Tools lists the tools of env's tenant and environment.
	Tools(ctx context.Context, env *ToolEnv) ([]Tool, error)
	// Call runs one tool. A call the backend refused (bad arguments, declined action) is a
	// ToolResult with IsError set, which the model can explain; an error return means the tool
	// could not be reached or answered nonsense.
	Call(ctx context.Context, env *ToolEnv, call ToolCall) (ToolResult, error)
}

// ErrToolNotReached is wrapped by the error of a call whose request never reached the tool's
// backend (no backend URL, the connection could not be made, the backend answered 429 or 503):
// nothing was done. The execute endpoint then releases the action for another try. Any other
// failure of an action leaves its outcome unknown: the engine never calls that action again.
var ErrToolNotReached = errors.New("engine: the tool's backend was not reached")

// A UserToolset is a [Toolset] whose tool list may differ between the users of a tenant
// environment, such as an MCP server that lists tools with each user's token. For the
// environments where ListsPerUser reports true, the engine keeps and reuses tool lists per user,
// and never shows one user's list to another.
type UserToolset interface {
	Toolset
	ListsPerUser(env *ToolEnv) bool
}

// A Preconnector is a [Toolset] that can open, ahead of the first call, the connections a
// tenant's tools will use. create-session asks it in the background, so that the session's
// first turn does not pay the TCP and TLS handshakes. It is called for every new session: it
// should do nothing when its connections are already open.
type Preconnector interface {
	Preconnect(ctx context.Context, env *ToolEnv) error
}

// Tool describes one tool of a tenant.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments; the engine checks every call against it
	// before the call reaches the backend.
	Parameters json.RawMessage
	// Action marks a tool that changes something. The engine never runs it during a turn: it
	// emits a confirm widget instead, and the tool runs only through the execute endpoint.
	Action bool
	// Status is a short line shown while the tool runs, such as "Checking your balance".
	Status string
	// Timeout bounds one call; zero means the tenant's default.
	Timeout time.Duration
}

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolResult is what a tool returned. Content is JSON.
type ToolResult struct {
	Content json.RawMessage
	IsError bool
}

// ToolEnv is the request a tool call belongs to: whose backend, on whose behalf.
type ToolEnv struct {
	Tenant      *Tenant
	Environment *Environment
	// UserToken is sent to the backend as X-Token. It is never stored or logged.
	UserToken Secret
	RequestID string
	// Forward holds the X-Engine-Forward-* headers with their prefix removed, already filtered.
	Forward ForwardedHeaders
	// Metadata is the client metadata of the request. It never reaches a backend on its own;
	// a Toolset may bind declared arguments from it.
	Metadata map[string]any
	// IdempotencyKey is set on action calls from the execute endpoint.
	IdempotencyKey string
	// Proof is set on action calls that the device proved: the whole proof, the public key it
	// verifies with and the token it signs, so that a backend that enrolled its users' devices
	// verifies it itself.
	Proof *ActionProof
}

// SetHeaders sets on h what a request to the tenant's backend carries for env: the forwarded
// headers, except the names a forwarded header may never become and own (the headers the
// caller's protocol sets itself, such as Content-Type); then X-Token, X-Request-ID and, on
// action calls, Idempotency-Key (and, when the device proved the action, Engine-Action-Proof,
// Engine-Action-Proof-Type, Engine-Device-Key and Engine-Action-Token). It removes X-Client-Metadata and X-Engine-Key, which never
// reach a backend. A Toolset that calls HTTP backends calls it for each request.
func (env *ToolEnv) SetHeaders(h http.Header, own ...string) {
	for name, vals := range env.Forward {
		if !headers.Reserved(name, own...) {
			h[name] = append([]string(nil), vals...)
		}
	}
	if tok := env.UserToken.Reveal(); tok != "" {
		h.Set(HeaderUserToken, tok)
	}
	if env.RequestID != "" {
		h.Set(HeaderRequestID, env.RequestID)
	}
	if env.IdempotencyKey != "" {
		h.Set(HeaderIdempotencyKey, env.IdempotencyKey)
	}
	if env.Proof != nil {
		env.Proof.headers(h)
	}
	h.Del(HeaderClientMetadata)
	h.Del(HeaderEngineKey)
}

// ErrToolNotFound is returned by a [Toolset] asked to call a tool it does not have.
var ErrToolNotFound = errors.New("engine: tool not found")

// ToolsetByTenant is a [Toolset] that hands each call to the Toolset the function picks for
// the call's tenant, so that one engine serves tenants whose tools live behind different kinds
// of backends (HTTP endpoints, MCP servers). A nil pick means the tenant has no tools.
type ToolsetByTenant func(t *Tenant) Toolset

// Tools lists the tools of the tenant's Toolset.
func (f ToolsetByTenant) Tools(ctx context.Context, env *ToolEnv) ([]Tool, error) {
	ts := f(env.Tenant)
	if ts == nil {
		return nil, nil
	}
	return ts.Tools(ctx, env)
}

// Call runs the call on the tenant's Toolset.
func (f ToolsetByTenant) Call(ctx context.Context, env *ToolEnv, call ToolCall) (ToolResult, error) {
	ts := f(env.Tenant)
	if ts == nil {
		return ToolResult{}, ErrToolNotFound
	}
	return ts.Call(ctx, env, call)
}

// ListsPerUser reports whether the tenant's Toolset, when it is a [UserToolset], lists env's
// tools per user.
func (f ToolsetByTenant) ListsPerUser(env *ToolEnv) bool {
	ut, ok := f(env.Tenant).(UserToolset)
	return ok && ut.ListsPerUser(env)
}

// Preconnect lets the tenant's Toolset, when it is a [Preconnector], open its connections.
func (f ToolsetByTenant) Preconnect(ctx context.Context, env *ToolEnv) error {
	if pc, ok := f(env.Tenant).(Preconnector); ok {
		return pc.Preconnect(ctx, env)
	}
	return nil
}
