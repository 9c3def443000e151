package engine_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/pii"
	"github.com/convengine/engine/usage"
	"github.com/convengine/engine/widgets"
)

// benchHandler serves a model that streams 40 deltas and two widgets, after one tool call when
// withTool is set.
func benchHandler(b *testing.B, withTool bool) http.Handler {
	return benchEngine(b, withTool).Handler()
}

// benchEngine is benchHandler's engine.
func benchEngine(b *testing.B, withTool bool) *engine.Engine {
	return benchEngineWith(b, withTool, nil)
}

// benchEngineWith is benchEngine with its configuration and tenant changed by with.
func benchEngineWith(b *testing.B, withTool bool, with func(*engine.Config, *engine.Tenant)) *engine.Engine {
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
	cfg := engine.Config{Model: &enginetest.ScriptedModel{Steps: steps},
		Toolset: bankTools(), SigningKey: testSigningKey, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	tenant := testTenant()
	if with != nil {
		with(&cfg, tenant)
	}
	cfg.Tenants, _ = engine.NewStaticTenants(tenant)
	e, err := engine.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return e
}

func benchTurn(b *testing.B, withTool bool) { benchTurnOf(b, benchHandler(b, withTool)) }

func benchTurnOf(b *testing.B, h http.Handler) {
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

// BenchmarkTurnMetered is BenchmarkTurnWithTool with the usage meter of package usage
// observing it (usage=on: a record per model and tool call, counted and written to a memory
// ledger by the meter's goroutine), and with a budget too (budget=on: a token and a turn budget
// in memory, reserved and settled each turn), against neither (off).
func BenchmarkTurnMetered(b *testing.B) {
	for _, mode := range []string{"off", "usage=on", "budget=on"} {
		b.Run("mode="+mode, func(b *testing.B) {
			benchTurnOf(b, benchEngineWith(b, true, func(cfg *engine.Config, t *engine.Tenant) {
				if mode == "off" {
					return
				}
				m, err := usage.New(&usage.Options{Sink: &usage.Memory{}})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { m.Close(context.Background()) })
				cfg.Observer = m.Observer(nil)
				if mode == "budget=on" {
					cfg.Budget = &usage.MemoryBudget{}
					t.Limits.TokensPerDay, t.Limits.TurnsPerUserPerDay = 1<<50, 1<<30
				}
			}).Handler())
		})
	}
}

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

// BenchmarkTurnPrivacy is BenchmarkTurnWithTool with package pii's banking policy on the
// tenant (privacy=on: the transcript and history looked at for the model, the tool call's
// arguments for placeholders, each delta of speech and each widget masked for the user),
// against none (off).
func BenchmarkTurnPrivacy(b *testing.B) {
	for _, mode := range []string{"off", "privacy=on"} {
		b.Run("mode="+mode, func(b *testing.B) {
			benchTurnOf(b, benchEngineWith(b, true, func(cfg *engine.Config, t *engine.Tenant) {
				if mode == "off" {
					return
				}
				p, err := pii.NewPrivacy(nil)
				if err != nil {
					b.Fatal(err)
				}
				cfg.Privacy, t.Privacy = p, json.RawMessage(`{"preset":"banking"}`)
			}).Handler())
		})
	}
}
