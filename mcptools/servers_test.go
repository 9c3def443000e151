package mcptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/mcptools"
	"github.com/convengine/engine/toolsets"
)

// twoServers serves two MCP servers on one backend, each with tools of its own: what a tenant
// lists under "mcp" as two entries. Each tool answers with its server's name, and the headers
// of each request are kept by server and JSON-RPC method.
type twoServers struct {
	*httptest.Server
	mu      sync.Mutex
	headers map[string][]http.Header // "server method" → headers of its requests
}

func newTwoServers(t *testing.T, tools map[string][]string) *twoServers {
	s := &twoServers{headers: map[string][]http.Header{}}
	mux := http.NewServeMux()
	for name, list := range tools {
		server := mcp.NewServer(&mcp.Implementation{Name: name}, nil)
		for _, tool := range list {
			server.AddTool(&mcp.Tool{Name: tool, InputSchema: json.RawMessage(`{"type":"object"}`),
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"server":"` + name + `","tool":"` + tool + `"}`}}}, nil
				})
		}
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
		mux.HandleFunc("/"+name+"/mcp", func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var msg struct{ Method string }
			if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
				s.mu.Lock()
				s.headers[name+" "+msg.Method] = append(s.headers[name+" "+msg.Method], r.Header.Clone())
				s.mu.Unlock()
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			h.ServeHTTP(w, r)
		})
	}
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *twoServers) tenant(t *testing.T, section string) *engine.Tenant {
	tn := &engine.Tenant{Key: "pk_two", Name: "Two", MCP: json.RawMessage(section),
		Environments: map[string]*engine.Environment{engine.EnvProduction: {BackendURL: s.URL}}}
	if err := tn.Validate(); err != nil {
		t.Fatal(err)
	}
	return tn
}

// TestSeveralServers: a tenant that lists two MCP servers is offered the tools of both, each
// with its server's settings, and each call reaches the server that listed the tool, with the
// headers that server is configured for.
func TestSeveralServers(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	srv := newTwoServers(t, map[string][]string{"accounts": {"get_balance", "list_transactions"}, "cards": {"freeze_card"}})
	tn := srv.tenant(t, `[
		{"path":"/accounts/mcp","status":{"get_balance":"Checking your balance"},"credentials":{"Authorization":"Bearer accounts-secret"}},
		{"path":"/cards/mcp","timeout":"3s","status":{"freeze_card":"Freezing your card"}}
	]`)
	ts := mcptools.New(nil)
	tools, err := ts.Tools(t.Context(), env(tn, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]engine.Tool{}
	var names []string
	for _, tool := range tools {
		got[tool.Name] = tool
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "freeze_card,get_balance,list_transactions" {
		t.Fatalf("tools %s", names)
	}
	if got["get_balance"].Status != "Checking your balance" || got["get_balance"].Timeout != 0 ||
		got["freeze_card"].Status != "Freezing your card" || got["freeze_card"].Timeout.Seconds() != 3 {
		t.Errorf("settings: get_balance %+v, freeze_card %+v", got["get_balance"], got["freeze_card"])
	}
	// One server lists with each user's token: so does the tenant.
	if !ts.ListsPerUser(env(tn, "alice")) {
		t.Error("a tenant with a server without credentials does not list per user")
	}

	for _, tc := range []struct{ tool, server string }{
		{"get_balance", "accounts"}, {"freeze_card", "cards"}, {"list_transactions", "accounts"},
	} {
		res, err := ts.Call(t.Context(), env(tn, "alice"), engine.ToolCall{Name: tc.tool, Arguments: json.RawMessage(`{}`)})
		if err != nil || res.IsError {
			t.Fatalf("%s: %s, %v", tc.tool, res.Content, err)
		}
		var answer struct{ Server, Tool string }
		if json.Unmarshal(res.Content, &answer); answer.Server != tc.server || answer.Tool != tc.tool {
			t.Errorf("%s answered %s", tc.tool, res.Content)
		}
	}
	// A call on another Toolset, as on another replica, finds its server without a listing of
	// its own first.
	other := mcptools.New(nil)
	if res, err := other.Call(t.Context(), env(tn, "bob"), engine.ToolCall{Name: "freeze_card"}); err != nil || !strings.Contains(string(res.Content), `"cards"`) {
		t.Errorf("freeze_card on a fresh Toolset: %s, %v", res.Content, err)
	}
	if _, err := ts.Call(t.Context(), env(tn, "alice"), engine.ToolCall{Name: "close_account"}); !errors.Is(err, engine.ErrToolNotFound) {
		t.Errorf("a tool no server lists: %v", err)
	}

	// Each server's sessions were opened as its entry says: accounts with the tenant's
	// credentials and no user's token, cards with a user's token (alice's, then bob's). Every
	// call carries its user's token and forwarded headers.
	srv.mu.Lock()
	for key, requests := range srv.headers {
		server, method, _ := strings.Cut(key, " ")
		for _, h := range requests {
			switch {
			case method == "tools/call" && (h.Get("X-Token") == "" || h.Get("X-Tenant-Id") != "t-1"):
				t.Errorf("a call to %s carried %v", server, h)
			case method != "tools/call" && server == "accounts" && (h.Get("Authorization") != "Bearer accounts-secret" || h.Get("X-Token") != ""):
				t.Errorf("%s of accounts carried %v", method, h)
			case method != "tools/call" && server == "cards" && (h.Get("Authorization") != "" || h.Get("X-Token") == ""):
				t.Errorf("%s of cards carried %v", method, h)
			}
		}
	}
	if len(srv.headers["accounts tools/call"]) != 2 || len(srv.headers["cards tools/call"]) != 2 {
		t.Errorf("calls: %d to accounts, %d to cards", len(srv.headers["accounts tools/call"]), len(srv.headers["cards tools/call"]))
	}
	srv.mu.Unlock()
	for _, ts := range []*mcptools.Toolset{ts, other} {
		if err := ts.Close(); err != nil {
			t.Fatal(err)
		}
	}
	srv.Close()
	goleak.VerifyNone(t, ignore)
}

// TestSeveralServersNameClash: two servers of a tenant that list one tool name fail the
// listing with an error naming the tool and both servers, and no call picks one of them.
func TestSeveralServersNameClash(t *testing.T) {
	srv := newTwoServers(t, map[string][]string{"accounts": {"get_balance"}, "cards": {"freeze_card", "get_balance"}})
	tn := srv.tenant(t, `[{"path":"/accounts/mcp"},{"path":"/cards/mcp"}]`)
	ts := mcptools.New(nil)
	defer ts.Close()
	_, err := ts.Tools(t.Context(), env(tn, "alice"))
	if !errors.Is(err, toolsets.ErrNameClash) {
		t.Fatalf("err = %v, want a name clash", err)
	}
	for _, want := range []string{`"get_balance"`, "MCP server /accounts/mcp", "MCP server /cards/mcp"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not name %s", err, want)
		}
	}
	if _, err := ts.Call(t.Context(), env(tn, "alice"), engine.ToolCall{Name: "get_balance"}); !errors.Is(err, toolsets.ErrNameClash) {
		t.Errorf("a call of the clashing tool: %v", err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if n := len(srv.headers["accounts tools/call"]) + len(srv.headers["cards tools/call"]); n != 0 {
		t.Errorf("%d tools were called", n)
	}
}

func TestParseServers(t *testing.T) {
	cases := []struct{ raw, want string }{
		{``, "no mcp section"},
		{`[]`, "mcp: the list names no server"},
		{`["/mcp"]`, "mcp[0]: must be an object"},
		{`[{"path":"/a"},{"path":"b"}]`, "mcp[1].path"},
		{`[{"path":"/a"},{"url":"http://x"}]`, "mcp[1]: json: unknown field"},
		{`[{"path":"/a"},{"credentials":{"X-Token":"t"}}]`, "mcp[1].credentials"},
		{`[{"path":"/a"},{"timeout":"-1s"}]`, "mcp[1].timeout"},
		{`[{},{"path":"/mcp"}]`, `mcp[1].path: "/mcp" is also the path of mcp[0]`},
		{`{"path":"mcp"}`, "mcp.path"},
	}
	for _, tc := range cases {
		if _, err := mcptools.ParseServers(json.RawMessage(tc.raw)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseServers(%s) = %v, want %q", tc.raw, err, tc.want)
		}
	}
	for raw, want := range map[string][]string{
		`{"path":"/tools"}`:                            {"/tools"},
		` [{"path":"/accounts"}, {}]`:                  {"/accounts", "/mcp"},
		`[{"path":"/a","timeout":"2s"},{"path":"/b"}]`: {"/a", "/b"},
	} {
		configs, err := mcptools.ParseServers(json.RawMessage(raw))
		if err != nil {
			t.Errorf("ParseServers(%s): %v", raw, err)
			continue
		}
		var paths []string
		for _, c := range configs {
			paths = append(paths, c.Path)
		}
		if !slices.Equal(paths, want) {
			t.Errorf("ParseServers(%s): paths %v, want %v", raw, paths, want)
		}
	}
	if _, err := mcptools.Parse(json.RawMessage(`[{}]`)); err == nil || !strings.Contains(err.Error(), "ParseServers") {
		t.Errorf("Parse of a list: %v", err)
	}
}
