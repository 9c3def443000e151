package engine_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

// TestIdentify: with Config.Identify, the host names the tenant, the user's token and the
// environment from its own authentication; the protocol's headers are not read, and what the
// hook refuses is the response.
func TestIdentify(t *testing.T) {
	var envs []string
	tools := &enginetest.FuncToolset{
		ToolList: []engine.Tool{{Name: "whoami"}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"whoami": func(_ context.Context, env *engine.ToolEnv, _ engine.ToolCall) (engine.ToolResult, error) {
				envs = append(envs, env.Environment.Name+" "+env.UserToken.Reveal())
				return engine.ToolResult{Content: []byte(`{}`)}, nil
			},
		},
	}
	model := modelFunc(func(_ context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		if enginetest.StepOf(req.Messages) == 0 {
			return []engine.ModelEvent{call("1", "whoami", `{}`)}
		}
		return enginetest.Text("Done.")
	})
	identify := func(r *http.Request) (engine.Identity, error) {
		switch c, _ := r.Cookie("host"); {
		case c == nil:
			return engine.Identity{}, engine.NewProblem(http.StatusUnauthorized, "sign_in_required", "sign in first")
		case c.Value == "broken":
			return engine.Identity{}, errors.New("the host's session store is down: secret-dsn")
		case c.Value == "stranger":
			return engine.Identity{EngineKey: "pk_nobody", UserToken: "t"}, nil
		case c.Value == "tester":
			return engine.Identity{EngineKey: testKey, UserToken: "staging-token", Environment: engine.EnvStaging}, nil
		default:
			return engine.Identity{EngineKey: testKey, UserToken: "token-of-" + c.Value}, nil
		}
	}
	h := newHarness(t, engine.Config{Model: model, Toolset: tools, Identify: identify})

	post := func(cookie string, hdr http.Header) *http.Response {
		if hdr == nil {
			hdr = http.Header{}
		}
		hdr.Set("Content-Type", "application/json")
		if cookie != "" {
			hdr.Set("Cookie", "host="+cookie)
		}
		return h.doStreaming(t.Context(), http.MethodPost, "/engine", hdr, `{"transcript":"who am i"}`)
	}
	for cookie, want := range map[string]struct {
		status int
		code   string
	}{
		"":         {401, "sign_in_required"},
		"broken":   {500, engine.CodeInternal},
		"stranger": {401, engine.CodeUnknownEngineKey},
	} {
		resp := post(cookie, nil)
		p := readProblem(t, resp)
		if resp.StatusCode != want.status || p.Code != want.code {
			t.Errorf("cookie %q: %d %s (%s); want %d %s", cookie, resp.StatusCode, p.Code, p.Detail, want.status, want.code)
		}
		if strings.Contains(p.Detail, "secret-dsn") {
			t.Errorf("the hook's error reached the client: %s", p.Detail)
		}
	}
	if !strings.Contains(h.logs.String(), "Config.Identify failed") {
		t.Error("the hook's failure was not logged")
	}

	// The protocol's headers, even a client's own, choose nothing.
	hdr := http.Header{"X-Engine-Key": {"pk_other"}, "X-Token": {"token-of-mallory"}, "X-Request-Id": {"my-gateway-id-1"}}
	resp := post("alice", hdr)
	turn, err := enginetest.ReadTurn(resp.Body)
	resp.Body.Close()
	if err != nil || turn.Spec.Speak != "Done." || resp.Header.Get("X-Request-ID") != "my-gateway-id-1" {
		t.Fatalf("alice's turn: %v %+v, request id %q", err, turn, resp.Header.Get("X-Request-ID"))
	}
	resp = post("tester", nil)
	enginetest.ReadTurn(resp.Body)
	resp.Body.Close()
	if strings.Join(envs, ", ") != "production token-of-alice, staging staging-token" {
		t.Errorf("the tools ran as %q", envs)
	}
	resp = post("alice", http.Header{"X-Request-Id": {"not valid!"}})
	if p := readProblem(t, resp); resp.StatusCode != 400 || p.Code != engine.CodeInvalidRequestID {
		t.Errorf("a malformed request id: %d %s", resp.StatusCode, p.Code)
	}
}
