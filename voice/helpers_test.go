package voice_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/voice"
)

const (
	testKey   = "pk_test"
	testToken = "user-token-s3cr3t-value"
	helloTurn = `{"transcript":"hello"}`
)

var testSigningKey = bytes.Repeat([]byte{7}, 32)

// testTenant returns a tenant with both environments.
func testTenant() *engine.Tenant {
	return &engine.Tenant{
		Key: testKey, Name: "Test Bank", Theme: json.RawMessage(`{"primary":"#0B5FFF"}`),
		Environments: map[string]*engine.Environment{
			engine.EnvProduction: {BackendURL: "http://127.0.0.1:1"},
			engine.EnvStaging:    {BackendURL: "http://127.0.0.1:2"},
		},
	}
}

// harness serves an engine and its voice socket over a real HTTP server.
type harness struct {
	t      *testing.T
	gate   *gate        // the transcriber that holds transcriptions, when a test uses one
	dialed *voiceClient // the socket a test opened first
	srv    *httptest.Server
	engine *engine.Engine
	voice  *voice.Server
	logs   *enginetest.Logs
	// client checks every exchange against docs/openapi.yaml; it reads each response whole
	// first, so tests of a stream in progress use the server's own client.
	client *http.Client
}

// newHarness serves an engine and its voice socket with the default options. cfg's Tenants,
// SigningKey and Logger are filled in when empty.
func newHarness(t *testing.T, cfg engine.Config, tenants ...*engine.Tenant) *harness {
	t.Helper()
	return newHarnessWith(t, cfg, nil, tenants...)
}

// newHarnessWith is newHarness with the voice socket's options.
func newHarnessWith(t *testing.T, cfg engine.Config, opts *voice.Options, tenants ...*engine.Tenant) *harness {
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
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v, err := voice.New(e, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.Handler(v.Routes()...))
	t.Cleanup(func() { e.Close() })
	t.Cleanup(srv.Close)
	h := harnessOf(t, srv, e, logs)
	h.voice = v
	return h
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

func userHeaders(token string) http.Header {
	h := headers()
	h.Set("X-Token", token)
	return h
}

func (h *harness) do(ctx context.Context, method, path string, hdr http.Header, body string) *http.Response {
	h.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, h.srv.URL+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header = hdr
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp
}

// readProblem reads a problem response and checks its framing.
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

func newClock() *enginetest.Clock { return enginetest.NewClock(time.Now().Truncate(time.Second)) }

// modelFunc is a Model whose completion is computed from the request.
type modelFunc = enginetest.ModelFunc

// modelSeq is a Model that plays the same sequence for every completion.
type modelSeq func(yield func(engine.ModelEvent, error) bool)

func (s modelSeq) Stream(context.Context, *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	return iter.Seq2[engine.ModelEvent, error](s)
}

var call = enginetest.ToolCall

// blockingModel answers once release is closed, telling started when each turn reaches it.
type blockingModel struct {
	started chan struct{}
	release chan struct{}
}

func (m *blockingModel) Stream(ctx context.Context, _ *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	return func(yield func(engine.ModelEvent, error) bool) {
		m.started <- struct{}{}
		select {
		case <-m.release:
		case <-ctx.Done():
			yield(engine.ModelEvent{}, ctx.Err())
			return
		}
		_ = yield(engine.TextEvent("Done."), nil) && yield(engine.FinishEvent(engine.FinishStop), nil)
	}
}

// turnResult is a finished turn of POST /engine as a client sees it.
type turnResult struct {
	resp *http.Response
	turn *enginetest.Turn
}

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
	return &turnResult{resp: resp, turn: turn}
}

// The speech the tests speak and hear with.
var (
	newEspeak = testkit.Espeak
	newSphinx = testkit.Sphinx
	say       = testkit.Say
	voiced    = testkit.Voiced
	roomNoise = testkit.RoomNoise
	inRoom    = testkit.InRoom
	loudest   = testkit.Loudest
)

type (
	transcriberFunc = testkit.TranscriberFunc
	fakeSynthesizer = testkit.FakeSynthesizer
)
