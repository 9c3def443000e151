package engine_test

import (
	"context"
	"crypto/sha256"
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
	"github.com/convengine/engine/widgets"
)

// BenchmarkExecuteProved measures an execute of a device-bound session through the handler,
// with a backend that costs nothing: "dpop" with the session's DPoP proof only, "proof" with a
// gate key's action proof as well, "passkey" with a passkey's assertion instead. The requests
// are signed before the timer starts: the figures are the engine's checks, not the client's.
func BenchmarkExecuteProved(b *testing.B) {
	for _, gate := range []string{"dpop", "proof", "passkey"} {
		b.Run(gate, func(b *testing.B) {
			p := newProvedBench(b, gate)
			reqs := make([]*http.Request, b.N)
			for i := range reqs {
				reqs[i] = p.execute(b)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for _, req := range reqs {
				rec := httptest.NewRecorder()
				p.h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%d %s", rec.Code, rec.Body.String())
				}
			}
		})
	}
}

const benchRPID, benchOrigin = "bank.example", "https://bank.example"

type provedBench struct {
	h            http.Handler
	gate         string
	device, key  *device
	passkey      *authenticator
	sessionToken string
}

func newProvedBench(b *testing.B, gate string) *provedBench {
	tn := testTenant()
	tn.RequireActionProof = gate != "dpop"
	tenants, err := engine.NewStaticTenants(tn)
	if err != nil {
		b.Fatal(err)
	}
	model := modelFunc(func(context.Context, *engine.ModelRequest) []engine.ModelEvent {
		return []engine.ModelEvent{engine.TextEvent("Please confirm."), call("c1", "transfer", `{"to":"Alex","amount":20}`)}
	})
	e, err := engine.New(engine.Config{Tenants: tenants, Model: model, Toolset: transferOK{}, SigningKey: testSigningKey,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Passkeys: passkeys(b, benchRPID, benchOrigin)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	p := &provedBench{h: e.Handler(), gate: gate, device: newDevice(b), key: newDevice(b)}
	body := `{"public_key":` + p.device.jwkJSON()
	switch gate {
	case "proof":
		body += `,"gate_key":` + p.key.jwkJSON()
	case "passkey":
		p.passkey = newAuthenticator(b, benchRPID, benchOrigin)
		body += `,"gate_credential":` + p.passkey.register(gateChallenge(p.device))
	}
	rec := p.serve(engine.PathCreateSession, headers(), body+`}`)
	var s sessionOut
	if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &s) != nil {
		b.Fatalf("create-session: %d %s", rec.Code, rec.Body.String())
	}
	p.sessionToken = s.SessionToken
	return p
}

func (p *provedBench) serve(path string, hdr http.Header, body string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	p.h.ServeHTTP(rec, p.request(path, hdr, body))
	return rec
}

func (p *provedBench) request(path string, hdr http.Header, body string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header = hdr
	return req
}

// signed are the headers of a request of the session to path, with a fresh DPoP proof.
func (p *provedBench) signed(path string) http.Header {
	return withAuth("DPoP", p.sessionToken, p.device.proof(http.MethodPost, "http://example.com"+path, p.sessionToken, time.Now()))
}

// execute runs a turn for a confirm widget and returns the request that executes it.
func (p *provedBench) execute(b *testing.B) *http.Request {
	rec := p.serve(engine.PathTurn, p.signed(engine.PathTurn), `{"transcript":"send 20 to alex"}`)
	turn, err := enginetest.ReadTurn(rec.Body)
	if rec.Code != http.StatusOK || err != nil {
		b.Fatalf("turn: %d %v", rec.Code, err)
	}
	var c widgets.Confirm
	for _, w := range turn.Spec.Widgets {
		if w, ok := w.(widgets.Confirm); ok {
			c = w
		}
	}
	now := time.Now().UTC().Format(time.RFC3339)
	var body string
	switch p.gate {
	case "dpop":
		body = executeWithProof(c.Execute, "faceid", now, nil)
	case "proof":
		proof := actionProof(p.key, c.Execute.Token, "faceid", now, nil)
		body = executeWithProof(c.Execute, "faceid", now, &proof)
	case "passkey":
		sum := sha256.Sum256([]byte(c.Execute.Token))
		body = executeWithPasskey(c.Execute, now, p.passkey.assert(sum[:], benchOrigin))
	}
	return p.request(engine.PathExecute, p.signed(engine.PathExecute), body)
}

// transferOK is a backend whose transfers succeed at once.
type transferOK struct{}

func (transferOK) Tools(context.Context, *engine.ToolEnv) ([]engine.Tool, error) {
	return []engine.Tool{{Name: "transfer", Action: true, Parameters: json.RawMessage(`{"type":"object"}`)}}, nil
}

func (transferOK) Call(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error) {
	return engine.ToolResult{Content: json.RawMessage(`{"id":"t1"}`)}, nil
}
