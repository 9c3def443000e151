package engine_test

import (
	"context"
	"encoding/json"
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
					t.Limits.TokensPerDay, t.Limits.TurnsPerUserPerDay = 1e15, 1e6 // the tops of their ranges
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

// BenchmarkTurnPrivacy measures a text turn with one tool call under the banking privacy policy
// (privacy=on) against none (off). The user says a card number and an IBAN after six messages
// of history (some 1 KiB of text with amounts, dates and references) and the app's context:
// all of it is read by the detector. Beside the mean, it reports the 50th and 95th
// percentiles of a turn's time (p50-ns/turn, p95-ns/turn).
func BenchmarkTurnPrivacy(b *testing.B) {
	history := `[{"role":"user","content":"how much did I spend on groceries in March 2024?"},` +
		`{"role":"assistant","content":"You spent $412.37 at 6 stores between 03/01/2024 and 03/31/2024."},` +
		`{"role":"user","content":"and the transfer with reference 20240315-884213 to my landlord?"},` +
		`{"role":"assistant","content":"That was $1,250.00 on 15 March, order 4482 1190 2231 confirmed."},` +
		`{"role":"user","content":"ok, what is my checking balance now and my savings goal progress?"},` +
		`{"role":"assistant","content":"Checking holds $1,234.56; your goal is at 62%, $3,100 of $5,000."}]`
	body := `{"transcript":"please check my card 4111 1111 1111 1111 and pay it from GB82 WEST 1234 5698 7654 32",` +
		`"messages":` + history + `,"context":{"screen":"cards","selected":"Everyday Debit"}}`
	for _, mode := range []string{"off", "privacy=on"} {
		b.Run("mode="+mode, func(b *testing.B) {
			h := benchEngineWith(b, true, func(cfg *engine.Config, t *engine.Tenant) {
				if mode == "off" {
					return
				}
				p, err := pii.NewPrivacy(nil)
				if err != nil {
					b.Fatal(err)
				}
				cfg.Privacy, t.Privacy = p, json.RawMessage(`{"preset":"banking"}`)
			}).Handler()
			hdr := headers()
			var took []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				req := httptest.NewRequest(http.MethodPost, "/engine", strings.NewReader(body))
				req.Header = hdr
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatal(rec.Body.String())
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns/turn")
			b.ReportMetric(float64(took[len(took)*95/100].Nanoseconds()), "p95-ns/turn")
		})
	}
}
