package engine_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/widgets"
)

// benchHandler serves a model that streams 40 deltas and two widgets, after one tool call when
// withTool is set.
func benchHandler(b *testing.B, withTool bool) http.Handler {
	return benchEngine(b, withTool).Handler()
}

// benchEngine is benchHandler's engine.
func benchEngine(b *testing.B, withTool bool) *engine.Engine {
	answer := make([]engine.ModelEvent, 0, 43)
	for range 40 {
		answer = append(answer, engine.TextEvent("word "))
	}
	answer = append(answer,
		call("w1", widgets.ToolShowStat, `{"label":"Checking","value":"$1,234.56"}`),
		call("w2", widgets.ToolShowProgress, `{"label":"Goal","value":0.5}`),
		engine.FinishEvent(engine.FinishStop))
	steps := [][]engine.ModelEvent{answer}
	if withTool {
		steps = [][]engine.ModelEvent{{call("c1", "get_balance", `{"account":"checking"}`)}, answer}
	}
	store, _ := engine.NewStaticTenants(testTenant())
	e, err := engine.New(engine.Config{Tenants: store, Model: &enginetest.ScriptedModel{Steps: steps},
		Toolset: bankTools(), SigningKey: testSigningKey, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

func benchTurn(b *testing.B, withTool bool) {
	h := benchHandler(b, withTool)
	hdr := headers()
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/engine", strings.NewReader(`{"transcript":"what is my balance"}`))
		req.Header = hdr
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Body.String())
		}
	}
}

// BenchmarkTurn measures a whole turn in process: headers, body, 40 speak events, two widgets
// and done, with a model that costs nothing.
func BenchmarkTurn(b *testing.B) { benchTurn(b, false) }

// BenchmarkTurnWithTool adds one data tool call (schema check, status event, a second step).
func BenchmarkTurnWithTool(b *testing.B) { benchTurn(b, true) }

// BenchmarkTurnInProcess is BenchmarkTurn through Engine.Turn: no headers, no body, no
// stream; the events are counted.
func BenchmarkTurnInProcess(b *testing.B) {
	e := benchEngine(b, false)
	caller := &engine.Caller{EngineKey: testKey, UserToken: testToken}
	in := &engine.TurnInput{Transcript: "what is my balance"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for ev, err := range e.Turn(ctx, caller, in) {
			if err != nil {
				b.Fatal(err)
			}
			_ = ev
			n++
		}
		if n != 44 {
			b.Fatalf("%d events", n)
		}
	}
}

// BenchmarkTurnHTTP measures turns over a real loopback connection.
func BenchmarkTurnHTTP(b *testing.B) {
	srv := httptest.NewServer(benchHandler(b, false))
	defer srv.Close()
	client := srv.Client()
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/engine", strings.NewReader(`{"transcript":"hi"}`))
		req.Header = headers()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
