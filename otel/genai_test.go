package otel_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/openai"
	"github.com/convengine/engine/otel"
	"github.com/convengine/engine/pii"
)

// observed is an engine observed by an in-memory span recorder and metric reader.
type observed struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	demo   *enginetest.Demo
}

func newObserved(t *testing.T, opts otel.Options, cfg engine.Config) *observed {
	t.Helper()
	o := &observed{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	opts.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(o.spans))
	opts.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(o.reader))
	obs, err := otel.New(&opts)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Observer = obs.Observer()
	o.demo = enginetest.NewDemo(t, &enginetest.DemoOptions{Config: cfg})
	t.Cleanup(func() { keepSpans(o.spans) })
	return o
}

// keepSpans keeps each ended span, with its attributes and events, as an artifact of the test
// command (enginetest.ArtifactsEnv).
func keepSpans(rec *tracetest.SpanRecorder) {
	for _, s := range rec.Ended() {
		b, _ := json.Marshal(map[string]any{"name": s.Name(), "attributes": s.Attributes(), "events": s.Events(), "status": s.Status()})
		enginetest.KeepArtifact(enginetest.ArtifactTrace, b)
	}
}

func (o *observed) post(t *testing.T, path, body string, header http.Header) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, o.demo.URL+path, strings.NewReader(body))
	req.Header.Set("X-Engine-Key", demobank.EngineKey)
	req.Header.Set("X-Token", userToken)
	req.Header.Set("X-Request-ID", "prod-genai-1")
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
	return b
}

func attrsOf(s sdktrace.ReadOnlySpan) map[string]attribute.Value {
	m := map[string]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

// TestGenAITraceOfAToolTurn: a turn that calls a tool makes the trace a GenAI backend reads:
// invoke_agent {tenant} with a chat span for each of the two calls of the model and an
// execute_tool span, under the semantic conventions' names; the token counts are the ones the
// model reported, and a call that reported none carries the engine's estimate under engine.*
// names only. The gen_ai metrics count the reported tokens and both calls. No content, token or
// session token becomes an attribute.
func TestGenAITraceOfAToolTurn(t *testing.T) {
	reported := engine.Usage{InputTokens: 120, OutputTokens: 9, CachedTokens: 64, ReasoningTokens: 3, Reported: true}
	model := &enginetest.ScriptedModel{FirstDelay: 20 * time.Millisecond, Steps: [][]engine.ModelEvent{
		{enginetest.ToolCall("call_1", "get_balance", `{"account":"checking"}`),
			{Kind: engine.EventFinish, Finish: engine.FinishToolCalls, Usage: reported, Model: "gpt-test-2025-01-01", Retries: 1}},
		enginetest.Text("Your balance is ", "1 234 euros."), // reports no usage
	}}
	tools := &enginetest.FuncToolset{ToolList: []engine.Tool{{Name: "get_balance", Description: "The balance."}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"get_balance": func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error) {
				return engine.ToolResult{Content: json.RawMessage(`{"balance":1234}`)}, nil
			},
		}}
	o := newObserved(t, otel.Options{Provider: "openai", Model: "gpt-test"}, engine.Config{Model: model, Toolset: tools})

	var session struct {
		ID    string `json:"session_id"`
		Token string `json:"session_token"`
	}
	if err := json.Unmarshal(o.post(t, "/api/v1/create-session", `{}`, nil), &session); err != nil || session.Token == "" {
		t.Fatalf("create-session: %v %+v", err, session)
	}
	o.post(t, "/engine", `{"transcript":"what is my balance"}`, http.Header{"Authorization": {"Bearer " + session.Token}})

	var turn sdktrace.ReadOnlySpan
	var chats, tools2 []sdktrace.ReadOnlySpan
	for _, s := range o.spans.Ended() {
		switch s.Name() {
		case "invoke_agent " + demobank.EngineKey:
			turn = s
		case "chat gpt-test":
			chats = append(chats, s)
		case "execute_tool get_balance":
			tools2 = append(tools2, s)
		}
		for _, kv := range s.Attributes() {
			v := kv.Value.Emit()
			for _, secret := range []string{userToken, session.Token, "balance is", "what is my", "checking", "1234"} {
				if strings.Contains(v, secret) {
					t.Errorf("span %s carries %q in %s", s.Name(), secret, kv.Key)
				}
			}
		}
	}
	if turn == nil || len(chats) != 2 || len(tools2) != 1 {
		var names []string
		for _, s := range o.spans.Ended() {
			names = append(names, s.Name())
		}
		t.Fatalf("spans %q, want invoke_agent %s, 2 × chat gpt-test, execute_tool get_balance", names, demobank.EngineKey)
	}
	for _, s := range append(chats, tools2...) {
		if s.Parent().SpanID() != turn.SpanContext().SpanID() || s.SpanContext().TraceID() != turn.SpanContext().TraceID() {
			t.Errorf("%s is not a child of the turn's span", s.Name())
		}
		if s.StartTime().Before(turn.StartTime()) || s.EndTime().After(turn.EndTime()) {
			t.Errorf("%s (%v–%v) is not within the turn (%v–%v)", s.Name(), s.StartTime(), s.EndTime(), turn.StartTime(), turn.EndTime())
		}
	}
	if turn.Parent().IsValid() {
		t.Error("the turn's span has a parent")
	}

	want := func(s sdktrace.ReadOnlySpan, kv map[string]any) {
		t.Helper()
		got := attrsOf(s)
		for k, v := range kv {
			switch v := v.(type) {
			case nil:
				if _, ok := got[k]; ok {
					t.Errorf("%s has %s = %s", s.Name(), k, got[k].Emit())
				}
			case string:
				if g, ok := got[k]; !ok || g.Emit() != v {
					t.Errorf("%s: %s = %q, want %q", s.Name(), k, g.Emit(), v)
				}
			}
		}
	}
	want(turn, map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": demobank.EngineKey,
		"gen_ai.conversation.id": session.ID, "gen_ai.provider.name": "openai", "engine.request_id": "prod-genai-1",
		"engine.tool_calls": "1", "error.type": nil})
	// The chat spans in the order of the calls.
	if chats[1].StartTime().Before(chats[0].StartTime()) {
		chats[0], chats[1] = chats[1], chats[0]
	}
	want(chats[0], map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-test",
		"gen_ai.usage.input_tokens": "120", "gen_ai.usage.output_tokens": "9", "gen_ai.usage.cache_read.input_tokens": "64",
		"gen_ai.usage.reasoning.output_tokens": "3", "gen_ai.response.finish_reasons": `["tool_calls"]`,
		"gen_ai.conversation.id": session.ID, "engine.step": "1", "gen_ai.response.model": "gpt-test-2025-01-01", "engine.retries": "1",
		"engine.usage.estimated_input_tokens": nil, "error.type": nil, "engine.warmup": nil})
	want(chats[1], map[string]any{"gen_ai.operation.name": "chat", "gen_ai.response.finish_reasons": `["stop"]`, "engine.step": "2",
		"gen_ai.conversation.id": session.ID, "engine.retries": "0",
		"gen_ai.usage.input_tokens": nil, "gen_ai.usage.output_tokens": nil, "gen_ai.response.model": nil})
	c2 := attrsOf(chats[1])
	if c2["engine.usage.estimated_input_tokens"].AsInt64() <= 0 || c2["engine.usage.estimated_output_tokens"].AsInt64() <= 0 {
		t.Errorf("the call that reported no usage has no estimate: %v", c2)
	}
	for _, c := range chats {
		ttft := attrsOf(c)["gen_ai.response.time_to_first_chunk"].AsFloat64()
		if d := c.EndTime().Sub(c.StartTime()); ttft < 0.015 || ttft > d.Seconds() || d < 20*time.Millisecond {
			t.Errorf("%s lasts %v, first chunk after %vs; the model waited 20ms before its first event", c.Name(), d, ttft)
		}
	}
	if chats[0].EndTime().After(tools2[0].StartTime()) || tools2[0].EndTime().After(chats[1].StartTime()) {
		t.Error("the spans are not in the order chat, execute_tool, chat")
	}
	want(tools2[0], map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_balance",
		"gen_ai.tool.call.id": "call_1", "gen_ai.tool.type": "function", "engine.outcome": "ok", "error.type": nil})

	// The metrics: reported tokens only, both calls timed.
	var rm metricdata.ResourceMetrics
	if err := o.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	tokens := map[string]int64{}
	calls := uint64(0)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch m.Name {
			case "gen_ai.client.token.usage":
				if m.Unit != "{token}" {
					t.Errorf("%s unit %q", m.Name, m.Unit)
				}
				for _, p := range m.Data.(metricdata.Histogram[int64]).DataPoints {
					typ, _ := p.Attributes.Value("gen_ai.token.type")
					model, _ := p.Attributes.Value("gen_ai.request.model")
					if model.AsString() != "gpt-test" {
						t.Errorf("token usage of model %q", model.Emit())
					}
					tokens[typ.AsString()] += p.Sum
				}
			case "gen_ai.client.operation.duration":
				if m.Unit != "s" {
					t.Errorf("%s unit %q", m.Name, m.Unit)
				}
				for _, p := range m.Data.(metricdata.Histogram[float64]).DataPoints {
					calls += p.Count
				}
			}
		}
	}
	if tokens["input"] != 120 || tokens["output"] != 9 || len(tokens) != 2 {
		t.Errorf("gen_ai.client.token.usage %v, want input 120, output 9 (the reported call only)", tokens)
	}
	if calls != 2 {
		t.Errorf("gen_ai.client.operation.duration counted %d calls, want 2", calls)
	}
}

// TestGenAINoProviderNoModel: without Options.Provider and Model (the offline intent model, which
// no provider serves), the chat spans carry neither attribute, rather than a wrong one.
//
// Without a session, the conversation is the one the turn's answer names (meta.conversationId).
func TestGenAINoProviderNoModel(t *testing.T) {
	o := newObserved(t, otel.Options{}, engine.Config{}) // the demo's intent model
	body := o.post(t, "/engine", `{"transcript":"what is my balance"}`, nil)
	m := regexp.MustCompile(`"conversationId":"([^"]+)"`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("no conversationId in %s", body)
	}
	n := 0
	for _, s := range o.spans.Ended() {
		a := attrsOf(s)
		if got := a["gen_ai.conversation.id"].AsString(); a["gen_ai.operation.name"].AsString() != "execute_tool" && got != string(m[1]) {
			t.Errorf("%s: gen_ai.conversation.id %q, want the answer's %q", s.Name(), got, m[1])
		}
		if a["gen_ai.operation.name"].AsString() != "chat" {
			continue
		}
		n++
		if s.Name() != "chat" {
			t.Errorf("span %q, want chat", s.Name())
		}
		for _, k := range []string{"gen_ai.provider.name", "gen_ai.request.model", "gen_ai.usage.input_tokens"} {
			if _, ok := a[k]; ok {
				t.Errorf("chat span has %s = %s", k, a[k].Emit())
			}
		}
	}
	if n == 0 {
		t.Fatal("no chat span")
	}
}

// streamingSynthesizer hands its audio over at once and synthesizes it as it is read: Chunks
// pieces, each after Every, as a streaming synthesizer does. It notes when each synthesis
// started and when its audio ended, the time the work took.
type streamingSynthesizer struct {
	Chunks int
	Every  time.Duration
	mu     sync.Mutex
	took   []time.Duration
}

func (s *streamingSynthesizer) Synthesize(ctx context.Context, text, voice string) (*engine.Audio, error) {
	r := &streamedAudio{s: s, start: time.Now(), left: s.Chunks}
	return &engine.Audio{SampleRate: 16000, PCM: r}, nil
}

type streamedAudio struct {
	s     *streamingSynthesizer
	start time.Time
	left  int
}

func (r *streamedAudio) Read(p []byte) (int, error) {
	if r.left == 0 {
		r.s.mu.Lock()
		r.s.took = append(r.s.took, time.Since(r.start))
		r.s.mu.Unlock()
		r.left = -1
		return 0, io.EOF
	}
	if r.left < 0 {
		return 0, io.EOF
	}
	time.Sleep(r.s.Every)
	r.left--
	n := min(len(p), 3200) // 100 ms of 16 kHz audio
	clear(p[:n])
	return n, nil
}

func (r *streamedAudio) Close() error { return nil }

// timedTranscriber hears "hello" after Delay and notes how long each transcription took.
type timedTranscriber struct {
	Delay time.Duration
	mu    sync.Mutex
	took  []time.Duration
}

func (x *timedTranscriber) Transcribe(ctx context.Context, pcm []int16, rate int, locale string) (string, error) {
	start := time.Now()
	time.Sleep(x.Delay)
	x.mu.Lock()
	x.took = append(x.took, time.Since(start))
	x.mu.Unlock()
	return "what is my balance", nil
}

// TestSpeechSpansLastTheWork: the synthesis span of POST /engine/tts lasts what the synthesis
// did, its audio streamed over about 300 ms after Synthesize returned at once, and the
// transcription span of a turn sent as audio what the transcriber took: each within 10% of the
// work the test measured around it, not the instant it took to start it.
func TestSpeechSpansLastTheWork(t *testing.T) {
	synth := &streamingSynthesizer{Chunks: 6, Every: 50 * time.Millisecond}
	hear := &timedTranscriber{Delay: 300 * time.Millisecond}
	o := newObserved(t, otel.Options{}, engine.Config{Synthesizer: synth, Transcriber: hear})
	if audio := o.post(t, "/engine/tts", `{"text":"Hello there."}`, nil); len(audio) < 6*3200 {
		t.Fatalf("%d bytes of audio", len(audio))
	}
	wav := audio.EncodeWAV(testkit.Voiced(16000), 16000)
	o.post(t, "/engine", `{"audio_base64":"`+base64.StdEncoding.EncodeToString(wav)+`"}`, nil)

	spans := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range o.spans.Ended() {
		spans[s.Name()] = s
	}
	synth.mu.Lock()
	hear.mu.Lock()
	defer synth.mu.Unlock()
	defer hear.mu.Unlock()
	for _, tc := range []struct {
		name string
		took []time.Duration
	}{{"synthesis", synth.took}, {"transcription", hear.took}} {
		span := spans[tc.name]
		if span == nil || len(tc.took) != 1 {
			t.Errorf("%s: span %v, %d pieces of work", tc.name, span, len(tc.took))
			continue
		}
		got, work := span.EndTime().Sub(span.StartTime()), tc.took[0]
		if work < 250*time.Millisecond || got < work*9/10 || got > work*11/10 {
			t.Errorf("the %s span lasts %v, the %s took %v", tc.name, got, tc.name, work)
		}
		a := attrsOf(span)
		if span.SpanKind() != trace.SpanKindClient || a["engine.tenant"].AsString() != demobank.EngineKey ||
			a["engine.request_id"].AsString() != "prod-genai-1" || a["engine.audio_seconds"].AsFloat64() <= 0 {
			t.Errorf("span %s kind %v attributes %v", span.Name(), span.SpanKind(), span.Attributes())
		}
	}
	// The audio turn's span starts with the transcription of its audio, its first child.
	heard, turn := spans["transcription"], spans["invoke_agent "+demobank.EngineKey]
	if heard == nil || turn == nil || heard.Parent().SpanID() != turn.SpanContext().SpanID() ||
		heard.Parent().TraceID() != turn.SpanContext().TraceID() || !turn.StartTime().Equal(heard.StartTime()) {
		t.Errorf("the transcription is not the first child of the turn's span: %v, %v", heard, turn)
	}
}

// TestGenAIWarmUpIsItsOwnTrace: the prompt-cache warm-up that create-session starts is a chat
// span of its own trace, marked engine.warmup, with the usage and the model its server
// reported; its tokens count in gen_ai.client.token.usage, for they are paid for.
func TestGenAIWarmUpIsItsOwnTrace(t *testing.T) {
	replay := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), enginetest.DemoRoute)
	model, err := openai.NewModel(&openai.Options{BaseURL: replay.URL, APIKey: "sk-otel-test"})
	if err != nil {
		t.Fatal(err)
	}
	o := newObserved(t, otel.Options{Provider: "openai", Model: "gpt-4o-mini"}, engine.Config{Model: model})
	o.post(t, "/api/v1/create-session", `{}`, nil)

	var warm sdktrace.ReadOnlySpan
	for deadline := time.Now().Add(10 * time.Second); warm == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, s := range o.spans.Ended() {
			if attrsOf(s)["engine.warmup"].AsBool() {
				warm = s
			}
		}
	}
	if warm == nil {
		t.Fatalf("no warm-up span in %v", o.spans.Ended())
	}
	if warm.Name() != "chat gpt-4o-mini" || warm.Parent().IsValid() || warm.SpanKind() != trace.SpanKindClient {
		t.Errorf("the warm-up span %q, kind %v, parent %v: want a root chat span", warm.Name(), warm.SpanKind(), warm.Parent())
	}
	a := attrsOf(warm)
	for k, v := range map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
		"gen_ai.request.model": "gpt-4o-mini", "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
		"gen_ai.usage.input_tokens": "1203", "gen_ai.usage.output_tokens": "1", "gen_ai.response.finish_reasons": `["length"]`,
		"engine.step": "0", "engine.retries": "0", "engine.tenant": demobank.EngineKey, "engine.outcome": "ok"} {
		if a[k].Emit() != v {
			t.Errorf("%s = %q, want %q", k, a[k].Emit(), v)
		}
	}
	if _, ok := a["gen_ai.conversation.id"]; ok {
		t.Errorf("the warm-up belongs to no conversation, yet has %s", a["gen_ai.conversation.id"].Emit())
	}

	var rm metricdata.ResourceMetrics
	if err := o.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var input int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "gen_ai.client.token.usage" {
				for _, p := range m.Data.(metricdata.Histogram[int64]).DataPoints {
					if typ, _ := p.Attributes.Value("gen_ai.token.type"); typ.AsString() == "input" {
						input += p.Sum
					}
				}
			}
		}
	}
	if input != 1203 {
		t.Errorf("gen_ai.client.token.usage input %d, want the warm-up's 1203", input)
	}
}

// TestPersonalDataOnTheTurnSpan: under a privacy policy, the turn's span counts what was
// hidden from the model and masked for the user, by kind, and holds none of the values.
func TestPersonalDataOnTheTurnSpan(t *testing.T) {
	privacy, err := pii.NewPrivacy(&pii.PrivacyOptions{Default: pii.Banking()})
	if err != nil {
		t.Fatal(err)
	}
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Card [CARD_1] and [IBAN_1] are noted.")}}
	o := newObserved(t, otel.Options{}, engine.Config{Model: model, Privacy: privacy})
	o.post(t, "/engine", `{"transcript":"my card is 4111 1111 1111 1111 and my IBAN GB82 WEST 1234 5698 7654 32"}`, nil)
	var turn sdktrace.ReadOnlySpan
	for _, s := range o.spans.Ended() {
		if s.Name() == "invoke_agent "+demobank.EngineKey {
			turn = s
		}
		for _, kv := range s.Attributes() {
			if v := strings.ReplaceAll(kv.Value.Emit(), " ", ""); strings.Contains(v, "4111111111111111") || strings.Contains(v, "GB82WEST") {
				t.Errorf("span %s carries a value in %s", s.Name(), kv.Key)
			}
		}
	}
	if turn == nil {
		t.Fatal("no turn span")
	}
	got := attrsOf(turn)
	// Each value is hidden from the model once, and masked twice for the user: in the speech
	// as it streams and in the done event's.
	for k, want := range map[string]int64{"engine.pii.card.model": 1, "engine.pii.iban.model": 1, "engine.pii.card.user": 2, "engine.pii.iban.user": 2} {
		if got[k].AsInt64() != want {
			t.Errorf("%s = %v, want %d (span: %v)", k, got[k].Emit(), want, got)
		}
	}
}
