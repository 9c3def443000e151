package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/widgets"
)

// lineWriter hands the first line matching re to found.
type lineWriter struct {
	mu    sync.Mutex
	buf   strings.Builder
	re    *regexp.Regexp
	found chan string
	sent  bool
}

func (w *lineWriter) Write(p []byte) (int, error) {
	enginetest.KeepArtifact(enginetest.ArtifactLog, p)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := w.re.FindStringSubmatch(w.buf.String()); m != nil && !w.sent {
		w.sent = true
		w.found <- m[1]
	}
	return len(p), nil
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// debugEnv is env, at the debug log level unless env says otherwise: the tests run the server
// as verbose as it gets, so that what its logs could leak is written.
func debugEnv(env map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := env[k]; ok || k != "ENGINE_LOG_LEVEL" {
			return v
		}
		return "debug"
	}
}

// withRecords keeps the server's conversation record in the test's directory, as the default
// SQLite record does in the user's: every test of the server records what it does.
func withRecords(t *testing.T, env map[string]string) map[string]string {
	if _, ok := env["ENGINE_RECORDS"]; ok {
		return env
	}
	with := map[string]string{"XDG_DATA_HOME": t.TempDir()}
	for k, v := range env {
		with[k] = v
	}
	return with
}

// startServer runs the reference server with args and returns its base URL.
func startServer(t *testing.T, args []string, env map[string]string) (string, *lineWriter) {
	t.Helper()
	base, out, _ := startServerLogs(t, args, env)
	return base, out
}

// startServerLogs is startServer, also returning the server's log.
func startServerLogs(t *testing.T, args []string, env map[string]string) (string, *lineWriter, *lineWriter) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &lineWriter{re: regexp.MustCompile(`engine listening on (\S+)`), found: make(chan string, 1)}
	logs := &lineWriter{re: regexp.MustCompile(`^\b$`), found: make(chan string, 1)}
	done := make(chan error, 1)
	env = withRecords(t, env)
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), debugEnv(env), out, logs)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run: %v", err)
			}
		case <-time.After(40 * time.Second):
			t.Error("the server did not shut down")
		}
		if strings.Contains(logs.String(), "demo-user-token") {
			t.Error("the user token appeared in the server's logs")
		}
	})
	select {
	case base := <-out.found:
		return base, out, logs
	case err := <-done:
		t.Fatalf("run: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not start")
	}
	return "", nil, nil
}

func turn(t *testing.T, base, requestID, body string) ([]enginetest.Event, widgets.Spec) {
	t.Helper()
	return turnAs(t, base, "pk_demo", requestID, body)
}

func turnAs(t *testing.T, base, key, requestID, body string) ([]enginetest.Event, widgets.Spec) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/engine", strings.NewReader(body))
	req.Header.Set("X-Engine-Key", key)
	req.Header.Set("X-Token", "demo-user-token")
	req.Header.Set("X-Request-ID", requestID)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	// What the client receives is what the server's turn log keeps.
	var got bytes.Buffer
	tr, err := enginetest.ReadTurn(io.TeeReader(resp.Body, &got))
	enginetest.KeepArtifact(enginetest.ArtifactEvents, got.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return tr.Events, tr.Spec
}

// order checks the turn's events: start, status and speak deltas, widgets, done; and that the
// deltas add up to done's speak.
func order(t *testing.T, evs []enginetest.Event, spec widgets.Spec) {
	t.Helper()
	var speak strings.Builder
	phase := 0
	for i, ev := range evs {
		p := map[string]int{"start": 0, "status": 1, "speak": 1, "widget": 2, "done": 3}[ev.Name]
		if (i == 0) != (ev.Name == "start") || p < phase {
			t.Fatalf("event %d %s out of order", i, ev.Name)
		}
		phase = p
		if ev.Name == "speak" {
			var d struct{ Delta string }
			json.Unmarshal(ev.Data, &d)
			speak.WriteString(d.Delta)
		}
	}
	if evs[len(evs)-1].Name != "done" || speak.String() != spec.Speak || spec.Speak == "" {
		t.Fatalf("deltas %q, done %q", speak.String(), spec.Speak)
	}
}

func TestDemoConversations(t *testing.T) { testDemoConversations(t, nil) }

// testDemoConversations runs the demo's conversations on a server started with env.
func testDemoConversations(t *testing.T, env map[string]string) {
	base, out := startServer(t, nil, env)
	for wait := time.Now().Add(5 * time.Second); !strings.Contains(out.String(), "curl") && time.Now().Before(wait); {
		time.Sleep(10 * time.Millisecond) // the demo is printed just after the listening line
	}
	if !strings.Contains(out.String(), "pk_demo") || !strings.Contains(out.String(), "curl") {
		t.Errorf("the demo key and a sample curl are not printed:\n%s", out.String())
	}
	conversations(t, base, "pk_demo")
	t.Run("home", func(t *testing.T) {
		evs, spec := turn(t, base, "prod-demo-2", `{"mode":"home"}`)
		order(t, evs, spec)
		if len(spec.Widgets) == 0 || len(spec.Meta.Theme) == 0 || len(spec.Suggestions) == 0 {
			t.Fatalf("home spec %+v", spec)
		}
	})
	t.Run("staging", func(t *testing.T) {
		_, spec := turn(t, base, "stg-demo-3", `{"transcript":"what is my balance"}`)
		if len(spec.Widgets) != 1 {
			t.Fatalf("spec %+v", spec)
		}
	})
	t.Run("arabic is right to left", func(t *testing.T) {
		_, spec := turn(t, base, "prod-demo-4", `{"transcript":"ما هو رصيدي","meta":{"locale":"ar"}}`)
		if spec.Meta.Direction != "rtl" {
			t.Fatalf("meta %+v", spec.Meta)
		}
	})
	t.Run("problem", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, base+"/engine", strings.NewReader(`{}`))
		req.Header.Set("X-Engine-Key", "pk_unknown")
		req.Header.Set("X-Token", "t")
		req.Header.Set("X-Request-ID", "prod-x")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var p engine.Problem
		json.NewDecoder(resp.Body).Decode(&p)
		if resp.StatusCode != 401 || p.Code != engine.CodeUnknownEngineKey {
			t.Fatalf("%d %+v", resp.StatusCode, p)
		}
	})
}

// conversations runs the demo phrases against the tenant of key and checks their widgets.
func conversations(t *testing.T, base, key string) {
	cases := []struct {
		say  string
		want string // widget type
	}{
		{"what is my balance", widgets.TypeStat},
		{"how much money do I have", widgets.TypeStat},
		{"show my recent transactions", widgets.TypeList},
		{"what did I spend recently", widgets.TypeList},
		{"how close am I to my savings goal", widgets.TypeProgress},
		{"send 20 dollars to Alex", widgets.TypeConfirm},
		{"transfer twenty dollars to jordan", widgets.TypeConfirm},
	}
	for _, tc := range cases {
		t.Run(tc.say, func(t *testing.T) {
			evs, spec := turnAs(t, base, key, "prod-demo-1", `{"transcript":"`+tc.say+`"}`)
			order(t, evs, spec)
			if len(spec.Widgets) == 0 || spec.Widgets[0].WidgetType() != tc.want {
				t.Fatalf("widgets %#v, want a %s", spec.Widgets, tc.want)
			}
			if err := spec.Widgets[0].Validate(); err != nil {
				t.Fatal(err)
			}
			switch w := spec.Widgets[0].(type) {
			case widgets.Stat:
				if w.Value != "$1,234.56" {
					t.Errorf("balance %q", w.Value)
				}
			case widgets.Confirm:
				if w.Execute.Tool != "transfer" || !strings.Contains(w.Body, "$20.00") {
					t.Errorf("confirm %+v", w)
				}
			}
		})
	}

}

func TestConfigurationErrors(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, map[string]string{"ENGINE_SIGNING_KEY": "c2hvcnQ="}, "decodes to 5 bytes"},
		{nil, map[string]string{"ENGINE_SIGNING_KEY": "!!!"}, "not valid base64"},
		{[]string{"-log-level", "loud"}, nil, "-log-level"},
		{[]string{"-tenants", "/nonexistent/tenants.yaml"}, nil, "no such file"},
		{[]string{"extra"}, nil, "unexpected arguments"},
		{[]string{"-records", "postgres://127.0.0.1:1/records"}, nil, "ENGINE_SIGNING_KEY is required with PostgreSQL records"},
		{[]string{"-records", "mysql://x"}, nil, `-records: must be "off", "sqlite:PATH" or a postgres:// URL`},
		{[]string{"-records", "sqlite:"}, nil, "sqlite: needs a file"},
		{nil, map[string]string{"ENGINE_SIGNING_KEY": "a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5", "ENGINE_PREVIOUS_SIGNING_KEYS": "short", "ENGINE_RECORDS": "off"}, "ENGINE_PREVIOUS_SIGNING_KEYS, key 1"},
	}
	for _, tc := range cases {
		err := run(t.Context(), tc.args, func(k string) string { return tc.env[k] }, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%v, %v) = %v, want %q", tc.args, tc.env, err, tc.want)
		}
	}
}

func TestTenantsFileReplacesTheDemo(t *testing.T) {
	bank := demobank.New(nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", demobank.MCPHandler(bank))
	rates := mcp.NewServer(&mcp.Implementation{Name: "rates"}, nil)
	rates.AddTool(&mcp.Tool{Name: "get_exchange_rate", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"eur":0.92}`}}}, nil
		})
	mux.Handle("/rates/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return rates }, nil))
	mux.Handle("/", bank)
	backend := httptest.NewServer(mux)
	defer backend.Close()

	// The same demo tenant three times: its tools over HTTP, over MCP, and over the bank's MCP
	// server beside a second one, switched in the file alone.
	httpTenant, err := demobank.Tenant("http://placeholder.invalid", "")
	if err != nil {
		t.Fatal(err)
	}
	httpTenant.Key = "pk_http"
	httpTenant.Environments[engine.EnvProduction].BackendURL = "${BANK_URL}"
	mcpTenant, _ := demobank.Tenant("http://placeholder.invalid", "")
	mcpTenant.Key, mcpTenant.Tools, mcpTenant.MCP = "pk_mcp", nil, json.RawMessage(`{"path":"/mcp"}`)
	mcpTenant.Environments[engine.EnvProduction].BackendURL = "${BANK_URL}"
	listTenant, _ := demobank.Tenant("http://placeholder.invalid", "")
	listTenant.Key, listTenant.Tools, listTenant.MCP = "pk_mcp_list", nil, json.RawMessage(`[{"path":"/mcp"},{"path":"/rates/mcp"}]`)
	listTenant.Environments[engine.EnvProduction].BackendURL = "${BANK_URL}"
	data, err := json.Marshal(map[string]any{"tenants": []*engine.Tenant{httpTenant, mcpTenant, listTenant}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tenants.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	base, out := startServer(t, []string{"-tenants", path}, map[string]string{"BANK_URL": backend.URL})
	if strings.Contains(out.String(), "pk_demo") {
		t.Error("the demo was started although a tenants file was given")
	}
	for _, key := range []string{"pk_http", "pk_mcp", "pk_mcp_list"} {
		t.Run(key, func(t *testing.T) { conversations(t, base, key) })
	}
	if n := bank.Transfers("demo-user-token"); n != 0 {
		t.Errorf("%d transfers ran during turns", n)
	}

	broken := filepath.Join(t.TempDir(), "broken.yaml")
	os.WriteFile(broken, []byte("tenants:\n  - key: pk_b\n    name: B\n    environments: {production: {}}\n    tools: [{name: 'bad name!', method: GET, path: /x}]\n    mcp: {path: nope}\n"+
		"  - key: pk_c\n    name: C\n    environments: {production: {}}\n    mcp: [{path: /accounts}, {path: /accounts}]\n"), 0o600)
	err = run(t.Context(), []string{"-tenants", broken}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "broken.yaml") || !strings.Contains(err.Error(), "tools[0].name") || !strings.Contains(err.Error(), "mcp.path") ||
		!strings.Contains(err.Error(), `tenant "pk_c": mcp[1].path`) {
		t.Fatalf("a broken tenants file: %v", err)
	}
}

func TestOperatorRoutes(t *testing.T) {
	base, _ := startServer(t, nil, nil)
	for path, want := range map[string]string{"/healthz": `{"status":"ok"}`, "/readyz": `{"status":"ok"}`, "/livez": "ok", "/openapi.yaml": "openapi: 3.1.0"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
}

// TestPrometheusMetrics: metrics are served on the private debug address, never on the
// engine's public one, where they would tell anyone the tenants, tools and error counts; -metrics
// without a debug address does not start.
func TestPrometheusMetrics(t *testing.T) {
	if _, err := parseFlags([]string{"-metrics"}, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "-debug-addr") {
		t.Errorf("-metrics without -debug-addr: %v", err)
	}
	base, out := startServer(t, []string{"-metrics", "-debug-addr", "127.0.0.1:0"}, nil)
	m := regexp.MustCompile(`Prometheus metrics \(private\): (\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("the banner names no metrics address:\n%s", out.String())
	}
	turn(t, base, "prod-m-1", `{"transcript":"what is my balance"}`)
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("the engine's public address answers /metrics with %s", resp.Status)
	}
	resp, err = http.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"engine_turns_total", "engine_turn_first_speak_seconds_bucket", "engine_tool_duration_seconds_count", `engine_tool="get_balance"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s:\n%.2000s", want, body)
		}
	}
	if strings.Contains(string(body), "demo-user-token") {
		t.Error("a metric carries the user token")
	}
}

func TestVersion(t *testing.T) {
	var out strings.Builder
	if err := run(t.Context(), []string{"-version"}, func(string) string { return "" }, &out, io.Discard); err != nil || out.String() != "engine "+engine.Version+"\n" {
		t.Fatalf("%q, %v", out.String(), err)
	}
	base, _ := startServer(t, nil, nil)
	resp, err := http.Post(base+"/engine", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Engine-Version") != engine.Version {
		t.Fatalf("Engine-Version %q", resp.Header.Get("Engine-Version"))
	}
}

func TestTenantsReloadOnHangup(t *testing.T) {
	bank := httptest.NewServer(demobank.New(nil))
	defer bank.Close()
	write := func(path string, keys ...string) {
		var tenants []*engine.Tenant
		for _, key := range keys {
			tn, err := demobank.Tenant(bank.URL, "")
			if err != nil {
				t.Fatal(err)
			}
			tn.Key = key
			tenants = append(tenants, tn)
		}
		data, _ := json.Marshal(map[string]any{"tenants": tenants})
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "tenants.json")
	write(path, "pk_one")
	base, _ := startServer(t, []string{"-tenants", path}, nil)
	status := func(key string) int {
		req, _ := http.NewRequest(http.MethodPost, base+"/engine", strings.NewReader(`{"transcript":"hi"}`))
		req.Header.Set("X-Engine-Key", key)
		req.Header.Set("X-Token", "demo-user-token")
		req.Header.Set("X-Request-ID", "prod-reload")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if status("pk_two") != 401 {
		t.Fatal("pk_two is known before the reload")
	}
	hangup := func() {
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	write(path, "pk_one", "pk_two")
	hangup()
	deadline := time.Now().Add(5 * time.Second)
	for status("pk_two") != 200 {
		if time.Now().After(deadline) {
			t.Fatal("pk_two is not served after SIGHUP")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A broken file leaves the tenants in service.
	os.WriteFile(path, []byte("tenants: ["), 0o600)
	hangup()
	time.Sleep(200 * time.Millisecond)
	if status("pk_two") != 200 || status("pk_one") != 200 {
		t.Fatal("a broken tenants file took tenants out of service")
	}
}

// TestLargeHeaderBlocks: the reference server lets 70 forwarded headers of 1 KB reach the
// engine, which drops what passes its bounds and answers the turn, as the protocol says; a
// header block past 128 KiB is an RFC 9457 problem with the request's id, logged.
func TestLargeHeaderBlocks(t *testing.T) {
	base, _ := startServer(t, []string{"-speech", "off"}, nil)
	do := func(n, size int) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodPost, base+"/engine", strings.NewReader(`{"transcript":"what is my balance"}`))
		req.Header.Set("X-Engine-Key", "pk_demo")
		req.Header.Set("X-Token", "demo-user-token")
		req.Header.Set("X-Request-ID", "prod-headers")
		req.Header.Set("Content-Type", "application/json")
		for i := range n {
			req.Header.Set(fmt.Sprintf("X-Engine-Forward-X-Pad-%03d", i), strings.Repeat("v", size))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	if resp, b := do(70, 1000); resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "event: done") {
		t.Fatalf("70 forwarded headers of 1 KB: %d %s", resp.StatusCode, b)
	}
	if resp, b := do(40, 5_000); resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || !strings.Contains(string(b), `"code":"headers_too_large"`) {
		t.Fatalf("200 kB of headers: %d %s", resp.StatusCode, b)
	}
	// Go's client sends X-Request-Id after the forwarded headers, past the limit: the server
	// never read it, and the problem names no request (not the previous one of the connection).
	resp, b := do(40, 30_000)
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || resp.Header.Get("Content-Type") != "application/problem+json" ||
		!strings.Contains(string(b), `"code":"headers_too_large"`) || strings.Contains(string(b), `requestId`) {
		t.Fatalf("1.2 MB of headers: %d %v %s", resp.StatusCode, resp.Header, b)
	}
}
