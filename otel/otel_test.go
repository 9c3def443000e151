package otel_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/otel"
)

const userToken = "otel-user-token-secret"

func TestARealTurnMakesSpansAndMetrics(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { keepSpans(spans) })
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	obs, err := otel.New(&otel.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}

	tools := httptools.New(&httptools.Options{Client: &http.Client{Transport: otel.Transport(nil)}})
	d := enginetest.NewDemo(t, &enginetest.DemoOptions{
		Config: engine.Config{Toolset: tools, Observer: obs.Observer()},
		Tenant: func(tn *engine.Tenant) { tn.Limits.UserPerMinute, tn.Limits.UserBurst = 1, 1 },
	})
	backend, srv := d.Backend, d.Server
	post := func(key, body string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/engine", strings.NewReader(body))
		req.Header.Set("X-Engine-Key", key)
		req.Header.Set("X-Token", userToken)
		req.Header.Set("X-Request-ID", "prod-otel-1")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	post(demobank.EngineKey, `{"transcript":"what is my balance"}`)
	post("pk_unknown", `{}`)
	post(demobank.EngineKey, `{"transcript":"what is my balance"}`) // past the user's burst of 1

	ended := spans.Ended()
	var turn, tool sdktrace.ReadOnlySpan
	for _, s := range ended {
		switch s.Name() {
		case "invoke_agent pk_demo":
			turn = s
		case "execute_tool get_balance":
			tool = s
		}
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.Emit(), userToken) {
				t.Errorf("span %s carries the user token in %s", s.Name(), kv.Key)
			}
		}
	}
	if turn == nil || tool == nil {
		t.Fatalf("spans %v", ended)
	}
	if tool.Parent().SpanID() != turn.SpanContext().SpanID() {
		t.Error("the tool span is not a child of the turn span")
	}
	attrs := map[string]string{}
	for _, kv := range turn.Attributes() {
		attrs[string(kv.Key)] = kv.Value.Emit()
	}
	if attrs["engine.request_id"] != "prod-otel-1" || attrs["engine.tenant"] != "pk_demo" || attrs["engine.environment"] != "production" || attrs["engine.tool_calls"] != "1" {
		t.Errorf("turn attributes %v", attrs)
	}
	// The backend joined the trace.
	got := backend.Received()
	tp0 := got[len(got)-1].Get("Traceparent")
	if !strings.Contains(tp0, tool.SpanContext().TraceID().String()) || !strings.Contains(tp0, tool.SpanContext().SpanID().String()) {
		t.Errorf("traceparent %q, want trace %s span %s", tp0, tool.SpanContext().TraceID(), tool.SpanContext().SpanID())
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					counts[m.Name] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					counts[m.Name] += int64(p.Count)
				}
			}
		}
	}
	for name, want := range map[string]int64{"engine.turns": 1, "engine.turn.duration": 1, "engine.turn.first_speak": 1,
		"engine.tool.duration": 1, "engine.errors": 2, "engine.rate_limits": 1} {
		if counts[name] != want {
			t.Errorf("%s = %d, want %d (all: %v)", name, counts[name], want, counts)
		}
	}
}

func TestNewNeedsProviders(t *testing.T) {
	if _, err := otel.New(nil); err == nil {
		t.Fatal("New(nil) succeeded")
	}
}
