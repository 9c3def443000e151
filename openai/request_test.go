package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/openai"
)

var (
	balanceSchema  = json.RawMessage(`{"type":"object","properties":{"account":{"type":"string","enum":["checking","savings"]}},"additionalProperties":false}`)
	transferSchema = json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number","exclusiveMinimum":0,"maximum":10000.50},"to":{"type":"string"}},"required":["amount","to"]}`)
	statSchema     = json.RawMessage(`{"type":"object","properties":{"label":{"type":"string"},"value":{"type":"string"}},"required":["label","value"]}`)
)

func demoTools() []engine.ToolSpec {
	return []engine.ToolSpec{
		{Name: "transfer", Description: "Send money.", Parameters: transferSchema, Kind: engine.ToolAction},
		{Name: "show_stat", Description: "Show one figure.", Parameters: statSchema, Kind: engine.ToolUI},
		{Name: "get_balance", Description: "Get the balance.", Parameters: balanceSchema, Kind: engine.ToolData},
	}
}

// body is a captured request body, its top-level fields and its messages as raw bytes.
type body struct {
	raw      []byte
	fields   map[string]json.RawMessage
	messages []json.RawMessage
	tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
}

func parseBody(t *testing.T, raw []byte) body {
	t.Helper()
	b := body{raw: raw}
	if err := json.Unmarshal(raw, &b.fields); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(b.fields["messages"], &b.messages)
	json.Unmarshal(b.fields["tools"], &b.tools)
	return b
}

func TestRequestBody(t *testing.T) {
	tenant := &engine.Tenant{Key: "pk_demo"}
	req := &engine.ModelRequest{
		Tenant: tenant, Environment: engine.EnvStaging,
		System: "You are Demo Bank's assistant.\n", Context: "About this turn:\n- Answer in en-US.\n",
		Messages: []engine.Message{
			{Role: engine.RoleUser, Content: "hi"},
			{Role: engine.RoleAssistant, Content: "Hello!"},
			{Role: engine.RoleUser, Content: "send $20 to Alex and show my balance"},
			{Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{
				{ID: "call_1", Name: "transfer", Arguments: json.RawMessage(`{"amount":20,"to":"Alex"}`)},
				{ID: "call_2", Name: "get_balance", Arguments: json.RawMessage(`{}`)},
			}},
			{Role: engine.RoleTool, ToolCallID: "call_1", Name: "transfer", Content: `{"status":"confirmation_requested"}`},
			{Role: engine.RoleTool, ToolCallID: "call_2", Name: "get_balance", Content: `{"error":"tool_unavailable"}`, IsError: true},
		},
		Tools: demoTools(),
	}
	srv := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), sequence("text"))
	m := newModel(t, srv.URL, &openai.Options{Model: "gpt-test", Organization: "org-1", Project: "proj-1"})
	if r := collect(m.Stream(context.Background(), req)); r.err != nil {
		t.Fatal(r.err)
	}
	sent := srv.Requests()[0]
	if sent.Path != "/v1/chat/completions" || sent.Header.Get("Authorization") != "Bearer "+testKey ||
		sent.Header.Get("OpenAI-Organization") != "org-1" || sent.Header.Get("OpenAI-Project") != "proj-1" {
		t.Errorf("%s %v", sent.Path, sent.Header)
	}
	b := parseBody(t, sent.Body)
	for field, want := range map[string]string{
		"model":               `"gpt-test"`,
		"stream":              `true`,
		"stream_options":      `{"include_usage":true}`,
		"parallel_tool_calls": `true`,
		"prompt_cache_key":    `"` + openai.CacheKey(tenant, engine.EnvStaging) + `"`,
	} {
		if got := string(b.fields[field]); got != want {
			t.Errorf("%s = %s, want %s", field, got, want)
		}
	}
	for _, absent := range []string{"temperature", "max_completion_tokens", "max_tokens"} {
		if _, ok := b.fields[absent]; ok {
			t.Errorf("%s is sent", absent)
		}
	}
	wantMessages := []string{
		`{"content":"You are Demo Bank's assistant.\n","role":"system"}`,
		`{"content":"About this turn:\n- Answer in en-US.\n","role":"system"}`,
		`{"content":"hi","role":"user"}`,
		`{"content":"Hello!","role":"assistant"}`,
		`{"content":"send $20 to Alex and show my balance","role":"user"}`,
		`{"tool_calls":[{"id":"call_1","function":{"arguments":"{\"amount\":20,\"to\":\"Alex\"}","name":"transfer"},"type":"function"},{"id":"call_2","function":{"arguments":"{}","name":"get_balance"},"type":"function"}],"role":"assistant"}`,
		`{"content":"{\"status\":\"confirmation_requested\"}","tool_call_id":"call_1","role":"tool"}`,
		`{"content":"{\"is_error\":true,\"result\":{\"error\":\"tool_unavailable\"}}","tool_call_id":"call_2","role":"tool"}`,
	}
	if len(b.messages) != len(wantMessages) {
		t.Fatalf("messages %s", b.fields["messages"])
	}
	for i, want := range wantMessages {
		if !jsonEqual(b.messages[i], want) {
			t.Errorf("message %d\n got %s\nwant %s", i, b.messages[i], want)
		}
	}
	var names []string
	for _, tool := range b.tools {
		names = append(names, tool.Function.Name)
		if tool.Type != "function" {
			t.Errorf("tool type %q", tool.Type)
		}
	}
	if strings.Join(names, ",") != "get_balance,show_stat,transfer" {
		t.Errorf("tools %v, want them sorted by name", names)
	}
	if d := b.tools[0].Function.Description; d != "Get the balance." {
		t.Errorf("data tool described as %q", d)
	}
	if d := b.tools[1].Function.Description; !strings.HasPrefix(d, "Show one figure. (Display:") {
		t.Errorf("UI tool described as %q", d)
	}
	if d := b.tools[2].Function.Description; !strings.HasPrefix(d, "Send money. (Action:") || !strings.Contains(d, "confirm") {
		t.Errorf("action tool described as %q", d)
	}
	// Schemas are written with sorted top-level keys, and otherwise as they were.
	if got := string(b.tools[2].Function.Parameters); got != `{"properties":{"amount":{"type":"number","exclusiveMinimum":0,"maximum":10000.50},"to":{"type":"string"}},"required":["amount","to"],"type":"object"}` {
		t.Errorf("transfer parameters %s", got)
	}
}

func TestRequestBodyOptions(t *testing.T) {
	temp := 0.0
	srv := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), sequence("text"))
	m := newModel(t, srv.URL, &openai.Options{Temperature: &temp, MaxOutputTokens: 300, SequentialToolCalls: true, SingleSystemMessage: true})
	req := balanceRequest()
	if r := collect(m.Stream(context.Background(), req)); r.err != nil {
		t.Fatal(r.err)
	}
	b := parseBody(t, srv.Requests()[0].Body)
	if string(b.fields["temperature"]) != "0" || string(b.fields["max_completion_tokens"]) != "300" || string(b.fields["parallel_tool_calls"]) != "false" {
		t.Errorf("body %s", b.raw)
	}
	var first struct{ Role, Content string }
	json.Unmarshal(b.messages[0], &first)
	if len(b.messages) != 2 || first.Role != "system" || first.Content != req.System+"\n\n"+req.Context {
		t.Errorf("messages %s", b.fields["messages"])
	}

	// A tenant's bound lower than the model's wins, and a higher one does not.
	for _, c := range []struct{ tenant, want int }{{120, 120}, {900, 300}} {
		req := balanceRequest()
		req.MaxOutputTokens = c.tenant
		if r := collect(m.Stream(context.Background(), req)); r.err != nil {
			t.Fatal(r.err)
		}
		reqs := srv.Requests()
		b := parseBody(t, reqs[len(reqs)-1].Body)
		if got := string(b.fields["max_completion_tokens"]); got != strconv.Itoa(c.want) {
			t.Errorf("tenant bound %d: max_completion_tokens %s, want %d", c.tenant, got, c.want)
		}
	}
}

func jsonEqual(a json.RawMessage, b string) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal([]byte(b), &y) == nil && bytes.Equal(mustJSON(x), mustJSON(y))
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// TestWarmUpSharesThePrefix captures a warm-up and a turn of the same tenant and checks that
// the prefix a provider caches is the same bytes in both: the tools and the first system
// message, with the same prompt_cache_key.
func TestWarmUpSharesThePrefix(t *testing.T) {
	srv := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), enginetest.DemoRoute)
	m := newModel(t, srv.URL, nil)
	tenant := &engine.Tenant{Key: "pk_demo"}
	system := "You are Demo Bank's assistant.\n\nRules of this conversation:\n- Put figures in widgets.\n"
	tools := demoTools()

	// The engine hands the warm-up the tools in its own order; turns may list them otherwise.
	warm := &engine.ModelRequest{Tenant: tenant, Environment: engine.EnvProduction, System: system, Tools: tools}
	if _, err := m.Warm(context.Background(), warm); err != nil {
		t.Fatal(err)
	}
	reversed := []engine.ToolSpec{tools[2], tools[0], tools[1]}
	turn := &engine.ModelRequest{Tenant: tenant, Environment: engine.EnvProduction, System: system,
		Context:  "About this turn:\n- Answer in the language of the locale es-MX.\n- The user's country is MX.\n",
		Messages: []engine.Message{{Role: engine.RoleUser, Content: "what is my balance"}}, Tools: reversed}
	if r := collect(m.Stream(context.Background(), turn)); r.err != nil || len(r.calls) != 1 {
		t.Fatalf("turn: %+v", r)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	w, u := parseBody(t, reqs[0].Body), parseBody(t, reqs[1].Body)
	if !bytes.Equal(w.fields["tools"], u.fields["tools"]) {
		t.Errorf("tools differ:\nwarm %s\nturn %s", w.fields["tools"], u.fields["tools"])
	}
	if !bytes.Equal(w.messages[0], u.messages[0]) {
		t.Errorf("system messages differ:\nwarm %s\nturn %s", w.messages[0], u.messages[0])
	}
	key := `"` + openai.CacheKey(tenant, engine.EnvProduction) + `"`
	if string(w.fields["prompt_cache_key"]) != key || string(u.fields["prompt_cache_key"]) != key {
		t.Errorf("prompt_cache_key %s and %s, want %s", w.fields["prompt_cache_key"], u.fields["prompt_cache_key"], key)
	}
	if string(w.fields["max_completion_tokens"]) != "1" || u.fields["max_completion_tokens"] != nil {
		t.Errorf("max_completion_tokens %s and %s", w.fields["max_completion_tokens"], u.fields["max_completion_tokens"])
	}
	if !strings.Contains(string(u.messages[1]), "es-MX") || strings.Contains(string(w.raw), "es-MX") {
		t.Errorf("the turn's context is not where it belongs:\nwarm %s\nturn %s", w.raw, u.raw)
	}
	t.Logf("warm-up body: %s", w.raw)
	t.Logf("turn body:    %s", u.raw)
}

func TestCacheKey(t *testing.T) {
	a := openai.CacheKey(&engine.Tenant{Key: "pk_a"}, engine.EnvProduction)
	if a != openai.CacheKey(&engine.Tenant{Key: "pk_a"}, engine.EnvProduction) ||
		a == openai.CacheKey(&engine.Tenant{Key: "pk_a"}, engine.EnvStaging) ||
		a == openai.CacheKey(&engine.Tenant{Key: "pk_b"}, engine.EnvProduction) ||
		strings.Contains(a, "pk_a") || len(a) > 64 || openai.CacheKey(nil, "") != "" {
		t.Errorf("cache key %q", a)
	}
}
