package usage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/usage"
)

// finish is a finish event with the usage a server reported and the model it named.
func finish(r engine.FinishReason, model string, u engine.Usage) engine.ModelEvent {
	return engine.ModelEvent{Kind: engine.EventFinish, Finish: r, Model: model, Usage: u}
}

// postTurn runs a turn through the engine's HTTP handler, reading its stream to the end.
func postTurn(t *testing.T, base, say string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/engine", strings.NewReader(`{"transcript":"`+say+`"}`))
	req.Header.Set("X-Engine-Key", demobank.EngineKey)
	req.Header.Set("X-Token", enginetest.DemoUserToken)
	req.Header.Set("X-Request-ID", "prod-usage-1")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("event: done")) {
		t.Fatalf("the turn: %s\n%s", resp.Status, body)
	}
}

// getReport reads the usage of tenant through the handler.
func getReport(t *testing.T, h http.Handler, query string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/usage?"+query, nil))
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("%d %q: %v", rec.Code, rec.Body, err)
	}
	return rec.Code, body
}

// A turn with two calls of the model and a tool call, run through the engine's handler, is
// metered as its model reported it: the ledger's report, the handler's JSON and the Prometheus
// counters hold the sums of both calls.
func TestTurnIsMetered(t *testing.T) {
	first := engine.Usage{InputTokens: 1200, CachedTokens: 1024, OutputTokens: 20, ReasoningTokens: 8, Reported: true}
	second := engine.Usage{InputTokens: 1300, CachedTokens: 1152, OutputTokens: 30, Reported: true}
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{
		{enginetest.ToolCall("call_1", "get_balance", `{}`), finish(engine.FinishToolCalls, "gpt-test-2026", first)},
		append(enginetest.Text("Your balance ", "is $1,234.56.")[:2], finish(engine.FinishStop, "gpt-test-2026", second)),
	}}
	ledger := &usage.Memory{}
	reg := prometheus.NewRegistry()
	meter, err := usage.New(&usage.Options{Sink: ledger, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []engine.ModelCallEvent
	next := &engine.Observer{ModelCall: func(_ context.Context, e engine.ModelCallEvent) {
		mu.Lock()
		seen = append(seen, e)
		mu.Unlock()
	}}
	d := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: engine.Config{Model: model, Observer: meter.Observer(next)}})
	postTurn(t, d.URL, "What's my balance?")
	if err := meter.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(seen) != 2 {
		t.Errorf("the next observer saw %d calls of the model, want 2", len(seen))
	}
	mu.Unlock()

	code, rep := getReport(t, usage.Handler(ledger), "tenant="+demobank.EngineKey)
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, rep)
	}
	totals := rep["totals"].(map[string]any)
	want := map[string]float64{"input_tokens": 2500, "cached_input_tokens": 2176, "output_tokens": 50, "reasoning_tokens": 8,
		"estimated_tokens": 0, "model_calls": 2, "turns": 1, "tool_calls": 1, "tool_errors": 0, "warmup_calls": 0}
	for k, v := range want {
		if totals[k] != v {
			t.Errorf("totals.%s = %v, want %v", k, totals[k], v)
		}
	}
	models := rep["models"].([]any)
	if len(models) != 1 || models[0].(map[string]any)["model"] != "gpt-test-2026" || models[0].(map[string]any)["input_tokens"] != 2500.0 {
		t.Errorf("models: %v", models)
	}
	days := rep["days"].([]any)
	if len(days) != 1 || days[0].(map[string]any)["day"] != time.Now().UTC().Format(time.DateOnly) {
		t.Errorf("days: %v", days)
	}

	for i, c := range []struct {
		got, want float64
	}{
		{counter(t, reg, "engine_usage_tokens_total", map[string]string{"tenant": demobank.EngineKey, "model": "gpt-test-2026", "type": "input", "estimated": "false"}), 2500},
		{counter(t, reg, "engine_usage_tokens_total", map[string]string{"tenant": demobank.EngineKey, "model": "gpt-test-2026", "type": "cached_input", "estimated": "false"}), 2176},
		{counter(t, reg, "engine_usage_tokens_total", map[string]string{"tenant": demobank.EngineKey, "model": "gpt-test-2026", "type": "output", "estimated": "false"}), 50},
		{counter(t, reg, "engine_usage_tokens_total", map[string]string{"tenant": demobank.EngineKey, "model": "gpt-test-2026", "type": "reasoning", "estimated": "false"}), 8},
		{counter(t, reg, "engine_usage_model_calls_total", map[string]string{"tenant": demobank.EngineKey, "outcome": "ok"}), 2},
		{counter(t, reg, "engine_usage_tool_calls_total", map[string]string{"tenant": demobank.EngineKey, "outcome": "ok"}), 1},
	} {
		if c.got != c.want {
			t.Errorf("counter %d: %v, want %v", i, c.got, c.want)
		}
	}
}

// counter returns the value of the counter of name with labels in reg.
func counter(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue metrics
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0 // a counter never counted is not gathered
}

// A call whose server reported no usage counts the engine's estimate as estimated tokens,
// never as the provider's; a warm-up counts as a call of the model, marked, and no turn.
func TestEstimatesAndWarmups(t *testing.T) {
	ledger := &usage.Memory{}
	meter, err := usage.New(&usage.Options{Sink: ledger})
	if err != nil {
		t.Fatal(err)
	}
	obs := meter.Observer(nil)
	ctx := context.Background()
	obs.ModelCall(ctx, engine.ModelCallEvent{Tenant: "pk_a", Step: 1, Outcome: "cancelled", Estimated: engine.Usage{InputTokens: 300, OutputTokens: 12}})
	obs.ModelCall(ctx, engine.ModelCallEvent{Tenant: "pk_a", Warmup: true, Outcome: "ok", Model: "m", Usage: engine.Usage{InputTokens: 700, Reported: true}})
	obs.ModelCall(ctx, engine.ModelCallEvent{Tenant: "pk_a", Step: 2, Outcome: "ok", Model: "m", Retries: 2, Usage: engine.Usage{InputTokens: 10, OutputTokens: 5, Reported: true}})
	obs.ToolEnd(ctx, engine.ToolEvent{Tenant: "pk_a", Tool: "get_balance", Outcome: "timeout"})
	obs.Speech(ctx, engine.SpeechEvent{Tenant: "pk_a", Kind: "transcription", AudioSeconds: 2.5})
	obs.Speech(ctx, engine.SpeechEvent{Tenant: "pk_a", Kind: "synthesis", AudioSeconds: 1.25, Characters: 40})
	obs.ModelCall(ctx, engine.ModelCallEvent{Tenant: "pk_b", Step: 1, Outcome: "ok", Usage: engine.Usage{InputTokens: 99, Reported: true}})
	if err := meter.Close(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := ledger.Usage(ctx, "pk_a", time.Now(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := usage.Totals{InputTokens: 710, OutputTokens: 5, EstimatedTokens: 312, ModelCalls: 3, WarmupCalls: 1, Retries: 2, Turns: 1,
		ToolCalls: 1, ToolErrors: 1, SpeechInSeconds: 2.5, SpeechOutSeconds: 1.25, SpeechOutCharacters: 40}
	if rep.Totals != want {
		t.Errorf("totals\n %+v, want\n %+v", rep.Totals, want)
	}
	if len(rep.Models) != 2 || rep.Models[0].Model != "" || rep.Models[0].EstimatedTokens != 312 || rep.Models[1].Model != "m" || rep.Models[1].InputTokens != 710 {
		t.Errorf("models %+v", rep.Models)
	}
}

// failingSink fails its first fails writes, then keeps what it is given.
type failingSink struct {
	mu      sync.Mutex
	fails   int
	writes  int
	records []usage.Record
	hold    chan struct{} // when set, a write waits for it
}

func (s *failingSink) WriteUsage(ctx context.Context, records []usage.Record) error {
	s.mu.Lock()
	hold := s.hold
	s.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	if s.fails != 0 {
		s.fails--
		return errors.New("ledger down")
	}
	s.records = append(s.records, records...)
	return nil
}

func (s *failingSink) got() []usage.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]usage.Record(nil), s.records...)
}

func toolRecord(i int) usage.Record {
	return usage.Record{Kind: usage.KindTool, Tenant: "pk_a", Tool: "t", RequestID: "prod-" + string(rune('a'+i%26)), DurationMS: int64(i), Outcome: "ok"}
}

// A sink that fails twice, then succeeds, receives every record once, in order; the failures
// are counted.
func TestSinkFailsTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &failingSink{fails: 2}
		reg := prometheus.NewRegistry()
		meter, err := usage.New(&usage.Options{Sink: sink, Registerer: reg, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			meter.Add(toolRecord(i))
		}
		if err := meter.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		got := sink.got()
		if len(got) != 5 {
			t.Fatalf("the sink received %d records, want 5: %+v", len(got), got)
		}
		for i, r := range got {
			if r.DurationMS != int64(i) {
				t.Errorf("record %d is %+v", i, r)
			}
		}
		if sink.writes < 3 {
			t.Errorf("%d writes, want the failures and the success", sink.writes)
		}
		if n := (counter(t, reg, "engine_usage_sink_failures_total", nil)); n != 2 {
			t.Errorf("%v failures counted, want 2", n)
		}
		if err := meter.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := sink.got(); len(got) != 5 {
			t.Errorf("after Close, the sink holds %d records, want 5", len(got))
		}
	})
}

// Close writes what is buffered; when the sink does not take it before ctx is done, Close
// says how many records were lost and why, and the meter's goroutine ends.
func TestClose(t *testing.T) {
	t.Run("flushes", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &failingSink{hold: make(chan struct{})}
			meter, _ := usage.New(&usage.Options{Sink: sink, MaxBatch: 7})
			for i := range 100 {
				meter.Add(toolRecord(i))
			}
			go func() {
				time.Sleep(time.Second)
				sink.mu.Lock()
				close(sink.hold)
				sink.hold = nil
				sink.mu.Unlock()
			}()
			if err := meter.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got := sink.got(); len(got) != 100 {
				t.Errorf("Close wrote %d records, want 100", len(got))
			}
		})
	})
	t.Run("reports what it could not write", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &failingSink{fails: -1}
			reg := prometheus.NewRegistry()
			meter, _ := usage.New(&usage.Options{Sink: sink, Registerer: reg, Logger: slog.New(slog.DiscardHandler)})
			for i := range 10 {
				meter.Add(toolRecord(i))
			}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			err := meter.Close(ctx)
			if !errors.Is(err, usage.ErrUnwritten) || !strings.Contains(err.Error(), "10") || !strings.Contains(err.Error(), "ledger down") {
				t.Fatalf("Close: %v, want the 10 records unwritten and the sink's error", err)
			}
			meter.Add(toolRecord(11))
			if n := (counter(t, reg, "engine_usage_dropped_records_total", nil)); n != 1 {
				t.Errorf("a record after Close: %v dropped, want 1", n)
			}
		})
	})
}

// A sink that does not answer fills the buffer: then new records are dropped, counted and
// logged once, and those buffered are written when the sink answers again.
func TestBufferFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &failingSink{hold: make(chan struct{})}
		reg := prometheus.NewRegistry()
		var logs bytes.Buffer
		meter, _ := usage.New(&usage.Options{Sink: sink, Registerer: reg, MaxBuffered: 10, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		meter.Add(toolRecord(0))
		synctest.Wait() // the writer holds it, waiting for the sink
		for i := range 15 {
			meter.Add(toolRecord(i + 1))
		}
		if n := (counter(t, reg, "engine_usage_dropped_records_total", nil)); n != 5 {
			t.Errorf("%v records dropped, want 5", n)
		}
		if n := strings.Count(logs.String(), "records dropped"); n != 1 {
			t.Errorf("logged %d times:\n%s", n, logs.String())
		}
		sink.mu.Lock()
		close(sink.hold)
		sink.hold = nil
		sink.mu.Unlock()
		if err := meter.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := sink.got(); len(got) != 11 {
			t.Errorf("the sink received %d records, want 11", len(got))
		}
	})
}

// benchModelCall is a call of the model as a turn reports it.
var benchModelCall = engine.ModelCallEvent{RequestID: "prod-bench", Tenant: "pk_demo", Environment: "production", TurnID: "t_1", SessionID: "s_1",
	User: "u_1", Step: 1, Model: "gpt-test", Outcome: "ok", Usage: engine.Usage{InputTokens: 1200, OutputTokens: 30, Reported: true}}

// BenchmarkModelCallHook times the meter's hook, what a turn waits for on each call of the
// model: appending a record, while the meter's writer runs beside it. The writer is let catch
// up every 1024 calls, outside the timing, as a turn's few calls never outrun it.
func BenchmarkModelCallHook(b *testing.B) {
	meter, err := usage.New(&usage.Options{Sink: &usage.Memory{}, Registerer: prometheus.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	defer meter.Close(context.Background())
	obs := meter.Observer(nil)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		obs.ModelCall(ctx, benchModelCall)
		if i++; i%1024 == 0 {
			b.StopTimer()
			meter.Flush(ctx)
			b.StartTimer()
		}
	}
}

// BenchmarkMeterThroughput times a record through the whole meter: the hook, the counters and
// the memory ledger.
func BenchmarkMeterThroughput(b *testing.B) {
	meter, err := usage.New(&usage.Options{Sink: &usage.Memory{}, Registerer: prometheus.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	defer meter.Close(context.Background())
	obs := meter.Observer(nil)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		obs.ModelCall(ctx, benchModelCall)
		if i++; i%1024 == 0 {
			meter.Flush(ctx)
		}
	}
	meter.Flush(ctx)
}

// Speech is counted per provider beside the tenant's totals, as models are: the seconds each
// recogniser heard and the characters each voice spoke.
func TestSpeechByProvider(t *testing.T) {
	ledger := &usage.Memory{}
	m, err := usage.New(&usage.Options{Sink: ledger})
	if err != nil {
		t.Fatal(err)
	}
	obs := m.Observer(nil)
	ctx := context.Background()
	obs.Speech(ctx, engine.SpeechEvent{Kind: "transcription", Tenant: "pk_a", Provider: "deepgram", AudioSeconds: 2.5})
	obs.Speech(ctx, engine.SpeechEvent{Kind: "transcription", Tenant: "pk_a", Provider: "offline", AudioSeconds: 1})
	obs.Speech(ctx, engine.SpeechEvent{Kind: "synthesis", Tenant: "pk_a", Provider: "elevenlabs", AudioSeconds: 3, Characters: 42})
	obs.Speech(ctx, engine.SpeechEvent{Kind: "synthesis", Tenant: "pk_a", AudioSeconds: 1, Characters: 7})
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	rep, err := ledger.Usage(ctx, "pk_a", now, now)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]usage.Totals{}
	for _, mt := range rep.Models {
		by[mt.Model] = mt.Totals
	}
	if len(by) != 3 || by["deepgram"].SpeechInSeconds != 2.5 || by["offline"].SpeechInSeconds != 1 ||
		by["elevenlabs"].SpeechOutCharacters != 42 || rep.Totals.SpeechOutCharacters != 49 || rep.Totals.SpeechInSeconds != 3.5 {
		t.Errorf("by provider %+v, totals %+v", by, rep.Totals)
	}
}
