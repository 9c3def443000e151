package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/widgets"
)

var call = enginetest.ToolCall

func finish(r engine.FinishReason) engine.ModelEvent { return engine.FinishEvent(r) }

// bankTools is a toolset with a balance tool and the transfer action.
func bankTools() *enginetest.FuncToolset {
	return &enginetest.FuncToolset{
		ToolList: []engine.Tool{
			{Name: "get_balance", Description: "Balance", Status: "Checking your balance",
				Parameters: json.RawMessage(`{"type":"object","properties":{"account":{"type":"string","enum":["checking","savings"]}},"additionalProperties":false}`)},
			{Name: "transfer", Description: "Send money", Action: true,
				Parameters: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number","exclusiveMinimum":0},"to":{"type":"string"}},"required":["amount","to"]}`)},
		},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"get_balance": func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error) {
				return engine.ToolResult{Content: json.RawMessage(`{"formatted":"$1,234.56"}`)}, nil
			},
			"transfer": func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error) {
				return engine.ToolResult{}, errors.New("an action must not run during a turn")
			},
		},
	}
}

func TestTurnStreamsSpeakThenWidgetsThenDone(t *testing.T) {
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{
		{engine.TextEvent("Let me check."), call("c1", "get_balance", `{"account":"checking"}`), finish(engine.FinishToolCalls)},
		{engine.TextEvent("Your balance "), engine.TextEvent("is $1,234.56."),
			call("c2", widgets.ToolShowStat, `{"label":"Checking","value":"$1,234.56","delta":"+$120"}`),
			call("c3", widgets.ToolSetFollow, `{"text":"Anything else?"}`),
			call("c4", widgets.ToolSetSuggestions, `{"suggestions":["Recent transactions","Savings goal"]}`),
			finish(engine.FinishToolCalls)},
	}}
	tools := bankTools()
	h := newHarness(t, engine.Config{Model: model, Toolset: tools})

	res := h.turn(`{"transcript":"what is my balance","context":{"sessionId":"conv-42"}}`)

	if got, want := res.names(), "start,speak,status,speak,speak,widget,done"; got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	if ct := res.resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	if res.resp.Header.Get("Cache-Control") != "no-cache" || res.resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Errorf("headers %v", res.resp.Header)
	}
	if got := res.resp.Header.Get("X-Request-ID"); got != "prod-test-1" {
		t.Errorf("X-Request-ID echoed as %q", got)
	}
	var start struct{ TurnID, ConversationID string }
	json.Unmarshal(res.events[0].Data, &start)
	if start.ConversationID != "conv-42" || start.TurnID == "" {
		t.Errorf("start %s", res.events[0].Data)
	}
	var status struct{ Text, Tool string }
	json.Unmarshal(res.events[2].Data, &status)
	if status.Text != "Checking your balance" || status.Tool != "get_balance" {
		t.Errorf("status %s", res.events[2].Data)
	}
	spec := res.spec
	if spec.Speak != "Let me check. Your balance is $1,234.56." || spec.Speak != res.speak {
		t.Errorf("speak %q, deltas %q", spec.Speak, res.speak)
	}
	want := widgets.Stat{Label: "Checking", Value: "$1,234.56", Delta: "+$120"}
	if len(spec.Widgets) != 1 || spec.Widgets[0] != want {
		t.Errorf("widgets %#v", spec.Widgets)
	}
	if w, _ := widgets.Decode(res.events[5].Data); w != want {
		t.Errorf("widget event %s", res.events[5].Data)
	}
	if spec.Follow != "Anything else?" || strings.Join(spec.Suggestions, "|") != "Recent transactions|Savings goal" {
		t.Errorf("follow %q suggestions %q", spec.Follow, spec.Suggestions)
	}
	if spec.Meta.ConversationID != "conv-42" || spec.Meta.TurnID != start.TurnID || spec.Meta.Direction != "ltr" || spec.Meta.Locale != "en" {
		t.Errorf("meta %+v", spec.Meta)
	}
	calls := tools.Calls()
	if len(calls) != 1 || calls[0].Env.UserToken.Reveal() != testToken || calls[0].Env.RequestID != "prod-test-1" ||
		calls[0].Env.Environment.Name != engine.EnvProduction {
		t.Errorf("tool calls %+v", calls)
	}
	if model.Calls() != 2 {
		t.Errorf("model called %d times", model.Calls())
	}
}

func TestTurnRoutesStagingRequestsToStaging(t *testing.T) {
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{
		{call("c1", "get_balance", `{}`)}, enginetest.Text("Done."),
	}}
	tools := bankTools()
	h := newHarness(t, engine.Config{Model: model, Toolset: tools})
	hdr := headers()
	hdr.Set("X-Request-ID", "stg-abc")
	h.turnWith(hdr, `{"transcript":"balance"}`)
	if c := tools.Calls(); len(c) != 1 || c[0].Env.Environment.BackendURL != "http://127.0.0.1:2" {
		t.Fatalf("calls %+v", c)
	}
}

func TestTurnHomeModeHasNoUserMessageAndCarriesTheme(t *testing.T) {
	var seen *engine.ModelRequest
	model := modelFunc(func(ctx context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		seen = req
		return enginetest.Text("Good morning.")
	})
	h := newHarness(t, engine.Config{Model: model})
	res := h.turn(`{"mode":"home"}`)
	if res.spec.Speak != "Good morning." || string(res.spec.Meta.Theme) != `{"primary":"#0B5FFF"}` {
		t.Errorf("spec %+v", res.spec)
	}
	if seen.Mode != engine.ModeHome || len(seen.Messages) != 0 {
		t.Errorf("model saw mode %q and %d messages", seen.Mode, len(seen.Messages))
	}
}

func TestTurnPassesHistoryLocaleAndContextToTheModel(t *testing.T) {
	var seen *engine.ModelRequest
	model := modelFunc(func(ctx context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		seen = req
		return enginetest.Text("مرحبا")
	})
	h := newHarness(t, engine.Config{Model: model})
	hdr := headers()
	hdr.Set("X-Client-Metadata", `{"userId":"u-1"}`)
	res := h.turnWith(hdr, `{"transcript":"رصيدي","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}],
		"context":{"country_code":"sa","screen":"home"},"meta":{"locale":"ar-SA","platform":"ios"}}`)
	if res.spec.Meta.Direction != "rtl" || res.spec.Meta.Locale != "ar-SA" {
		t.Errorf("meta %+v", res.spec.Meta)
	}
	if len(seen.Messages) != 4 || seen.Messages[3].Content != "رصيدي" || seen.Messages[1].Role != engine.RoleAssistant ||
		!seen.Messages[2].IsAppContext() || !strings.Contains(seen.Messages[2].Content, `{"screen":"home","metadata":{"userId":"u-1"}}`) {
		t.Errorf("messages %+v", seen.Messages)
	}
	if seen.Locale != "ar-SA" || seen.Country != "SA" || seen.Screen != "home" || seen.Metadata["userId"] != "u-1" {
		t.Errorf("request %+v", seen)
	}
	if !strings.Contains(seen.Context, "ar-SA") || strings.Contains(seen.Context, `u-1`) {
		t.Errorf("turn context %q", seen.Context)
	}
	if strings.Contains(seen.System, "ar-SA") || strings.Contains(seen.System, "u-1") {
		t.Errorf("the stable system prompt carries facts of the turn: %q", seen.System)
	}
	if res.spec.Meta.ConversationID == "" {
		t.Error("no conversation id")
	}
}

func TestTurnVoiceModeRemovesMarkup(t *testing.T) {
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{
		enginetest.Text("## Balance\n", "Your **balance** is `$5`.\n- ", "Anything else?"),
	}}
	h := newHarness(t, engine.Config{Model: model})
	res := h.turn(`{"transcript":"balance","mode":"voice"}`)
	if res.spec.Speak != "Balance Your balance is $5. Anything else?" || res.speak != res.spec.Speak {
		t.Errorf("speak %q (deltas %q)", res.spec.Speak, res.speak)
	}
}

func TestTurnActionBecomesConfirmWidgetAndDoesNotRun(t *testing.T) {
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{
		{engine.TextEvent("I can send $20.00 to Alex. Please confirm."), call("c1", "transfer", `{"to":"Alex","amount":20}`)},
	}}
	tools := bankTools()
	h := newHarness(t, engine.Config{Model: model, Toolset: tools})
	res := h.turn(`{"transcript":"send 20 dollars to alex","meta":{"locale":"es-MX"}}`)
	if len(tools.Calls()) != 0 {
		t.Fatal("the action ran during the turn")
	}
	if len(res.spec.Widgets) != 1 {
		t.Fatalf("widgets %#v", res.spec.Widgets)
	}
	c, ok := res.spec.Widgets[0].(widgets.Confirm)
	if !ok {
		t.Fatalf("widget %#v", res.spec.Widgets[0])
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Title != "Enviar dinero" || c.Body != "¿Enviar $20.00 a Alex?" || c.ConfirmLabel != "Enviar" {
		t.Errorf("copy %+v", c)
	}
	if c.Execute.Tool != "transfer" || string(c.Execute.Arguments) != `{"amount":20,"to":"Alex"}` || strings.Count(c.Execute.Token, ".") != 2 {
		t.Errorf("execute %+v", c.Execute)
	}
	if until := time.Until(c.ExpiresAt); until < 9*time.Minute || until > 11*time.Minute {
		t.Errorf("expires at %v", c.ExpiresAt)
	}
	if model.Calls() != 1 {
		t.Errorf("the model was asked again after speaking: %d calls", model.Calls())
	}
}

func TestTurnToolCallsRunInParallel(t *testing.T) {
	started := make(chan string, 2)
	both := make(chan struct{})
	wait := func(ctx context.Context, _ *engine.ToolEnv, c engine.ToolCall) (engine.ToolResult, error) {
		started <- c.Name
		select {
		case <-both:
			return engine.ToolResult{Content: json.RawMessage(`{"ok":true}`)}, nil
		case <-time.After(10 * time.Second):
			return engine.ToolResult{}, errors.New("the other tool never started: calls are not parallel")
		}
	}
	tools := &enginetest.FuncToolset{
		ToolList: []engine.Tool{{Name: "a"}, {Name: "b"}},
		Funcs:    map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){"a": wait, "b": wait},
	}
	go func() { <-started; <-started; close(both) }()
	var results []engine.Message
	model := modelFunc(func(ctx context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		if enginetest.StepOf(req.Messages) == 0 {
			return []engine.ModelEvent{call("1", "a", `{}`), call("2", "b", `{}`)}
		}
		results = req.Messages[len(req.Messages)-2:]
		return enginetest.Text("Both done.")
	})
	h := newHarness(t, engine.Config{Model: model, Toolset: tools})
	h.turn(`{"transcript":"go"}`)
	if len(results) != 2 || results[0].ToolCallID != "1" || results[1].ToolCallID != "2" || results[0].IsError || results[1].IsError {
		t.Fatalf("results %+v", results)
	}
}

func TestTurnRejectsInvalidToolArgumentsAndWidgets(t *testing.T) {
	var results []engine.Message
	model := modelFunc(func(ctx context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		if enginetest.StepOf(req.Messages) == 0 {
			return []engine.ModelEvent{
				call("1", "get_balance", `{"account":"crypto"}`),
				call("2", widgets.ToolShowProgress, `{"label":"Goal","value":2}`),
				call("3", "delete_everything", `{}`),
				call("4", "transfer", `{"to":"Alex"}`),
			}
		}
		results = req.Messages[len(req.Messages)-4:]
		return enginetest.Text("Sorry.")
	})
	tools := bankTools()
	h := newHarness(t, engine.Config{Model: model, Toolset: tools})
	res := h.turn(`{"transcript":"go"}`)
	if len(tools.Calls()) != 0 {
		t.Errorf("a tool ran with invalid arguments: %+v", tools.Calls())
	}
	if len(res.spec.Widgets) != 0 {
		t.Errorf("an invalid widget was sent: %#v", res.spec.Widgets)
	}
	wants := []string{`/properties/account: enum: the value does not equal any of: [checking savings]`, `value is not a number from 0 to 1`, `unknown_tool`, `missing properties: [\"amount\"]`}
	for i, want := range wants {
		if !results[i].IsError || !strings.Contains(results[i].Content, want) {
			t.Errorf("result %d = %+v, want an error containing %q", i, results[i], want)
		}
	}
	if !strings.Contains(h.logs.String(), "dropped an invalid widget") {
		t.Error("the dropped widget was not logged")
	}
}

func TestTurnModelFailureBecomesErrorThenDone(t *testing.T) {
	model := modelSeq(func(yield func(engine.ModelEvent, error) bool) {
		if yield(engine.TextEvent("Your balance is"), nil) {
			yield(engine.ModelEvent{}, errors.New("upstream said 500 with key sk-secret"))
		}
	})
	h := newHarness(t, engine.Config{Model: model})
	res := h.turn(`{"transcript":"balance","meta":{"locale":"es"}}`)
	if got := res.names(); got != "start,speak,error,speak,done" {
		t.Fatalf("events %s", got)
	}
	var ev struct {
		Code      string
		Message   string
		Retryable bool
	}
	json.Unmarshal(res.events[2].Data, &ev)
	if ev.Code != engine.CodeModelError || !ev.Retryable || strings.Contains(ev.Message, "sk-secret") {
		t.Errorf("error event %s", res.events[2].Data)
	}
	// The apology is spoken as a delta after the cut-off answer, and done says the same.
	if res.spec.Meta.Error != engine.CodeModelError || res.spec.Speak != "Your balance is… Lo siento, algo salió mal. Inténtalo de nuevo." ||
		res.speak != res.spec.Speak || len(res.spec.Widgets) != 0 {
		t.Errorf("deltas %q, done %+v", res.speak, res.spec)
	}
}

func TestTurnToolFailureReachesTheModelNotTheClient(t *testing.T) {
	var result engine.Message
	tools := &enginetest.FuncToolset{
		ToolList: []engine.Tool{{Name: "slow", Timeout: 20 * time.Millisecond}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"slow": func(ctx context.Context, _ *engine.ToolEnv, _ engine.ToolCall) (engine.ToolResult, error) {
				<-ctx.Done()
				return engine.ToolResult{}, ctx.Err()
			},
		},
	}
	model := modelFunc(func(ctx context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		if enginetest.StepOf(req.Messages) == 0 {
			return []engine.ModelEvent{call("1", "slow", `{}`)}
		}
		result = req.Messages[len(req.Messages)-1]
		return enginetest.Text("The bank is not answering.")
	})
	h := newHarness(t, engine.Config{Model: model, Toolset: tools})
	res := h.turn(`{"transcript":"go"}`)
	if !result.IsError || !strings.Contains(result.Content, "did not answer within 20ms") {
		t.Errorf("result %+v", result)
	}
	if res.spec.Meta.Error != "" || res.spec.Speak != "The bank is not answering." {
		t.Errorf("spec %+v", res.spec)
	}
}

func TestTurnStepLimit(t *testing.T) {
	model := modelFunc(func(ctx context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		return []engine.ModelEvent{call(fmt.Sprint(len(req.Messages)), "get_balance", `{}`)}
	})
	tn := testTenant()
	tn.Limits.MaxSteps = 3
	h := newHarness(t, engine.Config{Model: model, Toolset: bankTools()}, tn)
	res := h.turn(`{"transcript":"loop"}`)
	if res.spec.Meta.Error != engine.CodeStepLimit {
		t.Fatalf("spec %+v, events %s", res.spec, res.names())
	}
}

// TestTurnPingsWhileSilent runs a turn whose model thinks for 40 seconds, on a fake clock: the
// stream carries a ping every 15 seconds of silence (the default) before the first speech.
func TestTurnPingsWhileSilent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		model := &enginetest.ScriptedModel{FirstDelay: 40 * time.Second, Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}
		rec := serveTurn(t, engine.Config{Model: model}, t.Context(), `{"transcript":"hi"}`)
		events, err := enginetest.ReadEvents(rec.Body)
		if err != nil || len(events) < 2 {
			t.Fatalf("%v: %+v", err, events)
		}
		if events[1].Name != engine.EventSpeak || events[1].Pings != 2 {
			t.Fatalf("want two pings before the first speak: %+v", events)
		}
	})
}

// serveTurn runs a turn of the test tenant through the engine's handler into a recorder, with
// no server in between, so that it can run on synctest's fake clock.
func serveTurn(t *testing.T, cfg engine.Config, ctx context.Context, body string) *httptest.ResponseRecorder {
	t.Helper()
	tenants, err := engine.NewStaticTenants(testTenant())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tenants, cfg.SigningKey = tenants, testSigningKey
	cfg.Logger = enginetest.DebugLogger()
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, engine.PathTurn, strings.NewReader(body))
	req.Header = headers()
	rec := httptest.NewRecorder()
	e.TurnHandler().ServeHTTP(rec, req)
	return rec
}

func TestTurnDisconnectCancelsModelAndTools(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	toolCancelled := make(chan struct{})
	tools := &enginetest.FuncToolset{
		ToolList: []engine.Tool{{Name: "slow"}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"slow": func(ctx context.Context, _ *engine.ToolEnv, _ engine.ToolCall) (engine.ToolResult, error) {
				<-ctx.Done()
				close(toolCancelled)
				return engine.ToolResult{}, ctx.Err()
			},
		},
	}
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{{engine.TextEvent("Checking."), call("1", "slow", `{}`)}}}
	h := newHarness(t, engine.Config{Model: model, Toolset: tools})

	ctx, cancel := context.WithCancel(t.Context())
	resp := h.doStreaming(ctx, http.MethodPost, "/engine", headers(), `{"transcript":"go"}`)
	buf := make([]byte, 4096)
	var got string
	for !strings.Contains(got, "event: status") {
		n, err := resp.Body.Read(buf)
		if err != nil {
			t.Fatalf("stream ended before the tool ran: %v", err)
		}
		got += string(buf[:n])
	}
	cancel()
	resp.Body.Close()
	select {
	case <-toolCancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the tool call was not cancelled when the client went away")
	}
	h.srv.Close() // waits for the handler to return
}

// TestTurnDisconnectStopsAStreamingModel: a client that goes away after a tenth of a second
// of a long answer stops the model, and the stream with it.
func TestTurnDisconnectStopsAStreamingModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		words := make([]string, 400)
		for i := range words {
			words[i] = "word "
		}
		model := &enginetest.ScriptedModel{Delay: 5 * time.Millisecond, Steps: [][]engine.ModelEvent{enginetest.Text(words...)}}
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(100*time.Millisecond, cancel)
		rec := serveTurn(t, engine.Config{Model: model}, ctx, `{"transcript":"go"}`)
		if model.Cancelled() != 1 {
			t.Fatal("the model kept streaming after the client went away")
		}
		if n := strings.Count(rec.Body.String(), "event: speak"); n == 0 || n > 25 {
			t.Errorf("%d speak events after the client left at 100 ms, 5 ms apart", n)
		}
	})
}

// modelFunc is a Model whose completion is computed from the request.
type modelFunc = enginetest.ModelFunc

// modelSeq is a Model that plays the same sequence for every completion.
type modelSeq func(yield func(engine.ModelEvent, error) bool)

func (s modelSeq) Stream(context.Context, *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	return iter.Seq2[engine.ModelEvent, error](s)
}

func TestTurnSurvivesPanickingModelAndTools(t *testing.T) {
	var result engine.Message
	tools := &enginetest.FuncToolset{
		ToolList: []engine.Tool{{Name: "boom"}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"boom": func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error) {
				panic("tool exploded")
			},
		},
	}
	model := modelFunc(func(ctx context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		if enginetest.StepOf(req.Messages) == 0 {
			return []engine.ModelEvent{call("1", "boom", `{}`)}
		}
		result = req.Messages[len(req.Messages)-1]
		return enginetest.Text("That did not work.")
	})
	h := newHarness(t, engine.Config{Model: model, Toolset: tools})
	res := h.turn(`{"transcript":"go"}`)
	if !result.IsError || !strings.Contains(result.Content, "tool_unavailable") || res.spec.Speak != "That did not work." {
		t.Fatalf("result %+v, spec %+v", result, res.spec)
	}

	panicky := modelSeq(func(yield func(engine.ModelEvent, error) bool) {
		yield(engine.TextEvent("Hello"), nil)
		panic("model exploded")
	})
	h = newHarness(t, engine.Config{Model: panicky})
	res = h.turn(`{"transcript":"go"}`)
	if res.names() != "start,speak,error,speak,done" || res.spec.Meta.Error != engine.CodeInternal || res.speak != res.spec.Speak {
		t.Fatalf("events %s, spec %+v", res.names(), res.spec)
	}
	if !strings.Contains(h.logs.String(), "turn panicked") {
		t.Error("the panic was not logged")
	}
}
