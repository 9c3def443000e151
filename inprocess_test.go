package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

// inProcess collects the events of an in-process turn, or its problem.
func inProcess(t *testing.T, e *engine.Engine, c *engine.Caller, in *engine.TurnInput) ([]engine.Event, *engine.Problem) {
	t.Helper()
	var evs []engine.Event
	for ev, err := range e.Turn(t.Context(), c, in) {
		var failed *engine.TurnError
		if errors.As(err, &failed) {
			continue // after done, the turn's failure: TestTurnInProcessFailureIsAnError
		}
		if err != nil {
			var p *engine.Problem
			if !errors.As(err, &p) {
				t.Fatalf("the turn failed with %T %v, not a problem", err, err)
			}
			if len(evs) > 0 {
				t.Fatalf("a problem after %d events", len(evs))
			}
			return nil, p
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// TestTurnInProcessIsTheStream: a turn with a tool, a widget, an action and a failure comes
// out of Engine.Turn as the same events, in the same order, with the same data as the turn
// stream of POST /engine.
func TestTurnInProcessIsTheStream(t *testing.T) {
	tools := &enginetest.FuncToolset{
		ToolList: []engine.Tool{{Name: "get_balance", Status: "Checking your balance"},
			{Name: "transfer", Action: true, Parameters: json.RawMessage(`{"type":"object"}`)}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"get_balance": func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error) {
				return engine.ToolResult{Content: json.RawMessage(`{"balance":12.5}`)}, nil
			},
		},
	}
	for name, m := range map[string]engine.Model{
		"tool and widget": &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{
			{engine.TextEvent("Let me look."), call("1", "get_balance", `{}`)},
			{engine.TextEvent("You have "), engine.TextEvent("$12.50 <now>."),
				call("2", "show_stat", `{"label":"Checking","value":"$12.50"}`)},
		}},
		"action": &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{
			{engine.TextEvent("Sending."), call("1", "transfer", `{"amount":20,"to":"Alex"}`)},
		}},
		// A model that fails mid-answer: the error event, the apology and done.
		"model error": modelSeq(func(yield func(engine.ModelEvent, error) bool) {
			if yield(engine.TextEvent("Half a sen"), nil) {
				yield(engine.ModelEvent{}, errors.New("the model's server went away"))
			}
		}),
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, engine.Config{Model: m, Toolset: tools})
			res := h.turn(`{"transcript":"balance?","context":{"sessionId":"conv-1"}}`)
			evs, p := inProcess(t, h.engine, &engine.Caller{EngineKey: testKey, UserToken: testToken},
				&engine.TurnInput{Transcript: "balance?", ConversationID: "conv-1"})
			if p != nil {
				t.Fatal(p)
			}
			if len(evs) != len(res.events) {
				t.Fatalf("in-process %d events, stream %d (%s)", len(evs), len(res.events), res.names())
			}
			// What is new in every turn: its id, and a confirm's id, token and expiry.
			fresh := regexp.MustCompile(`"(turnId|id|token|expiresAt)":"[^"]*"`)
			for i, ev := range evs {
				data, err := ev.Data()
				if err != nil {
					t.Fatal(err)
				}
				got := fresh.ReplaceAllString(string(data), `"$1":"…"`)
				want := fresh.ReplaceAllString(string(res.events[i].Data), `"$1":"…"`)
				if ev.Type != res.events[i].Name || got != want {
					t.Errorf("event %d: in-process %s %s\n stream %s %s", i+1, ev.Type, data, res.events[i].Name, want)
				}
			}
			last := evs[len(evs)-1]
			if last.Type != engine.EventDone || last.Spec == nil || last.Spec.Meta.ConversationID != "conv-1" ||
				last.Spec.Meta.TurnID != evs[0].TurnID {
				t.Errorf("the last event is %+v", last)
			}
			if name == "action" && !strings.Contains(res.names(), "widget") {
				t.Errorf("the action turn drew no confirm: %s", res.names())
			}
			line, _ := json.Marshal(last)
			if !strings.HasPrefix(string(line), `{"event":"done","data":{"speak":`) {
				t.Errorf("the done event as JSON: %s", line)
			}
		})
	}
}

// TestTurnInProcessFailureIsAnError: a turn whose model fails, at once or mid-answer, yields
// the events a client sees (the error event, the apology, done) and then, last, the turn's
// failure as an error a host can test with errors.As; a turn that succeeds yields no error.
func TestTurnInProcessFailureIsAnError(t *testing.T) {
	for name, m := range map[string]engine.Model{
		"model fails at once": modelSeq(func(yield func(engine.ModelEvent, error) bool) {
			yield(engine.ModelEvent{}, errors.New("dial tcp: lookup models.invalid: no such host"))
		}),
		"stream breaks mid-answer": modelSeq(func(yield func(engine.ModelEvent, error) bool) {
			if yield(engine.TextEvent("Half a sen"), nil) {
				yield(engine.ModelEvent{}, errors.New("the model's server went away"))
			}
		}),
		"answers": &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, engine.Config{Model: m})
			var (
				types []string
				errs  []error
			)
			var event *engine.TurnError
			caller := &engine.Caller{EngineKey: testKey, UserToken: testToken, RequestID: "prod-failing-turn-1"}
			for ev, err := range h.engine.Turn(t.Context(), caller, &engine.TurnInput{Transcript: "hi"}) {
				if err != nil {
					errs = append(errs, err)
					continue
				}
				if len(errs) > 0 {
					t.Fatalf("an event after the error: %s", ev.Type)
				}
				if ev.Type == engine.EventError {
					event = ev.Error
				}
				types = append(types, string(ev.Type))
			}
			seq := strings.Join(types, " ")
			if name == "answers" {
				if len(errs) != 0 || !strings.HasSuffix(seq, "done") {
					t.Fatalf("events %s, errors %v", seq, errs)
				}
				return
			}
			if !strings.HasPrefix(seq, "start") || !strings.Contains(seq, "error speak") || !strings.HasSuffix(seq, "done") {
				t.Errorf("events %s: want start, the error event, the apology and done", seq)
			}
			if len(errs) != 1 {
				t.Fatalf("%d errors, want one after done: %v", len(errs), errs)
			}
			var failed *engine.TurnError
			if !errors.As(errs[0], &failed) || failed.Code != engine.CodeModelError || !failed.Retryable || failed.Message == "" {
				t.Fatalf("the error is %T %v, want a retryable *engine.TurnError model_error", errs[0], errs[0])
			}
			// The error, and the error event's data, name the request, as a Problem does.
			if failed.RequestID != "prod-failing-turn-1" || event == nil || event.RequestID != failed.RequestID {
				t.Errorf("the turn error's request id is %q (the event's %+v), want the caller's", failed.RequestID, event)
			}
			var p *engine.Problem
			if errors.As(errs[0], &p) {
				t.Errorf("a failed turn's error is also a *Problem, which means it did not start")
			}
		})
	}
}

// TestTurnInProcessProblems: what the handler would refuse, Engine.Turn refuses with the same
// problem, before any event.
func TestTurnInProcessProblems(t *testing.T) {
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}
	h := newHarness(t, engine.Config{Model: model})
	// call is what a case edits: the caller and the turn's input.
	type call struct {
		*engine.Caller
		*engine.TurnInput
	}
	cases := map[string]struct {
		edit        func(*call)
		status      int
		code, field string
	}{
		"unknown key":          {func(in *call) { in.Caller.EngineKey = "pk_nobody" }, 401, engine.CodeUnknownEngineKey, ""},
		"no key":               {func(in *call) { in.Caller.EngineKey = "" }, 401, engine.CodeUnknownEngineKey, ""},
		"no token":             {func(in *call) { in.Caller.UserToken = "" }, 401, engine.CodeMissingUserToken, ""},
		"huge token":           {func(in *call) { in.Caller.UserToken = strings.Repeat("t", 9000) }, 401, engine.CodeMissingUserToken, ""},
		"unknown environment":  {func(in *call) { in.Caller.Environment = "dev" }, 403, engine.CodeEnvironmentUnavailable, ""},
		"bad request id":       {func(in *call) { in.Caller.RequestID = "a b" }, 400, engine.CodeInvalidRequestID, ""},
		"no transcript":        {func(in *call) { in.Transcript = "" }, 400, engine.CodeInvalidRequest, "transcript"},
		"long transcript":      {func(in *call) { in.Transcript = strings.Repeat("a", 8001) }, 400, engine.CodeInvalidRequest, "transcript"},
		"bad mode":             {func(in *call) { in.Mode = "chat" }, 400, engine.CodeInvalidRequest, "mode"},
		"bad locale":           {func(in *call) { in.Locale = "not a locale" }, 400, engine.CodeInvalidRequest, "meta.locale"},
		"bad history role":     {func(in *call) { in.Messages = []engine.Message{{Role: engine.RoleTool, Content: "x"}} }, 400, engine.CodeInvalidRequest, "messages[0].role"},
		"audio and transcript": {func(in *call) { in.Audio = []byte("RIFF") }, 400, engine.CodeInvalidRequest, "audio"},
		"audio, no transcriber": {func(in *call) { in.Transcript, in.Audio = "", []byte("RIFF") }, 503,
			engine.CodeTranscriberUnavailable, ""},
		"unknown session": {func(in *call) { in.Caller.SessionID = "no-such-session" }, 401, engine.CodeInvalidSession, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := &call{&engine.Caller{EngineKey: testKey, UserToken: testToken}, &engine.TurnInput{Transcript: "hello"}}
			tc.edit(in)
			evs, p := inProcess(t, h.engine, in.Caller, in.TurnInput)
			if p == nil {
				t.Fatalf("no problem; %d events", len(evs))
			}
			if p.Status != tc.status || p.Code != tc.code || p.Field != tc.field {
				t.Errorf("got %d %s field %q (%s); want %d %s field %q", p.Status, p.Code, p.Field, p.Detail, tc.status, tc.code, tc.field)
			}
			if strings.Contains(p.Error(), testToken) {
				t.Errorf("the problem holds the user's token: %v", p)
			}
		})
	}
	if model.Calls() != 0 {
		t.Errorf("the model ran %d times for turns that were refused", model.Calls())
	}
	if evs, p := inProcess(t, h.engine, &engine.Caller{EngineKey: testKey, UserToken: testToken}, &engine.TurnInput{Transcript: "hello"}); p != nil || len(evs) == 0 || evs[len(evs)-1].Type != engine.EventDone {
		t.Errorf("a good input: %v, %d events", p, len(evs))
	}
}

// TestTurnInProcessBreakStopsTheTurn: leaving the loop after the first delta stops the
// model and the tools running for the turn, as a client that disconnects does.
func TestTurnInProcessBreakStopsTheTurn(t *testing.T) {
	words := make([]engine.ModelEvent, 200)
	for i := range words {
		words[i] = engine.TextEvent("word ")
	}
	model := &enginetest.ScriptedModel{Delay: 2 * time.Millisecond, Steps: [][]engine.ModelEvent{words}}
	h := newHarness(t, engine.Config{Model: model})
	n := 0
	for ev, err := range h.engine.Turn(t.Context(), &engine.Caller{EngineKey: testKey, UserToken: testToken}, &engine.TurnInput{Transcript: "talk"}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if ev.Type == engine.EventSpeak {
			break
		}
	}
	if n != 2 {
		t.Errorf("%d events before leaving the loop", n)
	}
	if model.Cancelled() != 1 {
		t.Errorf("the model was not cancelled when the loop was left (%d cancelled)", model.Cancelled())
	}

	// A slow tool is cancelled too, and the turn's slot is given back: another turn runs.
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
	model = &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{{call("1", "slow", `{}`)}}}
	h = newHarness(t, engine.Config{Model: model, Toolset: tools, MaxConcurrentTurns: 1})
	go func() {
		for ev := range h.engine.Turn(t.Context(), &engine.Caller{EngineKey: testKey, UserToken: testToken}, &engine.TurnInput{Transcript: "go"}) {
			if ev.Type == engine.EventStatus {
				break
			}
		}
	}()
	select {
	case <-toolCancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the tool was not cancelled when the loop was left")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		model.Steps = [][]engine.ModelEvent{enginetest.Text("Again.")}
		evs, p := inProcess(t, h.engine, &engine.Caller{EngineKey: testKey, UserToken: testToken}, &engine.TurnInput{Transcript: "again"})
		if p == nil && evs[len(evs)-1].Type == engine.EventDone {
			break
		}
		if p == nil || p.Code != engine.CodeOverloaded || time.Now().After(deadline) {
			t.Fatalf("the next turn: %v", p)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAdmissionAdmitsOneTurn: Engine.Admit takes a turn slot before the turn, so that a full
// engine refuses the next admission at once (503 overloaded); the turn given the admission takes
// no slot of its own and runs; an admission admits one turn, and a released one none.
func TestAdmissionAdmitsOneTurn(t *testing.T) {
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}
	h := newHarness(t, engine.Config{Model: model, MaxConcurrentTurns: 1})
	caller := &engine.Caller{EngineKey: testKey, UserToken: testToken}
	ctx := t.Context()
	turn := func(a *engine.Admission) error {
		var last engine.Event
		for ev, err := range h.engine.Turn(ctx, caller, &engine.TurnInput{Transcript: "hi", Admission: a}) {
			if err != nil {
				return err
			}
			last = ev
		}
		if last.Type != engine.EventDone || last.Spec.Speak != "Hi." {
			t.Errorf("the admitted turn ended with %+v", last)
		}
		return nil
	}

	a, err := h.engine.Admit(ctx, caller, engine.Work{Kind: engine.WorkTurn})
	if err != nil {
		t.Fatal(err)
	}
	var p *engine.Problem
	if _, err := h.engine.Admit(ctx, caller, engine.Work{Kind: engine.WorkTurn}); !errors.As(err, &p) || p.Code != engine.CodeOverloaded {
		t.Fatalf("a second admission while the only slot is held: %v", err)
	}
	if err := turn(a); err != nil {
		t.Fatalf("the admitted turn, with every slot taken by its admission: %v", err)
	}
	if err := turn(a); !errors.As(err, &p) || p.Code != engine.CodeInternal {
		t.Errorf("a second turn on one admission: %v", err)
	}
	a.Release()
	b, err := h.engine.Admit(ctx, caller, engine.Work{Kind: engine.WorkTurn})
	if err != nil {
		t.Fatalf("an admission once the first was released: %v", err)
	}
	b.Release()
	if err := turn(b); !errors.As(err, &p) || p.Code != engine.CodeInternal {
		t.Errorf("a turn on a released admission: %v", err)
	}
}
