package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/openai"
	"github.com/convengine/engine/widgets"
)

// reportsUsage are the shapes whose fixtures report usage: the shapes' usage test checks that
// the fixtures still do, so that its reading of them cannot quietly find nothing.
var reportsUsage = []string{"openrouter", "plain_json", "groq_usage", "cumulative_usage"}

// TestShapeUsage drives the balance conversation of every shape of enginetest.ServerShapes
// through the model, its two completions one after the other, and finds on each finish the
// usage its fixture reported, read here from the fixture's own bytes; a fixture that reports
// none gives Reported false and zero counts.
func TestShapeUsage(t *testing.T) {
	var reporting []string
	for _, shape := range enginetest.ServerShapes() {
		if shape.Fails {
			continue
		}
		t.Run(shape.Name, func(t *testing.T) {
			replay := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), enginetest.ShapeRoute(shape))
			m := newModel(t, replay.URL, nil)
			req := balanceRequest()
			first := collect(m.Stream(context.Background(), req))
			if first.err != nil || first.finish == nil || len(first.calls) == 0 {
				t.Fatalf("first completion: calls %q, finish %v, error %v", calls(first.calls), first.finish, first.err)
			}
			req.Messages = append(req.Messages, engine.Message{Role: engine.RoleAssistant, ToolCalls: first.calls})
			for _, c := range first.calls {
				req.Messages = append(req.Messages, engine.Message{Role: engine.RoleTool, ToolCallID: c.ID, Name: c.Name,
					Content: `{"account":"Everyday Checking","balance":"$1,234.56"}`})
			}
			second := collect(m.Stream(context.Background(), req))
			if second.err != nil || second.finish == nil {
				t.Fatalf("second completion: finish %v, error %v", second.finish, second.err)
			}
			for i, r := range []result{first, second} {
				name := "shape_" + shape.Name + "_" + strconv.Itoa(i+1)
				want := fixtureUsage(t, name)
				if r.finish.Usage != want {
					t.Errorf("%s: usage %+v, want %+v", name, r.finish.Usage, want)
				}
				if m := fixtureModel(t, name); r.finish.Model != m || m == "" || r.finish.Retries != 0 {
					t.Errorf("%s: model %q after %d retries, want %q after none", name, r.finish.Model, r.finish.Retries, m)
				}
				if want.Reported && !slices.Contains(reporting, shape.Name) {
					reporting = append(reporting, shape.Name)
				}
			}
			if n := len(replay.Requests()); n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
		})
	}
	slices.Sort(reporting)
	want := slices.Sorted(slices.Values(reportsUsage))
	if !slices.Equal(reporting, want) {
		t.Errorf("the shapes that report usage are %q, want %q", reporting, want)
	}
}

// fixtureUsage is the usage a fixture reports: its last "usage" object (at the top of a chunk or
// under x_groq, framed as the fixture frames it) that holds token counts other than zero.
func fixtureUsage(t *testing.T, name string) engine.Usage {
	t.Helper()
	raw, err := fs.ReadFile(enginetest.OpenAIFixtures(), name+".http")
	if err != nil {
		t.Fatal(err)
	}
	type counts struct {
		PromptTokens        *int `json:"prompt_tokens"`
		CompletionTokens    *int `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails *struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	}
	var last engine.Usage
	const key = `"usage"`
	for rest := raw; ; {
		i := bytes.Index(rest, []byte(key))
		if i < 0 {
			return last
		}
		rest = bytes.TrimLeft(rest[i+len(key):], " \t")
		if len(rest) == 0 || rest[0] != ':' {
			continue
		}
		var c counts
		if json.NewDecoder(bytes.NewReader(rest[1:])).Decode(&c) != nil || c.PromptTokens == nil && c.CompletionTokens == nil {
			continue // null, {}, or not an object
		}
		u := engine.Usage{Reported: true}
		if c.PromptTokens != nil {
			u.InputTokens = *c.PromptTokens
		}
		if c.CompletionTokens != nil {
			u.OutputTokens = *c.CompletionTokens
		}
		if d := c.PromptTokensDetails; d != nil {
			u.CachedTokens = d.CachedTokens
		}
		if d := c.CompletionTokensDetails; d != nil {
			u.ReasoningTokens = d.ReasoningTokens
		}
		if u.InputTokens != 0 || u.OutputTokens != 0 {
			last = u
		}
	}
}

// fixtureModel is the model a fixture's chunks name: the value of their "model" members other
// than "", which must all be the same.
func fixtureModel(t *testing.T, name string) string {
	t.Helper()
	raw, err := fs.ReadFile(enginetest.OpenAIFixtures(), name+".http")
	if err != nil {
		t.Fatal(err)
	}
	model := ""
	const key = `"model"`
	for rest := raw; ; {
		i := bytes.Index(rest, []byte(key))
		if i < 0 {
			return model
		}
		rest = bytes.TrimLeft(rest[i+len(key):], " \t")
		if len(rest) == 0 || rest[0] != ':' {
			continue
		}
		var m string
		if json.NewDecoder(bytes.NewReader(rest[1:])).Decode(&m) != nil || m == "" {
			continue
		}
		if model != "" && m != model {
			t.Fatalf("%s names the models %q and %q", name, model, m)
		}
		model = m
	}
}

// TestUsageReports: what a server reports as usage reaches the finish event when it can be
// right, the last report counting; a report that cannot be right is no report, and costs the
// turn nothing else: its text and its finish come as they were sent.
func TestUsageReports(t *testing.T) {
	const full = `{"prompt_tokens":1300,"completion_tokens":240,"total_tokens":1540,` +
		`"prompt_tokens_details":{"cached_tokens":1152,"audio_tokens":0},` +
		`"completion_tokens_details":{"reasoning_tokens":192,"audio_tokens":0}}`
	fullUsage := engine.Usage{InputTokens: 1300, OutputTokens: 240, CachedTokens: 1152, ReasoningTokens: 192, Reported: true}
	text := func(usage string) string {
		return `data: {"choices":[{"index":0,"delta":{"content":"Your balance is $1,234.56."},"finish_reason":null}],"usage":` + usage + "}\n\n"
	}
	finish := `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	report := func(usage string) string { return `data: {"choices":[],"usage":` + usage + "}\n\n" }
	groq := func(usage, xgroq string) string {
		return `data: {"choices":[],"usage":` + usage + `,"x_groq":{"id":"req_1","usage":` + xgroq + "}}\n\n"
	}
	for _, tc := range []struct {
		name   string
		stream string
		want   engine.Usage
	}{
		{"in the last chunk, with cached and reasoning tokens", text("null") + finish + report(full), fullUsage},
		{"in the finishing chunk", text("null") + `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":` + full + "}\n\n", fullUsage},
		{"details null", text("null") + finish + report(`{"prompt_tokens":1300,"completion_tokens":240,"prompt_tokens_details":null,"completion_tokens_details":null}`),
			engine.Usage{InputTokens: 1300, OutputTokens: 240, Reported: true}},
		{"the prompt only", text("null") + finish + report(`{"prompt_tokens":1225}`), engine.Usage{InputTokens: 1225, Reported: true}},
		{"none", text("null") + finish, engine.Usage{}},
		{"null", text("null") + finish + report("null"), engine.Usage{}},
		{"an empty object", text("{}") + finish + report("{}"), engine.Usage{}},
		{"zeros", text("null") + finish + report(`{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}`), engine.Usage{}},
		{"twice: the last counts", text("null") + report(`{"prompt_tokens":900,"completion_tokens":10}`) + finish + report(full), fullUsage},
		{"a running total: the last counts", text(`{"prompt_tokens":1300,"completion_tokens":1}`) + text(`{"prompt_tokens":1300,"completion_tokens":2}`) + finish + report(full), fullUsage},
		{"an empty report after a real one", text("null") + finish + report(full) + report("{}"), fullUsage},
		{"under x_groq", text("null") + finish + groq("null", full), fullUsage},
		{"under x_groq, an empty one beside it", text("null") + finish + groq("{}", full), fullUsage},
		{"negative", text("null") + finish + report(`{"prompt_tokens":-1300,"completion_tokens":240}`), engine.Usage{}},
		{"negative cached tokens", text("null") + finish + report(`{"prompt_tokens":1300,"completion_tokens":240,"prompt_tokens_details":{"cached_tokens":-1}}`), engine.Usage{}},
		{"absurd", text("null") + finish + report(`{"prompt_tokens":1300,"completion_tokens":10000001}`), engine.Usage{}},
		{"absurd reasoning", text("null") + finish + report(`{"prompt_tokens":1300,"completion_tokens":240,"completion_tokens_details":{"reasoning_tokens":1e300}}`), engine.Usage{}},
		{"numbers as strings", text("null") + finish + report(`{"prompt_tokens":"1300","completion_tokens":"240"}`), engine.Usage{}},
		{"a fraction", text("null") + finish + report(`{"prompt_tokens":1300.5,"completion_tokens":240}`), engine.Usage{}},
		{"not an object", text("null") + finish + report(`"1540 tokens"`), engine.Usage{}},
		{"details not an object", text("null") + finish + report(`{"prompt_tokens":1300,"completion_tokens":240,"prompt_tokens_details":[1152]}`), engine.Usage{}},
		{"x_groq not an object", text("null") + finish + `data: {"choices":[],"x_groq":"req_1"}` + "\n\n", engine.Usage{}},
		{"a bad report after a real one", text("null") + finish + report(full) + report(`{"prompt_tokens":-1,"completion_tokens":240}`), engine.Usage{}},
		{"a real report after a bad one", text("null") + report(`{"prompt_tokens":"x"}`) + finish + report(full), fullUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, tc.stream+"data: [DONE]\n\n")
			}))
			defer srv.Close()
			r := collect(newModel(t, srv.URL+"/v1", &openai.Options{MaxRetries: -1}).Stream(context.Background(), balanceRequest()))
			if r.err != nil || r.finish == nil || r.finish.Finish != engine.FinishStop || !strings.HasPrefix(r.text, "Your balance is $1,234.56.") {
				t.Fatalf("text %q, finish %+v, error %v", r.text, r.finish, r.err)
			}
			if r.finish.Usage != tc.want {
				t.Errorf("usage %+v, want %+v", r.finish.Usage, tc.want)
			}
		})
	}
}

// TestUsageOfAWholeCompletion: a completion answered as one JSON object, streamed or not, gives
// its usage as a stream would.
func TestUsageOfAWholeCompletion(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hello."},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":1212,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":1024},"completion_tokens_details":{"reasoning_tokens":0}}}`)
	}))
	defer srv.Close()
	r := collect(newModel(t, srv.URL+"/v1", nil).Stream(context.Background(), balanceRequest()))
	want := engine.Usage{InputTokens: 1212, OutputTokens: 3, CachedTokens: 1024, Reported: true}
	if r.err != nil || r.finish == nil || r.finish.Usage != want {
		t.Fatalf("finish %+v, error %v; want usage %+v", r.finish, r.err, want)
	}
}

// TestShapeUsageThroughATurn: the balance turn of every shape that answers it, run by the engine
// with this package's model, tells the Observer of its two calls of the model, each with the
// usage its server reported in the fixture; a shape that reports none gets the engine's
// estimate instead, marked as such. The two calls' figures are the turn's.
func TestShapeUsageThroughATurn(t *testing.T) {
	for _, shape := range enginetest.ServerShapes() {
		if shape.Fails {
			continue
		}
		t.Run(shape.Name, func(t *testing.T) {
			var (
				mu    sync.Mutex
				calls []engine.ModelCallEvent
			)
			obs := &engine.Observer{ModelCall: func(_ context.Context, e engine.ModelCallEvent) {
				mu.Lock()
				defer mu.Unlock()
				calls = append(calls, e)
			}}
			replay := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), enginetest.ShapeRoute(shape))
			d := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: engine.Config{Model: newModel(t, replay.URL, nil), Observer: obs}})
			caller := &engine.Caller{EngineKey: demobank.EngineKey, UserToken: enginetest.DemoUserToken}
			var spec *widgets.Spec
			for ev, err := range d.Engine.Turn(t.Context(), caller, &engine.TurnInput{Transcript: "What's my balance?"}) {
				if err != nil {
					t.Fatal(err)
				}
				if ev.Type == engine.EventDone {
					spec = ev.Spec
				}
			}
			if spec == nil || spec.Meta.Error != "" {
				t.Fatalf("the turn: %+v", spec)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(calls) != 2 {
				t.Fatalf("%d calls of the model observed, want 2: %+v", len(calls), calls)
			}
			var total engine.Usage
			for i, c := range calls {
				want := fixtureUsage(t, "shape_"+shape.Name+"_"+strconv.Itoa(i+1))
				if c.Usage != want || c.Step != i+1 || c.Outcome != "ok" || c.Tenant != demobank.EngineKey || c.TurnID != spec.Meta.TurnID {
					t.Errorf("call %d: %+v, want usage %+v", i+1, c, want)
				}
				if m := fixtureModel(t, "shape_"+shape.Name+"_"+strconv.Itoa(i+1)); c.Model != m || c.Retries != 0 || c.Warmup {
					t.Errorf("call %d: model %q, %d retries, warm-up %v; want %q, none, false", i+1, c.Model, c.Retries, c.Warmup, m)
				}
				if c.User == "" || strings.Contains(c.User, enginetest.DemoUserToken) {
					t.Errorf("call %d names its user %q", i+1, c.User)
				}
				switch {
				case want.Reported && c.Estimated != (engine.Usage{}):
					t.Errorf("call %d: an estimate %+v beside a reported usage", i+1, c.Estimated)
				case !want.Reported && (c.Estimated.InputTokens == 0 || c.Estimated.OutputTokens == 0 || c.Estimated.Reported):
					t.Errorf("call %d: no usage reported, and the estimate is %+v", i+1, c.Estimated)
				}
				total.InputTokens += c.Usage.InputTokens
				total.OutputTokens += c.Usage.OutputTokens
			}
			if want1, want2 := fixtureUsage(t, "shape_"+shape.Name+"_1"), fixtureUsage(t, "shape_"+shape.Name+"_2"); total.InputTokens != want1.InputTokens+want2.InputTokens ||
				total.OutputTokens != want1.OutputTokens+want2.OutputTokens {
				t.Errorf("the turn's tokens %+v, want the sum of both calls'", total)
			}
		})
	}
}

// TestModelOfTheAnswer: the finish names the model as the server's chunks did, unless what
// they said cannot be a model's name; a whole completion's model is read the same way.
func TestModelOfTheAnswer(t *testing.T) {
	chunk := func(model string) string {
		return `data: {"model":` + model + `,"choices":[{"index":0,"delta":{"content":"Hello."},"finish_reason":"stop"}]}` + "\n\n"
	}
	for _, tc := range []struct {
		name, stream, want string
	}{
		{"named", chunk(`"gpt-4o-mini-2024-07-18"`), "gpt-4o-mini-2024-07-18"},
		{"an empty name first", `data: {"model":"","choices":[]}` + "\n\n" + chunk(`"gpt-35-turbo"`), "gpt-35-turbo"},
		{"an empty name after", chunk(`"gpt-35-turbo"`) + `data: {"model":"","choices":[]}` + "\n\n", "gpt-35-turbo"},
		{"none", `data: {"choices":[{"index":0,"delta":{"content":"Hello."},"finish_reason":"stop"}]}` + "\n\n", ""},
		{"null", chunk("null"), ""},
		{"a number", chunk("42"), ""},
		{"an object", chunk(`{"name":"x"}`), ""},
		{"a control character", chunk(`"gpt\u0000x"`), ""},
		{"a line feed", chunk(`"gpt\nx"`), ""},
		{"too long", chunk(`"` + strings.Repeat("m", 257) + `"`), ""},
		{"as long as allowed", chunk(`"` + strings.Repeat("m", 256) + `"`), strings.Repeat("m", 256)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, tc.stream+"data: [DONE]\n\n")
			}))
			defer srv.Close()
			r := collect(newModel(t, srv.URL+"/v1", &openai.Options{MaxRetries: -1}).Stream(context.Background(), balanceRequest()))
			if r.err != nil || r.finish == nil || r.text != "Hello." {
				t.Fatalf("text %q, finish %+v, error %v", r.text, r.finish, r.err)
			}
			if r.finish.Model != tc.want {
				t.Errorf("model %q, want %q", r.finish.Model, tc.want)
			}
		})
	}
}

// TestRetriesAreCounted: a completion answered after rate limits or a server error names on its
// finish how many attempts failed before the one that answered, with the answer's usage and
// model; the engine hands them to the Observer.
func TestRetriesAreCounted(t *testing.T) {
	for _, tc := range []struct {
		name     string
		attempts []string
		retries  int
	}{
		{"at once", []string{"text"}, 0},
		{"after a 429", []string{"rate_limited", "text"}, 1},
		{"after a 429 and a 500", []string{"rate_limited", "server_error", "text"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			replay := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), sequence(tc.attempts...))
			r := collect(newModel(t, replay.URL, nil).Stream(context.Background(), balanceRequest()))
			if r.err != nil || r.finish == nil {
				t.Fatalf("finish %+v, error %v", r.finish, r.err)
			}
			if n := len(replay.Requests()); n != len(tc.attempts) {
				t.Errorf("%d requests, want %d", n, len(tc.attempts))
			}
			want := fixtureUsage(t, "text")
			if r.finish.Retries != tc.retries || r.finish.Usage != want || r.finish.Model != "gpt-4o-mini-2024-07-18" {
				t.Errorf("finish %+v, want %d retries, usage %+v, model gpt-4o-mini-2024-07-18", r.finish, tc.retries, want)
			}
		})
	}

	// Through a turn: the Observer's model call carries them.
	calls := make(chan engine.ModelCallEvent, 4)
	replay := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), func(r *enginetest.ReplayRequest) string {
		if r.Attempt == 0 {
			return "rate_limited"
		}
		return "text"
	})
	d := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: engine.Config{Model: newModel(t, replay.URL, nil),
		Observer: &engine.Observer{ModelCall: func(_ context.Context, e engine.ModelCallEvent) { calls <- e }}}})
	postTurn(t, d.URL, "prod-retried-1", `{"transcript":"hello"}`)
	select {
	case c := <-calls:
		if c.Retries != 1 || c.Model != "gpt-4o-mini-2024-07-18" || c.Usage != fixtureUsage(t, "text") || c.Step != 1 {
			t.Errorf("the model call observed as %+v, want 1 retry and the text fixture's usage", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no model call observed")
	}
}

// TestWarmUpIsMetered: the warm-up returns its finish with the usage and model the server
// reported, and create-session hands it to the Observer as a warm-up of no turn.
func TestWarmUpIsMetered(t *testing.T) {
	replay := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), enginetest.DemoRoute)
	m := newModel(t, replay.URL, nil)
	want := fixtureUsage(t, "warm")
	req := balanceRequest()
	req.Messages, req.Context = nil, ""
	finish, err := m.Warm(context.Background(), req)
	if err != nil || finish.Kind != engine.EventFinish || finish.Finish != engine.FinishLength || finish.Usage != want ||
		finish.Model != "gpt-4o-mini-2024-07-18" || !want.Reported {
		t.Fatalf("Warm: %+v, %v; want a finish by length with usage %+v", finish, err, want)
	}

	calls := make(chan engine.ModelCallEvent, 4)
	d := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: engine.Config{Model: m,
		Observer: &engine.Observer{ModelCall: func(_ context.Context, e engine.ModelCallEvent) { calls <- e }}}})
	hreq, _ := http.NewRequest(http.MethodPost, d.URL+engine.PathCreateSession, strings.NewReader(`{}`))
	hreq.Header.Set("X-Engine-Key", demobank.EngineKey)
	hreq.Header.Set("X-Token", "user-token-s3cr3t")
	hreq.Header.Set("X-Request-ID", "prod-session-warm")
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create-session: %d", resp.StatusCode)
	}
	select {
	case c := <-calls:
		if !c.Warmup || c.Step != 0 || c.TurnID != "" || c.Usage != want || c.Model != "gpt-4o-mini-2024-07-18" ||
			c.Finish != engine.FinishLength || c.Tenant != demobank.EngineKey || c.Outcome != "ok" {
			t.Errorf("the warm-up observed as %+v", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no warm-up observed")
	}
}
