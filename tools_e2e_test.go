package engine_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
)

// newDemo serves the demo tenant as cmd/engine does, with the demo bank behind a recorder and
// tool calls bounded to 500 ms, so that tests of slow backends stay short.
func newDemo(t *testing.T, o *enginetest.DemoOptions) *enginetest.Demo {
	t.Helper()
	if o == nil {
		o = &enginetest.DemoOptions{}
	}
	adjust := o.Tenant
	o.Tenant = func(tn *engine.Tenant) {
		tn.Limits.ToolTimeout = engine.Duration(500 * time.Millisecond)
		if adjust != nil {
			adjust(tn)
		}
	}
	return enginetest.NewDemo(t, o)
}

// TestForwardedHeadersReachTheBackend drives a turn with 40 forwarded headers, colliding
// names, mixed-case prefixes and CR/LF attempts, and checks exactly what the backend received.
func TestForwardedHeadersReachTheBackend(t *testing.T) {
	for _, kind := range []string{"http", "mcp"} {
		t.Run(kind, func(t *testing.T) {
			d := newDemo(t, &enginetest.DemoOptions{MCP: kind == "mcp"})
			h, backend := d.Handler, d.Backend
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
			d := newDemo(t, &enginetest.DemoOptions{MCP: kind == "mcp"})
			h, backend, logs := d.Handler, d.Backend, d.Logs
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

// TestCreateSessionPreconnectsTheBackend: create-session opens a connection to the backend of
// the tenant's HTTP tools in the background, without the user's token, and the first turn's
// tool call reuses it: one TCP connection reaches the backend for both.
func TestCreateSessionPreconnectsTheBackend(t *testing.T) {
	d := newDemo(t, nil)
	bank := newRawRecorder(t, d.BankURL)
	for _, env := range d.Tenant.Environments {
		env.BackendURL = bank.URL
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, d.URL+engine.PathCreateSession, strings.NewReader(`{}`))
	req.Header = d.Headers()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create-session: %d", resp.StatusCode)
	}
	// Preconnected: the HEAD is answered, and its connection back in the engine's pool before
	// the turn (a user speaks well after the session is made).
	waitFor(t, "the backend is preconnected", func() bool { return bank.answered.Load() > 0 && strings.Contains(bank.String(), "HEAD / HTTP/1.1") })
	if bank.accepts.Load() != 1 || strings.Contains(bank.String(), enginetest.DemoUserToken) {
		t.Fatalf("%d connections; the preconnect sent:\n%s", bank.accepts.Load(), bank.String())
	}

	req, _ = http.NewRequestWithContext(t.Context(), http.MethodPost, d.URL+engine.PathTurn, strings.NewReader(`{"transcript":"what is my balance"}`))
	req.Header = d.Headers()
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := enginetest.ReadTurn(resp.Body)
	resp.Body.Close()
	if err != nil || !strings.Contains(turn.Spec.Speak, "$1,234.56") {
		t.Fatalf("turn: %v %+v", err, turn.Spec)
	}
	if n := bank.accepts.Load(); n != 1 {
		t.Errorf("%d connections reached the backend, want the preconnected one alone", n)
	}
	if !strings.Contains(bank.String(), enginetest.DemoUserToken) {
		t.Error("the tool call did not go through the preconnected connection")
	}
}
