package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/voice"
	"github.com/convengine/engine/widgets"
	"go.uber.org/goleak"
)

const (
	testKey   = "pk_test"
	testToken = "user-token-s3cr3t-value"
)

var testSigningKey = bytes.Repeat([]byte{7}, 32)

// testTenant returns a tenant with both environments and a transfer action.
func testTenant() *engine.Tenant {
	return &engine.Tenant{
		Key: testKey, Name: "Test Bank", Theme: json.RawMessage(`{"primary":"#0B5FFF"}`),
		Environments: map[string]*engine.Environment{
			engine.EnvProduction: {BackendURL: "http://127.0.0.1:1"},
			engine.EnvStaging:    {BackendURL: "http://127.0.0.1:2"},
		},
		Actions: map[string]*engine.Action{"transfer": {Confirm: map[string]engine.ConfirmCopy{
			"en": {Title: "Send money", Body: "Send ${amount|money} to {to}?", ConfirmLabel: "Send", CancelLabel: "Cancel"},
			"es": {Title: "Enviar dinero", Body: "¿Enviar ${amount|money} a {to}?", ConfirmLabel: "Enviar", CancelLabel: "Cancelar"},
		}}},
	}
}

type harness struct {
	t      *testing.T
	srv    *httptest.Server
	engine *engine.Engine
	logs   *enginetest.Logs
	// client checks every exchange against docs/openapi.yaml; it reads each response whole
	// first, so tests of a stream in progress use the server's own client.
	client *http.Client
}

// newHarness serves an engine over a real HTTP server. cfg's Tenants, SigningKey and Logger are
// filled in when empty.
func newHarness(t *testing.T, cfg engine.Config, tenants ...*engine.Tenant) *harness {
	t.Helper()
	if len(tenants) == 0 {
		tenants = []*engine.Tenant{testTenant()}
	}
	if cfg.Tenants == nil {
		store, err := engine.NewStaticTenants(tenants...)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Tenants = store
	}
	if cfg.SigningKey == nil {
		cfg.SigningKey = testSigningKey
	}
	logs := &enginetest.Logs{}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	cfg.TurnLog = enginetest.KeepTurnLog(cfg.TurnLog)
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The engine's routes with the voice socket's, as the reference server serves them: tests of
	// every route (request ids, rate limits, sessions) cover the socket's upgrade too.
	sockets, err := voice.New(e, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.Handler(sockets.Routes()...))
	t.Cleanup(func() { e.Close() })
	t.Cleanup(srv.Close)
	return harnessOf(t, srv, e, logs)
}

// harnessOf is the harness of an engine served by srv, whose logs must never hold the user
// token.
func harnessOf(t *testing.T, srv *httptest.Server, e *engine.Engine, logs *enginetest.Logs) *harness {
	t.Cleanup(func() {
		if strings.Contains(logs.String(), testToken) {
			t.Errorf("the user token appeared in the logs:\n%s", logs.String())
		}
	})
	client := *srv.Client()
	client.Transport = testkit.NewOpenAPITransport(t, srv.Client().Transport)
	return &harness{t: t, srv: srv, engine: e, logs: logs, client: &client}
}

func headers() http.Header {
	return http.Header{
		"X-Engine-Key": {testKey},
		"X-Token":      {testToken},
		"X-Request-Id": {"prod-test-1"},
		"Content-Type": {"application/json"},
	}
}

func (h *harness) do(ctx context.Context, method, path string, hdr http.Header, body string) *http.Response {
	h.t.Helper()
	return h.send(h.client, ctx, method, path, hdr, body)
}

// doStreaming is do without the OpenAPI check, for tests that read a stream while it runs.
func (h *harness) doStreaming(ctx context.Context, method, path string, hdr http.Header, body string) *http.Response {
	h.t.Helper()
	return h.send(h.srv.Client(), ctx, method, path, hdr, body)
}

func (h *harness) send(client *http.Client, ctx context.Context, method, path string, hdr http.Header, body string) *http.Response {
	h.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, h.srv.URL+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header = hdr
	resp, err := client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp
}

// turnResult is a finished turn as a client sees it.
type turnResult struct {
	resp   *http.Response
	events []enginetest.Event
	spec   widgets.Spec
	speak  string // concatenated deltas
	turn   *enginetest.Turn
}

func (r *turnResult) names() string { return r.turn.Names() }

func (h *harness) turn(body string) *turnResult {
	h.t.Helper()
	return h.turnWith(headers(), body)
}

func (h *harness) turnWith(hdr http.Header, body string) *turnResult {
	h.t.Helper()
	resp := h.do(h.t.Context(), http.MethodPost, "/engine", hdr, body)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		h.t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	turn, err := enginetest.ReadTurn(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	res := &turnResult{resp: resp, events: turn.Events, spec: turn.Spec, speak: turn.Speak, turn: turn}
	return res
}

// problem reads a problem response and checks its framing.
func readProblem(t *testing.T, resp *http.Response) engine.Problem {
	t.Helper()
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("content type %q", ct)
	}
	var p engine.Problem
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	if p.Status != resp.StatusCode || p.Type != "about:blank" || p.Title == "" {
		t.Errorf("problem %+v does not match status %d", p, resp.StatusCode)
	}
	return p
}

// waitFor polls cond for a few seconds and fails the test if it never holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The speech the tests speak and hear with.
var (
	newEspeak = testkit.Espeak
	say       = testkit.Say
	voiced    = testkit.Voiced
	inRoom    = testkit.InRoom
	roomNoise = testkit.RoomNoise
	loudest   = testkit.Loudest
)

type (
	transcriberFunc = testkit.TranscriberFunc
	fakeSynthesizer = testkit.FakeSynthesizer
)

func demoHeaders() http.Header {
	h := headers()
	h.Set("X-Engine-Key", demobank.EngineKey)
	return h
}

// newDemoHarness serves the demo bank tenant as cmd/engine does: the intent model, the demo
// bank over HTTP, espeak-ng and pocketsphinx. Fields of cfg already set are kept.
func newDemoHarness(t *testing.T, cfg engine.Config) *harness {
	t.Helper()
	d := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: testkit.WithSpeech(t, cfg)})
	return harnessOf(t, d.Server, d.Engine, d.Logs)
}

// longAnswer is an answer that takes a while to stream with a delay between deltas.
func longAnswer(sentences int) []engine.ModelEvent {
	var words []string
	for range sentences {
		words = append(words, "This ", "is ", "a ", "sentence. ")
	}
	return enginetest.Text(words...)
}

// checkLeaks fails t if goroutines started during the test outlive it and its cleanups.
func checkLeaks(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}
