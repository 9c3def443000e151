package enginetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/widgets"
)

// conformanceLimit bounds each completion of [TestModel].
const conformanceLimit = 20 * time.Second

// TestModel checks that m keeps the contract of [engine.Model] that the engine relies on, as
// testing/slogtest does for slog handlers. It runs m through a few turns for tenant, with a
// data tool (get_balance), an action tool (transfer) and the engine's UI tools, and checks that:
//
//   - every completion is text deltas and complete tool calls (a known tool's name, a JSON object
//     of arguments, distinct IDs), then exactly one finish event, and nothing after it;
//   - the tool loop ends: fed the results of its calls, the model answers within six steps;
//   - a cancelled context ends the completion promptly, with ctx's error unless it had already
//     finished; leaving the range early is respected (no further yield);
//   - completions run concurrently, and the request is never modified.
//
// tenant is what the requests are for: a model that reads its configuration from the tenant,
// such as the intent model, needs its own. The user asks for the balance in most turns; a model
// behind a server can be tested against a [ReplayServer] with [DemoRoute].
func TestModel(t *testing.T, m engine.Model, tenant *engine.Tenant) {
	t.Helper()
	ask := func(text string) *engine.ModelRequest {
		req := &engine.ModelRequest{
			Tenant: tenant, Environment: engine.EnvProduction, Mode: engine.ModeText, Locale: "en",
			System:  "You are a bank's assistant. Rules of this conversation: put figures in widgets.",
			Context: "About this turn:\n- Answer in the language of the locale en.\n",
			Tools:   conformanceTools(),
		}
		if text != "" {
			req.Messages = []engine.Message{{Role: engine.RoleUser, Content: text}}
		} else {
			req.Mode = engine.ModeHome
		}
		return req
	}

	t.Run("turn", func(t *testing.T) {
		req := ask("what is my balance")
		c := complete(t, m, req)
		if len(c.calls) == 0 && c.text == "" && c.finish != engine.FinishRefused {
			t.Error("the completion has neither text nor tool calls")
		}
	})
	t.Run("tool loop", func(t *testing.T) {
		for _, text := range []string{"what is my balance", "send 20 dollars to Alex", ""} {
			runToolLoop(t, m, ask(text))
		}
	})
	t.Run("request untouched", func(t *testing.T) {
		req := ask("what is my balance")
		before := cloneRequest(req)
		complete(t, m, req)
		if !reflect.DeepEqual(req, before) {
			t.Error("Stream modified the request")
		}
	})
	t.Run("cancelled before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c := collectWithin(t, ctx, m, ask("what is my balance"))
		if !errors.Is(c.err, context.Canceled) {
			t.Errorf("a cancelled completion ended with %v, want context.Canceled", c.err)
		}
	})
	t.Run("cancelled during", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := collectWithin(t, ctx, m, ask("what is my balance"), func(int) { cancel() })
		if c.err != nil && !errors.Is(c.err, context.Canceled) {
			t.Errorf("a cancelled completion ended with %v, want context.Canceled", c.err)
		}
	})
	t.Run("stop early", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), conformanceLimit)
		defer cancel()
		defer func() {
			if v := recover(); v != nil {
				t.Errorf("the model yielded after the range stopped: %v", v)
			}
		}()
		for range m.Stream(ctx, ask("what is my balance")) {
			break // the range-over-func machinery panics if the model yields again
		}
		cctx, ccancel := context.WithCancel(ctx)
		defer ccancel()
		for range m.Stream(cctx, ask("what is my balance")) {
			ccancel() // a client that goes away: cancelled, and no longer listening
			break
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { complete(t, m, ask("what is my balance")) })
		}
		wg.Wait()
	})
}

func conformanceTools() []engine.ToolSpec {
	specs := []engine.ToolSpec{
		{Name: "get_balance", Description: "Get the balance of one of the user's accounts.", Kind: engine.ToolData,
			Parameters: json.RawMessage(`{"type":"object","properties":{"account":{"type":"string","enum":["checking","savings"]}},"additionalProperties":false}`)},
		{Name: "transfer", Description: "Send money to a saved payee. Runs only after the user confirms it.", Kind: engine.ToolAction,
			Parameters: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number","exclusiveMinimum":0},"to":{"type":"string"}},"required":["amount","to"],"additionalProperties":false}`)},
		{Name: "get_savings_goal", Description: "Get the user's savings goal.", Kind: engine.ToolData,
			Parameters: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)},
		{Name: "list_transactions", Description: "List recent transactions.", Kind: engine.ToolData,
			Parameters: json.RawMessage(`{"type":"object","properties":{"limit":{"type":"integer"}},"additionalProperties":false}`)},
	}
	for _, ui := range widgets.UITools() {
		specs = append(specs, engine.ToolSpec{Name: ui.Name, Description: ui.Description, Parameters: ui.Parameters, Kind: engine.ToolUI})
	}
	return specs
}

// Results the conformance turns feed back for data tools.
var conformanceResults = map[string]string{
	"get_balance":       `{"account":"checking","name":"Everyday Checking","currency":"USD","balance":1234.56,"formatted":"$1,234.56","change":"+$120.00 this month","change_amount":"+$120.00"}`,
	"get_savings_goal":  `{"name":"Trip to Lisbon","target":2000,"saved":1300,"progress":0.65,"formatted_saved":"$1,300.00","formatted_target":"$2,000.00","percent":"65%"}`,
	"list_transactions": `{"transactions":[{"id":"tx_1","date":"2026-11-20","merchant":"Blue Bottle Coffee","category":"Coffee","amount":-4.5,"formatted":"-$4.50"}]}`,
}

// runToolLoop answers the model's calls as the engine would until it stops asking for data.
func runToolLoop(t *testing.T, m engine.Model, req *engine.ModelRequest) {
	t.Helper()
	for step := 0; step < 6; step++ {
		c := complete(t, m, req)
		if t.Failed() {
			return
		}
		data := false
		var results []engine.Message
		for _, call := range c.calls {
			content, isError := `{"shown":true}`, false
			switch {
			case widgets.IsUITool(call.Name):
			case call.Name == "transfer":
				content = `{"status":"confirmation_requested","note":"The user will be asked to confirm on their device."}`
			case conformanceResults[call.Name] != "":
				content, data = conformanceResults[call.Name], true
			default:
				content, isError = `{"error":"unknown_tool"}`, true
			}
			results = append(results, engine.Message{Role: engine.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: content, IsError: isError})
		}
		if len(c.calls) == 0 || (!data && c.text != "") {
			return
		}
		req.Messages = append(req.Messages, engine.Message{Role: engine.RoleAssistant, Content: c.text, ToolCalls: c.calls})
		req.Messages = append(req.Messages, results...)
	}
	t.Errorf("the model still asked for tools after 6 steps")
}

type completion struct {
	text   string
	calls  []engine.ToolCall
	finish engine.FinishReason
	err    error
}

// complete runs one completion and checks its shape.
func complete(t *testing.T, m engine.Model, req *engine.ModelRequest) completion {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), conformanceLimit)
	defer cancel()
	c := collectWithin(t, ctx, m, req)
	if c.err != nil {
		t.Errorf("completion failed: %v", c.err)
	}
	return c
}

// collectWithin ranges over one completion, calling each after every event, and checks that
// it ends in time and that every event is well formed.
func collectWithin(t *testing.T, ctx context.Context, m engine.Model, req *engine.ModelRequest, each ...func(int)) completion {
	t.Helper()
	known := map[string]bool{}
	for _, s := range req.Tools {
		known[s.Name] = true
	}
	done := make(chan completion, 1)
	var problems []string
	go func() {
		var c completion
		finished, n := false, 0
		ids := map[string]bool{}
		for ev, err := range m.Stream(ctx, req) {
			n++
			if finished || c.err != nil {
				problems = append(problems, "an event came after the finish or the error")
			}
			for _, f := range each {
				f(n)
			}
			if err != nil {
				c.err = err
				continue
			}
			switch ev.Kind {
			case engine.EventText:
				c.text += ev.Text
			case engine.EventToolCall:
				call := ev.ToolCall
				var args map[string]any
				switch {
				case !known[call.Name]:
					problems = append(problems, fmt.Sprintf("a call of %q, which the request does not offer", call.Name))
				case len(call.Arguments) > 0 && json.Unmarshal(call.Arguments, &args) != nil:
					problems = append(problems, fmt.Sprintf("the arguments of %s are not a JSON object: %s", call.Name, call.Arguments))
				case call.ID != "" && ids[call.ID]:
					problems = append(problems, fmt.Sprintf("two calls with the ID %q", call.ID))
				}
				ids[call.ID] = true
				c.calls = append(c.calls, call)
			case engine.EventFinish:
				finished = true
				c.finish = ev.Finish
			default:
				problems = append(problems, fmt.Sprintf("an event of kind %d", ev.Kind))
			}
		}
		if !finished && c.err == nil {
			problems = append(problems, "the completion ended without a finish event or an error")
		}
		done <- c
	}()
	select {
	case c := <-done:
		for _, p := range problems {
			t.Error(p)
		}
		return c
	case <-time.After(conformanceLimit + 5*time.Second):
		t.Error("the completion did not end after its context did")
		return completion{err: ctx.Err()}
	}
}

func cloneRequest(r *engine.ModelRequest) *engine.ModelRequest {
	c := *r
	c.Messages = append([]engine.Message(nil), r.Messages...)
	c.Tools = append([]engine.ToolSpec(nil), r.Tools...)
	return &c
}
