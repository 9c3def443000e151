package engine_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/mcptools"
)

// demo is the demo tenant served against a recorded demo bank.
type demo struct {
	handler http.Handler
	backend *enginetest.Backend
	bank    *demobank.Bank
}

// demoOptions adjust demoEngine: tools over MCP instead of HTTP, where logs go (at debug
// level), the engine's clock, more tenants on the same bank.
type demoOptions struct {
	mcp   bool
	logs  io.Writer
	now   func() time.Time
	extra func(base *engine.Tenant) []*engine.Tenant
}

func demoEngine(t *testing.T, o demoOptions) *demo {
	t.Helper()
	if o.logs == nil {
		o.logs = io.Discard
	}
	bank := demobank.New(nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", demobank.MCPHandler(bank))
	mux.Handle("/", bank)
	backend := enginetest.NewBackend(mux)
	srv := httptest.NewServer(backend)
	t.Cleanup(srv.Close)
	tn, err := demobank.Tenant(srv.URL, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	tn.Limits.ToolTimeout = engine.Duration(500 * time.Millisecond)
	var tools engine.Toolset = httptools.New(nil)
	if o.mcp {
		tn.Tools, tn.MCP = nil, json.RawMessage(`{"path":"/mcp"}`)
		m := mcptools.New(nil)
		t.Cleanup(func() { m.Close() })
		tools = m
	}
	tenants := []*engine.Tenant{tn}
	if o.extra != nil {
		tenants = append(tenants, o.extra(tn)...)
	}
	store, err := engine.NewStaticTenants(tenants...)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Config{Tenants: store, Model: intent.New(nil), Toolset: tools, SigningKey: testSigningKey, Now: o.now,
		Logger: slog.New(slog.NewJSONHandler(o.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	return &demo{handler: e.Handler(), backend: backend, bank: bank}
}

// TestForwardedHeadersReachTheBackend drives a turn with 40 forwarded headers, colliding
// names, mixed-case prefixes and CR/LF attempts, and checks exactly what the backend received.
func TestForwardedHeadersReachTheBackend(t *testing.T) {
	for _, kind := range []string{"http", "mcp"} {
		t.Run(kind, func(t *testing.T) {
			d := demoEngine(t, demoOptions{mcp: kind == "mcp"})
			h, backend := d.handler, d.backend
			req := httptest.NewRequest(http.MethodPost, "/engine", strings.NewReader(`{"transcript":"what is my balance"}`))
			req.Header = headers()
			req.Header.Set("X-Engine-Key", demobank.EngineKey)
			req.Header.Set("X-Client-Metadata", `{"userId":"u-1"}`)
			for i := range 40 {
				req.Header[fmt.Sprintf("X-Engine-Forward-X-Extra-%02d", i)] = []string{fmt.Sprintf("v%02d", i)}
			}
			req.Header["x-ENGINE-forward-X-Mixed-Case"] = []string{"mixed"}
			req.Header["X-Engine-Forward-X-Token"] = []string{"spoofed-token"}
			req.Header["X-Engine-Forward-x-request-id"] = []string{"prod-spoofed"}
			req.Header["X-Engine-Forward-X-Client-Metadata"] = []string{"{}"}
			req.Header["X-Engine-Forward-Host"] = []string{"evil.example"}
			req.Header["X-Engine-Forward-X-Crlf"] = []string{"a\r\nX-Injected: 1"}
			req.Header["X-Engine-Forward-Authorization"] = []string{"Bearer backend-credential"}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"type":"stat"`) {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			received := backend.Received()
			got := received[len(received)-1] // the tool call (MCP sends its handshake first)
			if got.Get("X-Token") != testToken || got.Get("X-Request-Id") != "prod-test-1" {
				t.Errorf("token %q, request id %q", got.Get("X-Token"), got.Get("X-Request-Id"))
			}
			for _, name := range []string{"X-Client-Metadata", "X-Engine-Key", "X-Crlf", "X-Injected"} {
				if got.Get(name) != "" {
					t.Errorf("%s reached the backend", name)
				}
			}
			// 32 survive, in sorted order of the names as received: Authorization, the
			// X-Crlf entry (dropped for its value, after counting nothing), the extras up to
			// the bound, and the mixed-case one, which sorts after every upper-case name.
			var forwarded []string
			for name := range got {
				if strings.HasPrefix(name, "X-Extra-") || name == "Authorization" || name == "X-Mixed-Case" {
					forwarded = append(forwarded, name)
				}
			}
			slices.Sort(forwarded)
			if len(forwarded) != 32 || forwarded[0] != "Authorization" || forwarded[31] != "X-Extra-30" || got.Get("X-Extra-31") != "" {
				t.Errorf("forwarded %d headers: %v", len(forwarded), forwarded)
			}
		})
	}
}

// TestToolPathsLogNoSecrets runs turns through every tool path at debug level and checks that
// neither the user token nor a forwarded value reaches the logs.
func TestToolPathsLogNoSecrets(t *testing.T) {
	for _, kind := range []string{"http", "mcp"} {
		t.Run(kind, func(t *testing.T) {
			logs := &logBuffer{}
			d := demoEngine(t, demoOptions{mcp: kind == "mcp", logs: logs})
			h, backend := d.handler, d.backend
			turn := func(body string) string {
				req := httptest.NewRequest(http.MethodPost, "/engine", strings.NewReader(body))
				req.Header = headers()
				req.Header.Set("X-Engine-Key", demobank.EngineKey)
				req.Header.Set("X-Engine-Forward-Authorization", "Bearer forwarded-credential")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				return rec.Body.String()
			}
			for _, say := range []string{"what is my balance", "show my recent transactions", "send 20 dollars to Alex", "send 20 dollars to Nobody"} {
				turn(`{"transcript":"` + say + `"}`)
			}
			backend.SetDelay(2 * time.Second) // past the tools' time-out
			turn(`{"transcript":"how close am I to my savings goal"}`)
			backend.SetDelay(0)
			out := logs.String()
			if !strings.Contains(out, `"msg":"forwarding headers"`) || !strings.Contains(out, "Authorization") {
				t.Errorf("the forwarded header names were not logged at debug level:\n%s", out)
			}
			for _, secret := range []string{testToken, "forwarded-credential"} {
				if strings.Contains(out, secret) {
					t.Errorf("%q appeared in the logs:\n%s", secret, out)
				}
			}
		})
	}
}
