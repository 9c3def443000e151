package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes each export with the protocol's own
// types and keeps the spans and the resource's attributes.
type otlpReceiver struct {
	mu          sync.Mutex
	spans       []*tracepb.Span
	resource    map[string]string
	contentType string
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var export coltracepb.ExportTraceServiceRequest
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" || proto.Unmarshal(body, &export) != nil {
		http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.contentType = req.Header.Get("Content-Type")
	for _, rs := range export.ResourceSpans {
		r.resource = attrMap(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = strconv.FormatInt(v.IntValue, 10)
		default:
			m[kv.Key] = kv.GetValue().String()
		}
	}
	return m
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

// TestNoTracingWithoutOTLPVariables: without the variables there is no exporter.
func TestNoTracingWithoutOTLPVariables(t *testing.T) {
	tp, err := newTracing(t.Context(), func(string) string { return "" })
	if tp != nil || err != nil {
		t.Errorf("newTracing without OTEL_EXPORTER_OTLP_*: %v, %v", tp, err)
	}
}
