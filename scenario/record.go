package scenario

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/convengine/engine"
)

// ToolCall is a call the tenant's backend received during a turn (or, for an action, the call
// the turn proposed in its confirm widget), with its arguments.
type ToolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Proposed marks an action the turn proposed (its confirm widget) rather than ran.
	Proposed bool `json:"proposed,omitempty"`
	// IsError: the backend refused the call; Failed: it could not be reached or answered
	// nonsense.
	IsError bool `json:"is_error,omitempty"`
	Failed  bool `json:"failed,omitempty"`
}

// recorder is the engine's Toolset with the calls it receives recorded by request id: what the
// backend really got. It keeps the optional interfaces of the Toolset it wraps.
type recorder struct {
	engine.Toolset
	mu    sync.Mutex
	calls map[string][]ToolCall
}

func newRecorder(ts engine.Toolset) *recorder {
	return &recorder{Toolset: ts, calls: map[string][]ToolCall{}}
}

func (r *recorder) Call(ctx context.Context, env *engine.ToolEnv, call engine.ToolCall) (engine.ToolResult, error) {
	res, err := r.Toolset.Call(ctx, env, call)
	r.mu.Lock()
	r.calls[env.RequestID] = append(r.calls[env.RequestID], ToolCall{Name: call.Name, Arguments: compactJSON(call.Arguments),
		IsError: err == nil && res.IsError, Failed: err != nil})
	r.mu.Unlock()
	return res, err
}

// take returns and forgets the calls of request id.
func (r *recorder) take(id string) []ToolCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls[id]
	delete(r.calls, id)
	return c
}

func (r *recorder) CheckDevice(ctx context.Context, env *engine.ToolEnv, key *engine.DeviceKey) (bool, error) {
	if dc, ok := r.Toolset.(engine.DeviceChecker); ok {
		return dc.CheckDevice(ctx, env, key)
	}
	return false, engine.ErrNoDeviceCheck
}

func (r *recorder) ListsPerUser(env *engine.ToolEnv) bool {
	ut, ok := r.Toolset.(engine.UserToolset)
	return ok && ut.ListsPerUser(env)
}

func (r *recorder) Preconnect(ctx context.Context, env *engine.ToolEnv) error {
	if pc, ok := r.Toolset.(engine.Preconnector); ok {
		return pc.Preconnect(ctx, env)
	}
	return nil
}

// compactJSON is raw without insignificant space; raw itself when it is not JSON.
func compactJSON(raw json.RawMessage) json.RawMessage {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return append(json.RawMessage(nil), raw...)
	}
	out, _ := json.Marshal(v) // sorted keys: deterministic
	return out
}
