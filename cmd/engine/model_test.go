package main

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/widgets"
)

// TestOpenAIModelFromEnvironment: OPENAI_API_KEY switches the server to the OpenAI model; the
// demo tenant keeps working, answered by the (replayed) API.
func TestOpenAIModelFromEnvironment(t *testing.T) {
	replay := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), enginetest.DemoRoute)
	const key = "sk-cmd-test-key-5678"
	base, out := startServer(t, nil, map[string]string{"OPENAI_API_KEY": key, "OPENAI_BASE_URL": replay.URL})
	if strings.Contains(out.String(), key) {
		t.Error("the API key was printed")
	}

	evs, spec := turn(t, base, "prod-ai-1", `{"transcript":"what is my balance"}`)
	order(t, evs, spec)
	if len(spec.Widgets) != 1 || spec.Widgets[0].WidgetType() != widgets.TypeStat || len(spec.Suggestions) != 2 {
		t.Fatalf("spec %+v", spec)
	}
	_, spec = turn(t, base, "prod-ai-2", `{"transcript":"send 20 dollars to Alex"}`)
	if len(spec.Widgets) != 1 || spec.Widgets[0].WidgetType() != widgets.TypeConfirm {
		t.Fatalf("spec %+v", spec)
	}

	reqs := replay.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d completions, want 4", len(reqs))
	}
	for _, r := range reqs {
		if r.Header.Get("Authorization") != "Bearer "+key || r.Model != "gpt-4o-mini" || !r.Stream {
			t.Errorf("request with model %q, stream %v, auth %q", r.Model, r.Stream, r.Header.Get("Authorization"))
		}
	}
	var body struct {
		Messages []struct{ Role, Content string }
	}
	json.Unmarshal(reqs[0].Body, &body)
	if len(body.Messages) < 3 || !strings.HasPrefix(body.Messages[0].Content, "You are Demo Bank's assistant.") {
		t.Errorf("messages %+v", body.Messages)
	}
}

// TestDemoConversationsWithOpenAI runs the demo's conversations again, answered by the OpenAI
// model from recorded traffic.
func TestDemoConversationsWithOpenAI(t *testing.T) {
	replay := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), enginetest.DemoRoute)
	testDemoConversations(t, map[string]string{"OPENAI_API_KEY": "sk-demo", "OPENAI_BASE_URL": replay.URL})
	if n := len(replay.Requests()); n < 20 {
		t.Errorf("%d completions: the conversations were not answered by the OpenAI model", n)
	}
}

func TestEngineModelNamesTheModel(t *testing.T) {
	replay := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), enginetest.DemoRoute)
	base, _ := startServer(t, nil, map[string]string{"OPENAI_BASE_URL": replay.URL, "ENGINE_MODEL": "llama3.2"})
	turn(t, base, "prod-ai-3", `{"mode":"home"}`)
	reqs := replay.Requests()
	if len(reqs) == 0 || reqs[0].Model != "llama3.2" || reqs[0].Header.Get("Authorization") != "" {
		t.Fatalf("requests %+v", reqs)
	}
}

func TestBadOpenAIBaseURL(t *testing.T) {
	err := run(t.Context(), nil, func(k string) string {
		return map[string]string{"OPENAI_API_KEY": "sk-x", "OPENAI_BASE_URL": "localhost:11434"}[k]
	}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "OPENAI_BASE_URL") || strings.Contains(err.Error(), "sk-x") {
		t.Fatalf("run: %v", err)
	}
}

// TestTenantsOnTwoModels: one tenants file, two tenants of the same bank, one answered by the
// offline intent model and the other by an OpenAI-compatible server named in the file's models
// section; the server's key comes from the environment and is never printed.
func TestTenantsOnTwoModels(t *testing.T) {
	replay := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), enginetest.DemoRoute)
	bank := httptest.NewServer(demobank.New(nil))
	defer bank.Close()
	offline, _ := demobank.Tenant(bank.URL, "")
	offline.Key, offline.Model = "pk_offline", "intent"
	llm, _ := demobank.Tenant(bank.URL, "")
	llm.Key, llm.Model = "pk_llm", "compat"
	const key = "sk-compat-secret-4321"
	data, _ := json.Marshal(map[string]any{
		"models":  map[string]any{"compat": map[string]string{"base_url": replay.URL, "model": "llama3.2", "api_key": "${COMPAT_KEY}"}},
		"tenants": []*engine.Tenant{offline, llm},
	})
	path := filepath.Join(t.TempDir(), "tenants.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	base, out := startServer(t, []string{"-tenants", path}, map[string]string{"COMPAT_KEY": key})

	_, spec := turnAs(t, base, "pk_offline", "prod-offline-1", `{"transcript":"what is my balance"}`)
	if len(spec.Widgets) != 1 || spec.Widgets[0].WidgetType() != widgets.TypeStat || len(replay.Requests()) != 0 {
		t.Fatalf("the offline tenant: %+v, %d completions on the server", spec, len(replay.Requests()))
	}
	_, spec = turnAs(t, base, "pk_llm", "prod-llm-1", `{"transcript":"what is my balance"}`)
	if len(spec.Widgets) != 1 || spec.Widgets[0].WidgetType() != widgets.TypeStat {
		t.Fatalf("the tenant on the compatible server: %+v", spec)
	}
	reqs := replay.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d completions for the tenant on the compatible server, want 2", len(reqs))
	}
	for _, r := range reqs {
		if r.Model != "llama3.2" || r.Header.Get("Authorization") != "Bearer "+key {
			t.Errorf("a completion for model %q with %q", r.Model, r.Header.Get("Authorization"))
		}
	}
	if strings.Contains(out.String(), key) {
		t.Error("the model's key was printed")
	}

	// A tenant naming a model nobody offers stops the server with the tenant and the field.
	llm.Model = "nowhere"
	data, _ = json.Marshal(map[string]any{"tenants": []*engine.Tenant{llm}})
	os.WriteFile(path, data, 0o600)
	err := run(t.Context(), []string{"-tenants", path}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `tenant "pk_llm": model: "nowhere"`) {
		t.Fatalf("an unknown model: %v", err)
	}
}
