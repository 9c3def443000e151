package toolsets_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/client"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/toolsets"
	"github.com/convengine/engine/widgets"
)

const userToken = "the-end-user's-token-s3cr3t"

// fixture is an engine whose one tenant, the reference bank that requires device proofs, has
// its HTTP backend's tools and a Go tool, fx_rate, combined.
type fixture struct {
	bank    *demobank.Bank
	backend *enginetest.Backend
	bankURL string
	funcs   *enginetest.FuncToolset
	engine  *engine.Engine
	url     string
	logs    *enginetest.Logs
	codes   chan string

	mu    sync.Mutex
	tools map[string][]string // user's token → the tool names the model was given
}

// model answers "balance and rate" by calling one tool of each toolset, then says what they
// returned; "send 20 to Alex" by calling the bank's transfer action.
func (f *fixture) model(_ context.Context, req *engine.ModelRequest) []engine.ModelEvent {
	var said string
	for _, m := range req.Messages {
		if m.Role == engine.RoleUser {
			said = m.Content
		}
	}
	var names []string
	for _, s := range req.Tools {
		names = append(names, s.Name)
	}
	f.mu.Lock()
	f.tools[said] = names
	f.mu.Unlock()
	if enginetest.StepOf(req.Messages) > 0 {
		var results []string
		for _, m := range req.Messages {
			if m.Role == engine.RoleTool {
				results = append(results, m.Name+"="+m.Content)
			}
		}
		return enginetest.Text(strings.Join(results, "; "))
	}
	switch said {
	case "balance and rate":
		return []engine.ModelEvent{
			enginetest.ToolCall("c1", "get_balance", `{}`),
			enginetest.ToolCall("c2", "fx_rate", `{"currency":"EUR"}`),
			engine.FinishEvent(engine.FinishToolCalls),
		}
	case "send 20 to Alex":
		return []engine.ModelEvent{
			enginetest.ToolCall("c1", "transfer", `{"amount":20,"to":"Alex","currency":"USD"}`),
			engine.FinishEvent(engine.FinishToolCalls),
		}
	}
	return enginetest.Text("hello")
}

func fxRate() *enginetest.FuncToolset {
	return &enginetest.FuncToolset{
		ToolList: []engine.Tool{{Name: "fx_rate", Description: "The exchange rate of a currency to the dollar.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"currency":{"type":"string"}},"required":["currency"]}`)}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"fx_rate": func(_ context.Context, _ *engine.ToolEnv, call engine.ToolCall) (engine.ToolResult, error) {
				return engine.ToolResult{Content: json.RawMessage(`{"rate":"0.92"}`)}, nil
			},
		},
	}
}

// newFixture serves the engine with toolset made of the bank's httptools and the Go tools.
func newFixture(t *testing.T, toolset func(bank engine.Toolset, funcs *enginetest.FuncToolset) engine.Toolset) *fixture {
	t.Helper()
	f := &fixture{funcs: fxRate(), logs: &enginetest.Logs{}, codes: make(chan string, 4), tools: map[string][]string{}}
	f.bank = demobank.New(&demobank.Options{RequireDeviceProof: true, SendCode: func(_, code string) { f.codes <- code }})
	f.backend = enginetest.NewBackend(f.bank)
	bankSrv := httptest.NewServer(f.backend)
	t.Cleanup(bankSrv.Close)
	f.bankURL = bankSrv.URL
	tenant, err := demobank.ProofTenant(bankSrv.URL, bankSrv.URL)
	if err != nil {
		t.Fatal(err)
	}
	tenants, err := engine.NewStaticTenants(tenant)
	if err != nil {
		t.Fatal(err)
	}
	f.engine, err = engine.New(engine.Config{Tenants: tenants, Model: enginetest.ModelFunc(f.model),
		Toolset: toolset(httptools.New(nil), f.funcs), SigningKey: bytes.Repeat([]byte{7}, 32),
		Logger: slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f.engine.Handler())
	t.Cleanup(func() { srv.Close(); f.engine.Close() })
	f.url = srv.URL
	return f
}

func combined(bank engine.Toolset, funcs *enginetest.FuncToolset) engine.Toolset {
	return toolsets.New(toolsets.Member{Name: "bank", Toolset: bank}, toolsets.Member{Name: "go", Toolset: funcs})
}

func (f *fixture) client(t *testing.T, token string) *client.Client {
	t.Helper()
	c, err := client.New(f.url, &client.Options{EngineKey: demobank.ProofEngineKey, UserToken: client.StaticToken(token)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// turn runs a turn and returns its spec.
func turn(t *testing.T, c *client.Client, said string) (*widgets.Spec, error) {
	t.Helper()
	stream, err := c.Turn(t.Context(), &client.TurnRequest{Transcript: said})
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	return stream.Spec()
}

// enrol enrols the public key of gate for token's user at the bank, with the code it sends.
func (f *fixture) enrol(t *testing.T, token string, gate *ecdsa.PrivateKey) {
	t.Helper()
	jwk, err := client.PublicJWK(gate)
	if err != nil {
		t.Fatal(err)
	}
	post := func(path string, body any) int {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.bankURL+path, bytes.NewReader(raw))
		req.Header = http.Header{"Content-Type": {"application/json"}, "X-Token": {token}}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	post("/devices/code", map[string]any{"public_key": jwk})
	select {
	case code := <-f.codes:
		if status := post("/devices", map[string]any{"code": code, "public_key": jwk}); status != http.StatusCreated {
			t.Fatalf("enrolling: %d", status)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the bank sent no code")
	}
}

func newGate(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// One turn calls a tool of the bank's HTTP backend and a Go tool; each call reaches its own
// toolset with the user's token, and the model is given both tools' results.
func TestTurnUsesAToolOfEach(t *testing.T) {
	f := newFixture(t, combined)
	spec, err := turn(t, f.client(t, userToken), "balance and rate")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(spec.Speak, "get_balance=") || !strings.Contains(spec.Speak, "1,234.56") ||
		!strings.Contains(spec.Speak, `fx_rate={"rate":"0.92"}`) {
		t.Errorf("the answer %q lacks a tool's result", spec.Speak)
	}
	calls := f.funcs.Calls()
	if len(calls) != 1 || calls[0].Call.Name != "fx_rate" || calls[0].Env.UserToken.Reveal() != userToken {
		t.Errorf("the Go toolset's calls: %+v", calls)
	}
	var balance bool
	for _, h := range f.backend.Received() {
		balance = balance || h.Get(engine.HeaderUserToken) == userToken
	}
	if !balance {
		t.Error("the bank received no call with the user's token")
	}
	f.mu.Lock()
	names := f.tools["balance and rate"]
	f.mu.Unlock()
	for _, want := range []string{"get_balance", "transfer", "fx_rate"} {
		if !slices.Contains(names, want) {
			t.Errorf("the model was not given %s: %v", want, names)
		}
	}
}

// A Go tool named as one of the bank's tools fails the listing with an error naming the tool
// and both toolsets; the engine answers the turn tools_unavailable and logs that error.
func TestNameClash(t *testing.T) {
	f := newFixture(t, func(bank engine.Toolset, funcs *enginetest.FuncToolset) engine.Toolset {
		funcs.ToolList = append(funcs.ToolList, engine.Tool{Name: "get_balance", Parameters: json.RawMessage(`{"type":"object"}`)})
		return combined(bank, funcs)
	})
	_, err := turn(t, f.client(t, userToken), "balance and rate")
	if !client.IsCode(err, engine.CodeToolsUnavailable) {
		t.Fatalf("turn: %v, want %s", err, engine.CodeToolsUnavailable)
	}
	want := `tool \"get_balance\" is listed by bank and by go`
	if logs := f.logs.String(); !strings.Contains(logs, want) {
		t.Errorf("the logs do not say %s:\n%s", want, logs)
	}
	if len(f.funcs.Calls()) != 0 {
		t.Error("a tool was called")
	}

	ts := toolsets.Combine(fxRate(), fxRate())
	_, err = ts.Tools(t.Context(), &engine.ToolEnv{Tenant: &engine.Tenant{Key: "t"}})
	if !errors.Is(err, toolsets.ErrNameClash) || !strings.Contains(err.Error(), `"fx_rate" is listed by toolset 1 (*enginetest.FuncToolset) and by toolset 2 (*enginetest.FuncToolset)`) {
		t.Errorf("Tools: %v", err)
	}
}

// A confirmed transfer runs on the bank with its idempotency key and its device proof, which
// the bank verifies against the key it enrolled; the Go toolset is not called.
func TestConfirmedActionReachesItsBackend(t *testing.T) {
	f := newFixture(t, combined)
	gate := newGate(t)
	f.enrol(t, userToken, gate)
	c := f.client(t, userToken)
	if _, err := c.CreateSession(t.Context(), &client.SessionOptions{Bind: true, Gate: gate}); err != nil {
		t.Fatal(err)
	}
	spec, err := turn(t, c, "send 20 to Alex")
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Widgets) != 1 {
		t.Fatalf("widgets %+v, want a confirm", spec.Widgets)
	}
	confirm, ok := spec.Widgets[0].(widgets.Confirm)
	if !ok {
		t.Fatalf("widget %T, want a confirm", spec.Widgets[0])
	}
	f.backend.Reset()
	res, err := c.Execute(t.Context(), confirm.Execute, client.Auth{Method: client.AuthFaceID, VerifiedAt: time.Now()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Done.Title != "Money sent" {
		t.Errorf("execute: %+v", res.Done)
	}
	if n := f.bank.Transfers(userToken); n != 1 {
		t.Errorf("the bank made %d transfers, want 1", n)
	}
	var key, proof bool
	for _, h := range f.backend.Received() {
		key = key || h.Get(engine.HeaderIdempotencyKey) != ""
		proof = proof || h.Get(engine.HeaderActionProof) != ""
	}
	if !key || !proof {
		t.Errorf("the bank received the idempotency key: %v, the proof: %v", key, proof)
	}
	if calls := f.funcs.Calls(); len(calls) != 0 {
		t.Errorf("the Go toolset was called: %+v", calls)
	}
}
