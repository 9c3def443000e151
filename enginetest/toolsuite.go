package enginetest

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
)

// ToolsetSuite checks that a [engine.Toolset] behaves as the engine expects, against a backend
// that serves the demo bank's tools (get_balance, list_transactions, get_savings_goal and the
// transfer action) behind a [Backend]. Implementers of a new Toolset run it from a test:
//
//	enginetest.ToolsetSuite{Toolset: ts, Env: newEnv, Backend: backend}.Run(t)
type ToolsetSuite struct {
	Toolset engine.Toolset
	// Env returns the environment of a call: a tenant whose tools reach the backend, a user
	// token, a request id and the forwarded header X-Tenant-Id.
	Env func() *engine.ToolEnv
	// Backend is in front of the bank the Toolset reaches.
	Backend *Backend
}

// Run runs the suite's checks as subtests.
func (s ToolsetSuite) Run(t *testing.T) {
	t.Run("list", s.list)
	t.Run("call", s.call)
	t.Run("error", s.toolError)
	t.Run("headers", s.headers)
	t.Run("timeout", s.timeout)
	t.Run("cancellation", s.cancellation)
}

func (s ToolsetSuite) list(t *testing.T) {
	tools, err := s.Toolset.Tools(t.Context(), s.Env())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]engine.Tool{}
	for _, tool := range tools {
		names[tool.Name] = tool
		var schema map[string]any
		if err := json.Unmarshal(tool.Parameters, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("tool %s has schema %s", tool.Name, tool.Parameters)
		}
	}
	for _, want := range []string{"get_balance", "list_transactions", "get_savings_goal", "transfer"} {
		if _, ok := names[want]; !ok {
			t.Errorf("tool %s is missing from %v", want, tools)
		}
	}
	if names["get_balance"].Action || !names["transfer"].Action {
		t.Errorf("actions: get_balance %v, transfer %v", names["get_balance"].Action, names["transfer"].Action)
	}
}

func (s ToolsetSuite) call(t *testing.T) {
	res, err := s.Toolset.Call(t.Context(), s.Env(), engine.ToolCall{ID: "1", Name: "get_balance", Arguments: json.RawMessage(`{"account":"checking"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Formatted string }
	if res.IsError || json.Unmarshal(res.Content, &v) != nil || v.Formatted == "" {
		t.Fatalf("result %s (isError %v)", res.Content, res.IsError)
	}
	if _, err := s.Toolset.Call(t.Context(), s.Env(), engine.ToolCall{ID: "2", Name: "no_such_tool", Arguments: json.RawMessage(`{}`)}); err == nil {
		// A Toolset may also answer with an error result; either way nothing succeeds.
		res, _ := s.Toolset.Call(t.Context(), s.Env(), engine.ToolCall{ID: "2", Name: "no_such_tool", Arguments: json.RawMessage(`{}`)})
		if !res.IsError {
			t.Errorf("an unknown tool succeeded: %s", res.Content)
		}
	}
}

func (s ToolsetSuite) toolError(t *testing.T) {
	env := s.Env()
	env.IdempotencyKey = "suite-declined-1"
	res, err := s.Toolset.Call(t.Context(), env, engine.ToolCall{ID: "1", Name: "transfer", Arguments: json.RawMessage(`{"amount":5,"to":"Nobody"}`)})
	if err != nil {
		t.Fatalf("a declined call is a result, not an error: %v", err)
	}
	if !res.IsError || !strings.Contains(string(res.Content), "unknown_payee") {
		t.Fatalf("result %s (isError %v)", res.Content, res.IsError)
	}
}

func (s ToolsetSuite) headers(t *testing.T) {
	env := s.Env()
	env.IdempotencyKey = "suite-idem-1"
	env.Metadata = map[string]any{"userId": "u-1"}
	s.Backend.Reset()
	if _, err := s.Toolset.Call(t.Context(), env, engine.ToolCall{ID: "1", Name: "transfer", Arguments: json.RawMessage(`{"amount":1,"to":"Alex"}`)}); err != nil {
		t.Fatal(err)
	}
	got := s.Backend.Received()
	i := slices.IndexFunc(got, func(h http.Header) bool { return len(h["Idempotency-Key"]) > 0 })
	if i < 0 {
		t.Fatalf("no request carried Idempotency-Key: %v", got)
	}
	h := got[i]
	want := map[string]string{
		engine.HeaderUserToken: env.UserToken.Reveal(), engine.HeaderRequestID: env.RequestID,
		"Idempotency-Key": "suite-idem-1", "X-Tenant-Id": env.Forward["X-Tenant-Id"][0],
	}
	for name, v := range want {
		if vals := h.Values(name); len(vals) != 1 || vals[0] != v {
			t.Errorf("%s = %q, want %q", name, vals, v)
		}
	}
	for _, name := range []string{engine.HeaderClientMetadata, engine.HeaderEngineKey} {
		if h.Get(name) != "" {
			t.Errorf("%s reached the backend", name)
		}
	}
}

func (s ToolsetSuite) timeout(t *testing.T) {
	s.Backend.SetDelay(5 * time.Second)
	defer s.Backend.SetDelay(0)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.Toolset.Call(ctx, s.Env(), engine.ToolCall{ID: "1", Name: "get_savings_goal", Arguments: json.RawMessage(`{}`)})
	if err == nil {
		t.Fatal("a call past its deadline succeeded")
	}
	if time.Since(start) > 4*time.Second {
		t.Fatalf("the call did not stop at its deadline: %v", err)
	}
}

func (s ToolsetSuite) cancellation(t *testing.T) {
	s.Backend.SetDelay(5 * time.Second)
	defer s.Backend.SetDelay(0)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := s.Toolset.Call(ctx, s.Env(), engine.ToolCall{ID: "1", Name: "get_savings_goal", Arguments: json.RawMessage(`{}`)})
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a cancelled call succeeded")
		}
	case <-time.After(4 * time.Second):
		t.Fatal("the call went on after its context was cancelled")
	}
}
