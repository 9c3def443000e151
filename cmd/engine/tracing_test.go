package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/widgets"
)

// otlpReceiver is an OTLP/HTTP receiver of traces and metrics: it decodes each export with the
// protocol's own types and keeps the spans, the metrics and the resource's attributes.
type otlpReceiver struct {
	mu          sync.Mutex
	spans       []*tracepb.Span
	metrics     []*metricpb.Metric
	resource    map[string]string
	contentType string
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var (
		traces  coltracepb.ExportTraceServiceRequest
		metrics colmetricpb.ExportMetricsServiceRequest
		answer  proto.Message
	)
	switch {
	case req.Method == http.MethodPost && req.URL.Path == "/v1/traces" && proto.Unmarshal(body, &traces) == nil:
		answer = &coltracepb.ExportTraceServiceResponse{}
	case req.Method == http.MethodPost && req.URL.Path == "/v1/metrics" && proto.Unmarshal(body, &metrics) == nil:
		answer = &colmetricpb.ExportMetricsServiceResponse{}
	default:
		http.Error(w, "not an OTLP export", http.StatusBadRequest)
		return
	}
	for _, m := range []proto.Message{&traces, &metrics} {
		if b, err := protojson.Marshal(m); err == nil && len(b) > 2 {
			enginetest.KeepArtifact(enginetest.ArtifactTrace, b)
		}
	}
	r.mu.Lock()
	r.contentType = req.Header.Get("Content-Type")
	for _, rs := range traces.ResourceSpans {
		r.resource = attrMap(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
		}
	}
	for _, rm := range metrics.ResourceMetrics {
		r.resource = attrMap(rm.GetResource().GetAttributes())
		for _, sm := range rm.ScopeMetrics {
			r.metrics = append(r.metrics, sm.Metrics...)
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(answer)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[kv.Key] = anyValue(kv.GetValue())
	}
	return m
}

// anyValue writes a value as the SDK's attribute.Value.Emit does: an array as JSON.
func anyValue(v *commonpb.AnyValue) string {
	switch v := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return v.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(v.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(v.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(v.DoubleValue, 'g', -1, 64)
	case *commonpb.AnyValue_ArrayValue:
		var items []string
		for _, e := range v.ArrayValue.GetValues() {
			items = append(items, strconv.Quote(anyValue(e)))
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	return v.String()
}

// TestOTLPTraceExport: with OTEL_EXPORTER_OTLP_ENDPOINT set, the reference server exports each
// turn's trace over OTLP/HTTP with protobuf: invoke_agent pk_demo with its chat and
// execute_tool spans as children, under the GenAI semantic conventions' names, and a resource
// naming the service. The offline intent model reports no usage and has no provider: its chat
// span carries the engine's estimate and no gen_ai.provider.name or gen_ai.usage.*.
func TestOTLPTraceExport(t *testing.T) {
	recv := &otlpReceiver{}
	collector := httptest.NewServer(recv)
	defer collector.Close()
	// The exporter and the SDK read the process's environment; run reads getenv.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20") // ms: export at once rather than every 5 s
	base, _ := startServer(t, nil, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL})
	turn(t, base, "prod-otlp-1", `{"transcript":"what is my balance"}`)

	var spans []*tracepb.Span
	deadline := time.Now().Add(10 * time.Second)
	for {
		recv.mu.Lock()
		spans = append(spans[:0], recv.spans...)
		recv.mu.Unlock()
		if len(spans) >= 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	byName := map[string]*tracepb.Span{}
	var names []string
	var chats []*tracepb.Span
	for _, s := range spans {
		byName[s.Name] = s
		names = append(names, s.Name)
		if s.Name == "chat" {
			chats = append(chats, s)
		}
	}
	// The intent model calls the tool, then answers with its result: two calls.
	root, tool := byName["invoke_agent pk_demo"], byName["execute_tool get_balance"]
	if root == nil || len(chats) != 2 || tool == nil {
		t.Fatalf("exported spans %q, want invoke_agent pk_demo, 2 × chat and execute_tool get_balance", names)
	}
	if len(root.ParentSpanId) != 0 {
		t.Error("the turn's span has a parent")
	}
	chat := chats[0]
	if chats[1].StartTimeUnixNano < chat.StartTimeUnixNano {
		chat = chats[1]
	}
	for _, s := range append(chats, tool) {
		if string(s.ParentSpanId) != string(root.SpanId) || string(s.TraceId) != string(root.TraceId) {
			t.Errorf("%s is not a child of the turn's span", s.Name)
		}
	}
	check := func(s *tracepb.Span, want map[string]string, absent ...string) {
		t.Helper()
		got := attrMap(s.Attributes)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q (all: %v)", s.Name, k, got[k], v, got)
			}
		}
		for _, k := range absent {
			if _, ok := got[k]; ok {
				t.Errorf("%s has %s = %q", s.Name, k, got[k])
			}
		}
		for k, v := range got {
			if strings.Contains(v, "demo-user-token") || strings.Contains(v, "balance is") {
				t.Errorf("%s: %s carries content or the user token: %q", s.Name, k, v)
			}
		}
	}
	check(root, map[string]string{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "pk_demo",
		"engine.request_id": "prod-otlp-1"}, "error.type")
	check(chat, map[string]string{"gen_ai.operation.name": "chat", "engine.step": "1"},
		"gen_ai.provider.name", "gen_ai.request.model", "gen_ai.usage.input_tokens")
	if _, ok := attrMap(chat.Attributes)["engine.usage.estimated_input_tokens"]; !ok {
		t.Errorf("the chat span has no estimate: %v", attrMap(chat.Attributes))
	}
	check(tool, map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_balance",
		"gen_ai.tool.type": "function"})
	recv.mu.Lock()
	defer recv.mu.Unlock()
	if recv.resource["service.name"] != "engine" || recv.contentType != "application/x-protobuf" {
		t.Errorf("resource %v, content type %q", recv.resource, recv.contentType)
	}
}

// TestNoTracingWithoutOTLPVariables: without the variables there is no exporter, and no metrics
// without -metrics either.
func TestNoTracingWithoutOTLPVariables(t *testing.T) {
	tp, err := newTracing(t.Context(), func(string) string { return "" })
	if tp != nil || err != nil {
		t.Errorf("newTracing without OTEL_EXPORTER_OTLP_*: %v, %v", tp, err)
	}
	mx, err := newMetrics(t.Context(), false, func(string) string { return "" })
	if mx != nil || err != nil {
		t.Errorf("newMetrics without -metrics nor OTEL_EXPORTER_OTLP_*: %v, %v", mx, err)
	}
	mx, err = newMetrics(t.Context(), true, func(string) string { return "" })
	if mx == nil || mx.otlp || mx.handler == nil || err != nil {
		t.Errorf("newMetrics with -metrics only: %+v, %v", mx, err)
	}
}

// TestOTLPExportOfAModelTurn: with OpenAI's model (a replayed server whose first answer is a
// rate limit) and OTEL_EXPORTER_OTLP_ENDPOINT set, the reference server exports over OTLP/HTTP
// with protobuf the turn's trace with the GenAI names a backend reads — the model asked for and
// the one that answered, the tokens the server reported (cached ones too), the finish reasons,
// the retry, the tool's name and call id — the warm-up of create-session as a trace of its own,
// and, when it shuts down, the metrics gen_ai.client.token.usage and
// gen_ai.client.operation.duration: their export interval (60 s) never came, so they arrived
// because shutting down flushes them.
func TestOTLPExportOfAModelTurn(t *testing.T) {
	recv := &otlpReceiver{}
	collector := httptest.NewServer(recv)
	defer collector.Close()
	replay := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), func(r *enginetest.ReplayRequest) string {
		if r.Attempt == 0 && r.Step == 0 && r.MaxCompletionTokens != 1 {
			return "rate_limited" // the turn's first call is answered at its second attempt
		}
		return enginetest.DemoRoute(r)
	})
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL, "OPENAI_API_KEY": "sk-otlp-test", "OPENAI_BASE_URL": replay.URL}
	for k, v := range env {
		t.Setenv(k, v) // the exporters read the process's environment; run reads getenv
	}
	var spec widgets.Spec
	t.Run("serve", func(t *testing.T) { // the server shuts down when it ends
		base, _ := startServer(t, nil, env)
		req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/create-session", strings.NewReader(`{}`))
		req.Header.Set("X-Engine-Key", "pk_demo")
		req.Header.Set("X-Token", "demo-user-token")
		req.Header.Set("X-Request-ID", "prod-otlp-session")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for deadline := time.Now().Add(10 * time.Second); len(replay.Requests()) == 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond) // the warm-up runs in the background
		}
		_, spec = turn(t, base, "prod-otlp-2", `{"transcript":"what is my balance"}`)
	})

	recv.mu.Lock()
	defer recv.mu.Unlock()
	var root, warm, tool *tracepb.Span
	var chats []*tracepb.Span
	var names []string
	for _, s := range recv.spans {
		names = append(names, s.Name)
		a := attrMap(s.Attributes)
		switch {
		case s.Name == "invoke_agent pk_demo":
			root = s
		case s.Name == "execute_tool get_balance":
			tool = s
		case s.Name == "chat gpt-4o-mini" && a["engine.warmup"] == "true":
			warm = s
		case s.Name == "chat gpt-4o-mini":
			chats = append(chats, s)
		}
		for k, v := range a {
			if strings.Contains(v, "demo-user-token") || strings.Contains(v, "sk-otlp-test") || strings.Contains(v, "balance is") {
				t.Errorf("%s: %s carries a secret or content: %q", s.Name, k, v)
			}
		}
	}
	if root == nil || warm == nil || tool == nil || len(chats) != 2 {
		t.Fatalf("exported spans %q, want invoke_agent pk_demo, 2 × chat gpt-4o-mini and execute_tool get_balance, and a warm-up", names)
	}
	if chats[1].StartTimeUnixNano < chats[0].StartTimeUnixNano {
		chats[0], chats[1] = chats[1], chats[0]
	}
	for _, s := range append(chats, tool) {
		if string(s.ParentSpanId) != string(root.SpanId) || string(s.TraceId) != string(root.TraceId) {
			t.Errorf("%s is not a child of the turn's span", s.Name)
		}
	}
	if len(root.ParentSpanId) != 0 || len(warm.ParentSpanId) != 0 || string(warm.TraceId) == string(root.TraceId) {
		t.Error("the turn and the warm-up are not two traces of their own")
	}
	check := func(s *tracepb.Span, want map[string]string) {
		t.Helper()
		got := attrMap(s.Attributes)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q (all: %v)", s.Name, k, got[k], v, got)
			}
		}
	}
	// The trace as docs/usage.md shows it (go test -v -run TestOTLPExportOfAModelTurn).
	for _, s := range []*tracepb.Span{warm, root, chats[0], tool, chats[1]} {
		a := attrMap(s.Attributes)
		keys := slices.Sorted(maps.Keys(a))
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "\n    %s=%s", k, a[k])
		}
		t.Logf("%s %v (%s)%s", s.Name, time.Duration(s.EndTimeUnixNano-s.StartTimeUnixNano), s.Kind, b.String())
	}
	genai := map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini",
		"gen_ai.response.model": "gpt-4o-mini-2024-07-18"}
	check(root, map[string]string{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "pk_demo", "gen_ai.provider.name": "openai",
		"gen_ai.conversation.id": spec.Meta.ConversationID, "engine.request_id": "prod-otlp-2"})
	check(chats[0], merge(genai, map[string]string{"gen_ai.usage.input_tokens": "1262", "gen_ai.usage.output_tokens": "4",
		"gen_ai.usage.cache_read.input_tokens": "1152", "gen_ai.response.finish_reasons": `["tool_calls"]`, "engine.retries": "1",
		"gen_ai.conversation.id": spec.Meta.ConversationID}))
	check(chats[1], merge(genai, map[string]string{"gen_ai.usage.input_tokens": "1344", "gen_ai.usage.output_tokens": "41",
		"gen_ai.usage.cache_read.input_tokens": "1152", "engine.retries": "0",
		"gen_ai.response.finish_reasons": `["tool_calls"]`})) // the answer calls the UI's tools (show_stat, set_suggestions)
	check(tool, map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_balance",
		"gen_ai.tool.call.id": "call_KIZJSkW9jgm0ipJy0aIQ0ToM", "gen_ai.tool.type": "function"})
	check(warm, merge(genai, map[string]string{"gen_ai.usage.input_tokens": "1203", "gen_ai.usage.output_tokens": "1",
		"gen_ai.response.finish_reasons": `["length"]`, "engine.step": "0"}))

	// The metrics: the tokens of the warm-up and of both calls, each call timed.
	tokens := map[string]int64{}
	var calls uint64
	found := map[string]bool{}
	for _, m := range recv.metrics {
		found[m.Name] = true
		switch m.Name {
		case "gen_ai.client.token.usage":
			for _, p := range m.GetHistogram().GetDataPoints() {
				a := attrMap(p.Attributes)
				if a["gen_ai.provider.name"] != "openai" || a["gen_ai.request.model"] != "gpt-4o-mini" {
					t.Errorf("%s attributes %v", m.Name, a)
				}
				tokens[a["gen_ai.token.type"]] += int64(p.GetSum())
			}
		case "gen_ai.client.operation.duration":
			for _, p := range m.GetHistogram().GetDataPoints() {
				calls += p.Count
			}
		}
	}
	if tokens["input"] != 1203+1262+1344 || tokens["output"] != 1+4+41 {
		t.Errorf("gen_ai.client.token.usage %v, want input %d, output %d", tokens, 1203+1262+1344, 1+4+41)
	}
	if calls != 3 || !found["engine.turns"] {
		t.Errorf("gen_ai.client.operation.duration counted %d calls, want 3; metrics %v", calls, found)
	}
	if recv.resource["service.name"] != "engine" || recv.contentType != "application/x-protobuf" {
		t.Errorf("resource %v, content type %q", recv.resource, recv.contentType)
	}
}

func merge(a, b map[string]string) map[string]string {
	m := maps.Clone(a)
	maps.Copy(m, b)
	return m
}

// TestOTLPExportHoldsNoCardNumber: a user who says a card number to the reference server, its
// traces exported over OTLP and its log at debug level: neither the export nor the log holds the
// number, and what the user is shown masks it.
func TestOTLPExportHoldsNoCardNumber(t *testing.T) {
	recv := &otlpReceiver{}
	collector := httptest.NewServer(recv)
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
	base, _, logs := startServerLogs(t, nil, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL})
	evs, spec := turn(t, base, "prod-otlp-card", `{"transcript":"is my card 4111 1111 1111 1111 blocked? my IBAN is GB82 WEST 1234 5698 7654 32"}`)

	var exported []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		recv.mu.Lock()
		n := len(recv.spans)
		exported = exported[:0]
		for _, s := range recv.spans {
			b, _ := protojson.Marshal(s)
			exported = append(exported, b...)
		}
		recv.mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
	}
	if len(exported) == 0 {
		t.Fatal("no span was exported")
	}
	shown, _ := json.Marshal(struct {
		Events []enginetest.Event
		Spec   widgets.Spec
	}{evs, spec})
	for what, text := range map[string]string{"the trace export": string(exported), "the log": logs.String(), "what the user is shown": string(shown)} {
		if flat := strings.NewReplacer(" ", "", "-", "").Replace(text); strings.Contains(flat, "4111111111111111") || strings.Contains(flat, "GB82WEST") {
			t.Errorf("%s holds the card number or the IBAN:\n%s", what, text)
		}
	}
}
