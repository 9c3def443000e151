package toolsets_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/client"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/toolsets"
)

// notes is an [engine.UserToolset], as an MCP server without credentials is: each user has a
// tool of their own, notes_of_<token>.
type notes struct {
	mu    sync.Mutex
	calls []string // token/tool
}

func (n *notes) ListsPerUser(*engine.ToolEnv) bool { return true }

func (n *notes) Tools(_ context.Context, env *engine.ToolEnv) ([]engine.Tool, error) {
	return []engine.Tool{{Name: "notes_of_" + env.UserToken.Reveal(), Parameters: json.RawMessage(`{"type":"object"}`)}}, nil
}

func (n *notes) Call(_ context.Context, env *engine.ToolEnv, call engine.ToolCall) (engine.ToolResult, error) {
	if call.Name != "notes_of_"+env.UserToken.Reveal() {
		return engine.ToolResult{}, engine.ErrToolNotFound
	}
	n.mu.Lock()
	n.calls = append(n.calls, env.UserToken.Reveal()+"/"+call.Name)
	n.mu.Unlock()
	return engine.ToolResult{Content: json.RawMessage(`{"notes":"` + env.UserToken.Reveal() + `'s"}`)}, nil
}

// A key the bank did not enrol is refused at create-session: the combination asks the bank's
// device check.
func TestDeviceCheckForwarded(t *testing.T) {
	f := newFixture(t, combined)
	_, err := f.client(t, userToken).CreateSession(t.Context(), &client.SessionOptions{Bind: true, Gate: newGate(t)})
	if !client.IsCode(err, engine.CodeDeviceNotEnrolled) {
		t.Fatalf("create-session with a key the bank did not enrol: %v, want %s", err, engine.CodeDeviceNotEnrolled)
	}

	// Without a member that checks devices, there is no device check.
	_, err = toolsets.Combine(fxRate()).CheckDevice(t.Context(), &engine.ToolEnv{Tenant: &engine.Tenant{Key: "t"}}, &engine.DeviceKey{})
	if !errors.Is(err, engine.ErrNoDeviceCheck) {
		t.Errorf("CheckDevice without a device check: %v", err)
	}
}

// create-session preconnects the bank's backend through the combination.
func TestPreconnectForwarded(t *testing.T) {
	f := newFixture(t, combined)
	if _, err := f.client(t, userToken).CreateSession(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	f.waitPreconnected(t)
}

// waitPreconnected waits, up to 5 s, for the bank to receive the preconnection's request.
func (f *fixture) waitPreconnected(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, h := range f.backend.Received() {
			if h.Get("User-Agent") == "convengine-preconnect" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the bank was not preconnected")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkListsPerUser runs a turn of alice and one of bob, and checks that each model was given
// that user's notes tool and not the other's.
func (f *fixture) checkListsPerUser(t *testing.T) {
	t.Helper()
	for _, user := range []string{"alice", "bob"} {
		if _, err := turn(t, f.client(t, user), "hello "+user); err != nil {
			t.Fatal(err)
		}
	}
	f.mu.Lock()
	alice, bob := f.tools["hello alice"], f.tools["hello bob"]
	f.mu.Unlock()
	if !slices.Contains(alice, "notes_of_alice") || !slices.Contains(bob, "notes_of_bob") || slices.Contains(bob, "notes_of_alice") {
		t.Errorf("alice's model was given %v, bob's %v", alice, bob)
	}
}

// With a member that lists tools per user, each user's model is given that user's tools only,
// and a call reaches the member for that user.
func TestListsPerUserForwarded(t *testing.T) {
	n := &notes{}
	f := newFixture(t, func(bank engine.Toolset, funcs *enginetest.FuncToolset) engine.Toolset {
		return toolsets.New(toolsets.Member{Name: "bank", Toolset: bank}, toolsets.Member{Name: "notes", Toolset: n})
	})
	f.checkListsPerUser(t)
}

// Calls of many users at once, with no listing before them (as on an engine that executes an
// action another one confirmed), each reach the member for their user; a user's call of
// another's tool is not found.
func TestCallRoutesPerUserConcurrently(t *testing.T) {
	n := &notes{}
	ts := toolsets.Combine(fxRate(), n)
	tenant := &engine.Tenant{Key: "t"}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			env := &engine.ToolEnv{Tenant: tenant, Environment: &engine.Environment{Name: "production"},
				UserToken: engine.Secret(fmt.Sprintf("user%d", i))}
			mine := fmt.Sprintf("notes_of_user%d", i)
			for range 5 {
				res, err := ts.Call(t.Context(), env, engine.ToolCall{Name: mine})
				if err != nil || !strings.Contains(string(res.Content), fmt.Sprintf("user%d's", i)) {
					t.Errorf("%s: %s, %v", mine, res.Content, err)
				}
				if _, err := ts.Call(t.Context(), env, engine.ToolCall{Name: "fx_rate"}); err != nil {
					t.Errorf("fx_rate: %v", err)
				}
				other := fmt.Sprintf("notes_of_user%d", (i+1)%16)
				if _, err := ts.Call(t.Context(), env, engine.ToolCall{Name: other}); !errors.Is(err, engine.ErrToolNotFound) {
					t.Errorf("user%d calling %s: %v, want ErrToolNotFound", i, other, err)
				}
			}
		})
	}
	wg.Wait()
	if got := len(n.calls); got != 16*5 {
		t.Errorf("the notes toolset ran %d calls, want %d", got, 16*5)
	}
}

// movable lists tool "x" while it has it.
type movable struct {
	has   atomic.Bool
	calls atomic.Int32
}

func (m *movable) Tools(context.Context, *engine.ToolEnv) ([]engine.Tool, error) {
	if m.has.Load() {
		return []engine.Tool{{Name: "x"}}, nil
	}
	return nil, nil
}

func (m *movable) Call(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error) {
	if !m.has.Load() {
		return engine.ToolResult{}, engine.ErrToolNotFound
	}
	m.calls.Add(1)
	return engine.ToolResult{Content: json.RawMessage(`{}`)}, nil
}

// A tool that moved from one member to another since the last listing (the tenant's
// configuration changed) is called where it is now.
func TestCallFollowsAMovedTool(t *testing.T) {
	a, b := &movable{}, &movable{}
	a.has.Store(true)
	ts := toolsets.Combine(a, b)
	env := &engine.ToolEnv{Tenant: &engine.Tenant{Key: "t"}, Environment: &engine.Environment{Name: "production"}}
	if _, err := ts.Tools(t.Context(), env); err != nil {
		t.Fatal(err)
	}
	a.has.Store(false)
	b.has.Store(true)
	if _, err := ts.Call(t.Context(), env, engine.ToolCall{Name: "x"}); err != nil {
		t.Fatal(err)
	}
	if a.calls.Load() != 0 || b.calls.Load() != 1 {
		t.Errorf("calls: first toolset %d, second %d; want 0, 1", a.calls.Load(), b.calls.Load())
	}
	b.has.Store(false)
	if _, err := ts.Call(t.Context(), env, engine.ToolCall{Name: "x"}); !errors.Is(err, engine.ErrToolNotFound) {
		t.Errorf("a tool no toolset has: %v", err)
	}
}

// A combination picked per tenant by engine.ToolsetByTenant, as the reference server picks its
// toolsets, keeps its per-user lists and its preconnection.
func TestByTenantForwards(t *testing.T) {
	n := &notes{}
	f := newFixture(t, func(bank engine.Toolset, funcs *enginetest.FuncToolset) engine.Toolset {
		ts := toolsets.New(toolsets.Member{Name: "bank", Toolset: bank}, toolsets.Member{Name: "notes", Toolset: n})
		return engine.ToolsetByTenant(func(*engine.Tenant) engine.Toolset { return ts })
	})
	if _, err := f.client(t, "alice").CreateSession(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	f.checkListsPerUser(t)
	f.waitPreconnected(t)
}
