package mcptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/mcptools"
)

// bankServer serves the demo bank over MCP at /mcp behind a recording Backend, and counts MCP
// handshakes.
type bankServer struct {
	*httptest.Server
	backend    *enginetest.Backend
	bank       *demobank.Bank
	handshakes atomic.Int64
	mcp        atomic.Pointer[http.Handler]
}

func newBankServer(t *testing.T) *bankServer {
	s := &bankServer{bank: demobank.New(nil)}
	s.restart()
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), `"method":"initialize"`) {
				s.handshakes.Add(1)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		(*s.mcp.Load()).ServeHTTP(w, r)
	})
	s.backend = enginetest.NewBackend(mux)
	s.Server = httptest.NewServer(s.backend)
	t.Cleanup(s.Close)
	return s
}

// restart replaces the MCP server, forgetting its sessions, as a server restart would.
func (s *bankServer) restart() {
	h := demobank.MCPHandler(s.bank)
	s.mcp.Store(&h)
}

func (s *bankServer) tenant(t *testing.T) *engine.Tenant {
	tn, err := demobank.Tenant(s.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	tn.Tools = nil
	tn.MCP = json.RawMessage(`{"path":"/mcp","status":{"get_balance":"Checking your balance"}}`)
	return tn
}

func env(tn *engine.Tenant, user string) *engine.ToolEnv {
	return &engine.ToolEnv{Tenant: tn, Environment: tn.Environments[engine.EnvProduction], UserToken: engine.Secret(user),
		RequestID: "prod-mcp", Forward: engine.ForwardedHeaders{"X-Tenant-Id": {"t-1"}}}
}

func TestConformance(t *testing.T) {
	srv := newBankServer(t)
	tn := srv.tenant(t)
	ts := mcptools.New(nil)
	defer ts.Close()
	enginetest.ToolsetSuite{Toolset: ts, Backend: srv.backend, Env: func() *engine.ToolEnv { return env(tn, "suite-user") }}.Run(t)
}

// TestTenantCredentialsShareOneSession: with the tenant's own credentials, one handshake serves
// every user: the handshake and the tool list carry the credentials and no user's token, and
// each call carries its user's.
func TestTenantCredentialsShareOneSession(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := newBankServer(t)
	tn := srv.tenant(t)
	tn.MCP = json.RawMessage(`{"path":"/mcp","status":{"get_balance":"Checking your balance"},"credentials":{"Authorization":"Bearer tenant-secret"}}`)
	ts := mcptools.New(nil)
	if ts.ListsPerUser(env(tn, "alice")) {
		t.Error("a tenant with credentials lists per user")
	}
	tools, err := ts.Tools(t.Context(), env(tn, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	if tools[0].Name != "get_balance" || tools[0].Status != "Checking your balance" {
		t.Errorf("tools %+v", tools)
	}
	for _, h := range srv.backend.Received() { // the handshake and the list
		if h.Get("Authorization") != "Bearer tenant-secret" || h.Get("X-Token") != "" || h.Get("X-Tenant-Id") != "" {
			t.Errorf("the session was opened with %v", h)
		}
	}
	srv.backend.Reset()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			user := []string{"alice", "bob"}[i%2]
			e := env(tn, user)
			e.IdempotencyKey = "k-" + user
			if _, err := ts.Call(t.Context(), e, engine.ToolCall{Name: "transfer", Arguments: json.RawMessage(`{"amount":10,"to":"Alex"}`)}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := srv.handshakes.Load(); n != 1 {
		t.Errorf("%d MCP handshakes, want 1", n)
	}
	// Each user's own token reached the bank: one transfer each, whatever the shared session.
	if a, b := srv.bank.Transfers("alice"), srv.bank.Transfers("bob"); a != 1 || b != 1 {
		t.Errorf("transfers: alice %d, bob %d", a, b)
	}
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	srv.Close()
}

// TestToolListsPerUser: without tenant credentials, an MCP server that decides a user's tools
// from the token it sees at the handshake gives each user their own list, and no user is shown
// a list made for another's token, from the Toolset or through the engine.
func TestToolListsPerUser(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // after the demo's servers closed
	handler := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		server := mcp.NewServer(&mcp.Implementation{Name: "roles"}, nil)
		add := func(name string) {
			server.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"ok":true}`}}}, nil
				})
		}
		add("get_balance")
		if r.Header.Get("X-Token") == "admin" {
			add("close_all_accounts")
		}
		return server
	}, nil)
	srv := httptest.NewServer(handler)
	defer srv.Close()
	tn, err := demobank.Tenant(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	tn.Tools, tn.MCP = nil, json.RawMessage(`{"path":"/"}`)
	ts := mcptools.New(nil)
	defer ts.Close()
	names := func(user string) string {
		tools, err := ts.Tools(t.Context(), env(tn, user))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tool := range tools {
			out = append(out, tool.Name)
		}
		return strings.Join(out, ",")
	}
	if !ts.ListsPerUser(env(tn, "admin")) {
		t.Fatal("a tenant without credentials does not list per user")
	}
	if got := names("admin"); got != "close_all_accounts,get_balance" {
		t.Errorf("admin: %s", got)
	}
	if got := names("bob"); got != "get_balance" {
		t.Errorf("bob sees %s", got)
	}
	if got := names("admin"); got != "close_all_accounts,get_balance" {
		t.Errorf("admin again: %s", got)
	}

	// Through the engine: bob's turn is offered bob's tools, even right after admin's.
	var offered []string
	var mu sync.Mutex
	model := modelFunc(func(req *engine.ModelRequest) {
		mu.Lock()
		defer mu.Unlock()
		var names []string
		for _, spec := range req.Tools {
			if spec.Kind != engine.ToolUI {
				names = append(names, spec.Name)
			}
		}
		offered = append(offered, strings.Join(names, ","))
	})
	d := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: engine.Config{Model: model, Toolset: ts},
		Tenant: func(demo *engine.Tenant) {
			demo.Tools, demo.MCP = nil, json.RawMessage(`{"path":"/"}`)
			for _, e := range demo.Environments {
				e.BackendURL = srv.URL
			}
		}})
	for _, user := range []string{"admin", "bob"} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, d.URL+engine.PathTurn, strings.NewReader(`{"transcript":"hi"}`))
		req.Header = d.Headers()
		req.Header.Set("X-Token", user)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if strings.Join(offered, " ") != "close_all_accounts,get_balance get_balance" {
		t.Errorf("the model was offered %q", offered)
	}
}

// modelFunc is a model that notes each request and says "Hi."
type modelFunc func(req *engine.ModelRequest)

func (f modelFunc) Stream(_ context.Context, req *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	f(req)
	return func(yield func(engine.ModelEvent, error) bool) {
		if yield(engine.TextEvent("Hi."), nil) {
			yield(engine.FinishEvent(engine.FinishStop), nil)
		}
	}
}

func TestSessionLostIsReplacedOnce(t *testing.T) {
	srv := newBankServer(t)
	tn := srv.tenant(t)
	ts := mcptools.New(nil)
	defer ts.Close()
	call := func() (engine.ToolResult, error) {
		return ts.Call(t.Context(), env(tn, "carol"), engine.ToolCall{Name: "get_balance", Arguments: json.RawMessage(`{}`)})
	}
	if _, err := call(); err != nil {
		t.Fatal(err)
	}
	srv.restart()
	res, err := call()
	if err != nil || res.IsError {
		t.Fatalf("after a server restart: %s, %v", res.Content, err)
	}
	if n := srv.handshakes.Load(); n != 2 {
		t.Errorf("%d handshakes, want 2", n)
	}
}

func TestUnreachableServer(t *testing.T) {
	srv := newBankServer(t)
	tn := srv.tenant(t)
	srv.Close()
	ts := mcptools.New(nil)
	defer ts.Close()
	_, err := ts.Tools(t.Context(), env(tn, "dave"))
	if !errors.Is(err, mcptools.ErrUnavailable) || strings.Contains(err.Error(), "dave") {
		t.Fatalf("err = %v", err)
	}
}

func TestParse(t *testing.T) {
	cases := []struct{ raw, want string }{
		{``, "no mcp section"},
		{`{"path":"mcp"}`, "mcp.path"},
		{`{"path":"/mcp?x=1"}`, "mcp.path"},
		{`{"url":"http://x"}`, "unknown field"},
		{`{"timeout":"-1s"}`, "mcp.timeout"},
	}
	for _, tc := range cases {
		if _, err := mcptools.Parse(json.RawMessage(tc.raw)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%s) = %v, want %q", tc.raw, err, tc.want)
		}
	}
	c, err := mcptools.Parse(json.RawMessage(`{}`))
	if err != nil || c.Path != "/mcp" {
		t.Fatalf("%+v %v", c, err)
	}
}

// A server whose tools answer in every shape the protocol allows.
func TestResults(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "shapes"}, nil)
	add := func(name string, res *mcp.CallToolResult) {
		server.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return res, nil })
	}
	add("structured", &mcp.CallToolResult{StructuredContent: map[string]int{"n": 1}, Content: []mcp.Content{&mcp.TextContent{Text: "one"}}})
	add("json_text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"n":2}`}}})
	add("plain_text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "three"}}})
	add("refused", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "not allowed"}}})
	destructive := true
	server.AddTool(&mcp.Tool{Name: "wipe", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	defer srv.Close()
	tn := &engine.Tenant{Key: "pk_shapes", Name: "Shapes", MCP: json.RawMessage(`{}`),
		Environments: map[string]*engine.Environment{engine.EnvProduction: {BackendURL: srv.URL}}}
	if err := tn.Validate(); err != nil {
		t.Fatal(err)
	}
	ts := mcptools.New(nil)
	defer ts.Close()
	tools, err := ts.Tools(t.Context(), env(tn, "erin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if (tool.Name == "wipe") != tool.Action {
			t.Errorf("tool %s: action %v", tool.Name, tool.Action)
		}
	}
	cases := []struct {
		tool, want string
		isError    bool
	}{
		{"structured", `{"n":1}`, false},
		{"json_text", `{"n":2}`, false},
		{"plain_text", `{"text":"three"}`, false},
		{"refused", `{"error":"tool_error","message":"not allowed"}`, true},
		{"no_such_tool", `"error":"tool_error"`, true},
	}
	for _, tc := range cases {
		res, err := ts.Call(t.Context(), env(tn, "erin"), engine.ToolCall{Name: tc.tool, Arguments: json.RawMessage(`{}`)})
		if err != nil || res.IsError != tc.isError || !strings.Contains(string(res.Content), tc.want) {
			t.Errorf("%s: %s isError %v, %v; want %s", tc.tool, res.Content, res.IsError, err, tc.want)
		}
	}
}
