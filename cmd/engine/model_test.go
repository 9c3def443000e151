package main

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/convengine/engine/enginetest"
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
