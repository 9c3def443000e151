package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

func TestObserverSeesATurn(t *testing.T) {
	var (
		mu     sync.Mutex
		events []string
	)
	note := func(format string, args ...any) {
		mu.Lock()
		events = append(events, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	type spanKey struct{}
	obs := &engine.Observer{
		Request: func(_ context.Context, e engine.RequestEvent) { note("request %s %d %s", e.Route, e.Status, e.Code) },
		TurnStart: func(ctx context.Context, e engine.TurnEvent) context.Context {
			note("turn start %s %s", e.Tenant, e.Environment)
			return context.WithValue(ctx, spanKey{}, "turn-span")
		},
		FirstSpeak: func(ctx context.Context, e engine.TurnEvent, elapsed time.Duration) {
			note("first speak in %v", ctx.Value(spanKey{}))
		},
		ToolStart: func(ctx context.Context, e engine.ToolEvent) context.Context {
			note("tool start %s in %v", e.Tool, ctx.Value(spanKey{}))
			return ctx
		},
		ToolEnd: func(_ context.Context, e engine.ToolEvent) { note("tool end %s %s", e.Tool, e.Outcome) },
		TurnEnd: func(_ context.Context, e engine.TurnEvent) {
			note("turn end steps=%d tools=%d widgets=%d error=%q", e.Steps, e.ToolCalls, e.Widgets, e.ErrorCode)
		},
	}
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{
		{engine.TextEvent("Checking."), call("c1", "get_balance", `{}`)},
		{engine.TextEvent("You have $1,234.56."), call("w", "show_stat", `{"label":"Checking","value":"$1,234.56"}`)},
	}}
	h := newHarness(t, engine.Config{Model: model, Toolset: bankTools(), Observer: obs})
	h.turn(`{"transcript":"balance"}`)
	hdr := headers()
	hdr.Set("X-Engine-Key", "pk_nope")
	h.do(t.Context(), "POST", "/engine", hdr, `{}`).Body.Close()

	mu.Lock()
	got := strings.Join(events, "\n")
	mu.Unlock()
	want := strings.Join([]string{
		"turn start pk_test production",
		"first speak in turn-span",
		"tool start get_balance in turn-span",
		"tool end get_balance ok",
		"turn end steps=2 tools=1 widgets=1 error=\"\"",
		"request /engine 200 ",
		"request /engine 401 unknown_engine_key",
	}, "\n")
	if got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	if strings.Contains(got, testToken) {
		t.Fatal("an event carries the user token")
	}
}

// TestObserverLabelsAreBounded: what a stranger writes as a path or a method never becomes a
// label: a request to no route is reported with the route "", one with an invented method as
// "OTHER", and a route mounted under a prefix by its own path.
func TestObserverLabelsAreBounded(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []string
	)
	obs := &engine.Observer{Request: func(_ context.Context, e engine.RequestEvent) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%q %s %d", e.Route, e.Method, e.Status))
		mu.Unlock()
	}}
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, Observer: obs})
	for _, path := range []string{"/" + strings.Repeat("a", 60<<10), "/engine/" + strings.Repeat("b", 1000)} {
		h.do(t.Context(), "GET", path, headers(), ``).Body.Close()
	}
	req, _ := http.NewRequestWithContext(t.Context(), "BREW"+strings.Repeat("X", 500), h.srv.URL+engine.PathTTS, nil)
	req.Header = headers()
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	want := []string{`"" GET 404`, `"" GET 404`, `"/engine/tts" OTHER 405`}
	if strings.Join(seen, "; ") != strings.Join(want, "; ") {
		t.Errorf("events %q, want %q", seen, want)
	}
}

// TestObserverSeesModelCalls: each call of the model is reported with its step and outcome: the
// usage as reported, or, from a model that reports none, the engine's estimate marked as such;
// a call whose client went away is "cancelled", with what it had streamed estimated.
func TestObserverSeesModelCalls(t *testing.T) {
	var (
		mu    sync.Mutex
		calls []engine.ModelCallEvent
		tools []engine.ToolEvent
	)
	obs := &engine.Observer{ModelCall: func(_ context.Context, e engine.ModelCallEvent) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, e)
	}, ToolEnd: func(_ context.Context, e engine.ToolEvent) {
		mu.Lock()
		defer mu.Unlock()
		tools = append(tools, e)
	}}
	reported := engine.Usage{InputTokens: 120, OutputTokens: 9, CachedTokens: 64, Reported: true}
	model := modelFunc(func(_ context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		if enginetest.StepOf(req.Messages) == 0 {
			return []engine.ModelEvent{call("1", "lookup", `{}`), {Kind: engine.EventFinish, Finish: engine.FinishToolCalls, Usage: reported}}
		}
		return []engine.ModelEvent{engine.TextEvent("All good."), engine.FinishEvent(engine.FinishStop)} // no usage reported
	})
	toolset := &enginetest.FuncToolset{ToolList: []engine.Tool{{Name: "lookup"}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"lookup": func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error) {
				return engine.ToolResult{Content: json.RawMessage(`{}`)}, nil
			},
		}}
	h := newHarness(t, engine.Config{Model: model, Toolset: toolset, Observer: obs})
	r := h.turn(`{"transcript":"look it up"}`)
	mu.Lock()
	got := append([]engine.ModelCallEvent(nil), calls...)
	calls = nil
	mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("%d calls observed: %+v", len(got), got)
	}
	first, second := got[0], got[1]
	if first.Step != 1 || first.Outcome != "ok" || first.Finish != engine.FinishToolCalls || first.Usage != reported ||
		first.Estimated != (engine.Usage{}) || first.TurnID != r.spec.Meta.TurnID || first.Tenant != testKey || first.RequestID != "prod-test-1" {
		t.Errorf("the first call: %+v", first)
	}
	if second.Step != 2 || second.Outcome != "ok" || second.Usage.Reported || second.Estimated.InputTokens < 10 ||
		second.Estimated.OutputTokens != 3 || second.Estimated.Reported {
		t.Errorf("the second call, which reported no usage: %+v", second)
	}
	if first.User == "" || first.User != second.User || strings.Contains(first.User, testToken) {
		t.Errorf("the user is named %q and %q", first.User, second.User)
	}
	mu.Lock()
	if len(tools) != 1 || tools[0].CallID != "1" || tools[0].TurnID != first.TurnID || tools[0].User != first.User || tools[0].Outcome != "ok" {
		t.Errorf("the tool call: %+v", tools)
	}
	mu.Unlock()

	// A client that leaves during the answer: the call is cancelled.
	slow := &enginetest.ScriptedModel{Delay: 50 * time.Millisecond, Steps: [][]engine.ModelEvent{enginetest.Text("One. ", "Two. ", "Three.")}}
	h = newHarness(t, engine.Config{Model: slow, Observer: obs})
	for ev := range h.engine.Turn(t.Context(), &engine.Caller{EngineKey: testKey, UserToken: testToken}, &engine.TurnInput{Transcript: "hi"}) {
		if ev.Type == engine.EventSpeak {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 1 || calls[0].Outcome != "cancelled" || calls[0].Estimated.OutputTokens == 0 {
		t.Errorf("a call whose client left: %+v", calls)
	}
}

// slowSpeech streams its audio in three parts, a pause before each, as a synthesizer that
// speaks faster than real time but not at once does.
type slowSpeech struct{ pause time.Duration }

func (s slowSpeech) Synthesize(ctx context.Context, text, voice string) (*engine.Audio, error) {
	return &engine.Audio{SampleRate: 16000, PCM: io.NopCloser(&pausedReader{pause: s.pause, parts: 3, part: 16000})}, nil
}

type pausedReader struct {
	pause       time.Duration
	parts, part int
}

func (r *pausedReader) Read(p []byte) (int, error) {
	if r.parts == 0 {
		return 0, io.EOF
	}
	time.Sleep(r.pause)
	r.parts--
	return copy(p, make([]byte, min(len(p), r.part))), nil
}

// TestObserverSeesSpeechWork: a synthesis is reported when its audio has been read, with the
// time the whole audio took to come, its seconds and the characters it was given; a
// transcription with the seconds of speech sent to the recogniser.
func TestObserverSeesSpeechWork(t *testing.T) {
	var (
		mu     sync.Mutex
		events []engine.SpeechEvent
	)
	obs := &engine.Observer{Speech: func(_ context.Context, e engine.SpeechEvent) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}}
	hears := transcriberFunc(func(context.Context, []int16, int, string) (string, error) { return "hello", nil })
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}
	h := newHarness(t, engine.Config{Model: model, Synthesizer: slowSpeech{pause: 100 * time.Millisecond}, Transcriber: hears,
		SpeechText: func(s, _ string) string { return s }, Observer: obs})

	resp := h.do(t.Context(), http.MethodPost, engine.PathTTS, headers(), `{"text":"Good morning"}`)
	audio, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(audio) < 3*16000 {
		t.Fatalf("tts: %d, %d bytes", resp.StatusCode, len(audio))
	}
	h.turn(audioBody(voiced(16000), 16000, nil))

	mu.Lock()
	defer mu.Unlock()
	if len(events) != 2 {
		t.Fatalf("%d speech events: %+v", len(events), events)
	}
	synth, heard := events[0], events[1]
	// Three parts of 16 000 bytes at 16 kHz: 1.5 s of audio, which took three pauses to come.
	if synth.Kind != "synthesis" || synth.Err || synth.Characters != len("Good morning") || synth.AudioSeconds != 1.5 ||
		synth.Duration < 250*time.Millisecond {
		t.Errorf("the synthesis: %+v", synth)
	}
	if heard.Kind != "transcription" || heard.Err || heard.AudioSeconds <= 0 || heard.AudioSeconds > 1 {
		t.Errorf("the transcription: %+v", heard)
	}
}
