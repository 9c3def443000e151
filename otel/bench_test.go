package otel_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/otel"
)

// BenchmarkTurnTraced measures what tracing costs a turn: the demo tenant's balance turn
// through the engine's handler (a call of the model that asks for a tool, the tool, and a second
// call that streams 40 deltas, with usage reported), with no Observer (tracing=off), and with
// this package's on the SDK's providers (tracing=on): every span recorded and handed to a
// batching exporter that discards it, and the metrics aggregated by a reader never collected.
// Compare the two with benchstat -col /tracing.
func BenchmarkTurnTraced(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "tracing=off"
		if on {
			name = "tracing=on"
		}
		b.Run(name, func(b *testing.B) {
			cfg := engine.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			if on {
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
				mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
				b.Cleanup(func() {
					tp.Shutdown(context.Background())
					mp.Shutdown(context.Background())
				})
				obs, err := otel.New(&otel.Options{TracerProvider: tp, MeterProvider: mp, Provider: "openai", Model: "gpt-4o-mini"})
				if err != nil {
					b.Fatal(err)
				}
				cfg.Observer = obs.Observer()
			}
			benchTracedTurn(b, cfg)
		})
	}
}

func benchTracedTurn(b *testing.B, cfg engine.Config) {
	answer := make([]engine.ModelEvent, 0, 41)
	for range 40 {
		answer = append(answer, engine.TextEvent("word "))
	}
	usage := engine.Usage{InputTokens: 1262, CachedTokens: 1152, OutputTokens: 41, Reported: true}
	answer = append(answer, engine.ModelEvent{Kind: engine.EventFinish, Finish: engine.FinishStop, Usage: usage, Model: "gpt-4o-mini-2024-07-18"})
	cfg.Model = &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{
		{enginetest.ToolCall("call_1", "get_balance", `{}`), {Kind: engine.EventFinish, Finish: engine.FinishToolCalls, Usage: usage, Model: "gpt-4o-mini-2024-07-18"}},
		answer,
	}}
	// The tool answers in process, so that the figures are the engine's and the tracing's.
	cfg.Toolset = &enginetest.FuncToolset{ToolList: []engine.Tool{{Name: "get_balance", Description: "The balance."}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"get_balance": func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error) {
				return engine.ToolResult{Content: json.RawMessage(`{"balance":1234}`)}, nil
			},
		}}
	d := enginetest.NewDemo(b, &enginetest.DemoOptions{Config: cfg, Tenant: func(t *engine.Tenant) {
		t.Limits.UserPerMinute, t.Limits.TenantPerMinute = 0, 0
	}})
	hdr := http.Header{}
	hdr.Set("X-Engine-Key", demobank.EngineKey)
	hdr.Set("X-Token", userToken)
	hdr.Set("X-Request-ID", "prod-bench-1")
	hdr.Set("Content-Type", "application/json")
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/engine", strings.NewReader(`{"transcript":"what is my balance"}`))
		req.Header = hdr.Clone()
		rec := httptest.NewRecorder()
		d.Handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "event: done") {
			b.Fatalf("%d %s", rec.Code, rec.Body.String())
		}
	}
}
