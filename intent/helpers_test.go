package intent

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/widgets"
	"sigs.k8s.io/yaml"
)

// Results of the demo bank's tools, shaped as docs/demobank-contract.md has them.
const (
	balanceResult      = `{"account":"checking","name":"Everyday Checking","currency":"USD","balance":1234.56,"formatted":"$1,234.56","change":"+$120.00 this month","change_amount":"+$120.00"}`
	savingsResult      = `{"account":"savings","name":"Rainy Day Savings","currency":"USD","balance":5000,"formatted":"$5,000.00","change":"+$50.00 this month","change_amount":"+$50.00"}`
	goalResult         = `{"name":"Trip to Lisbon","target":2000,"saved":1300,"progress":0.65,"formatted_saved":"$1,300.00","formatted_target":"$2,000.00","percent":"65%"}`
	transactionsResult = `{"transactions":[
		{"id":"tx_1","date":"2026-11-20","merchant":"Blue Bottle Coffee","category":"Coffee","amount":-4.5,"formatted":"-$4.50"},
		{"id":"tx_2","date":"2026-11-19","merchant":"Whole Foods","category":"Groceries","amount":-82.1,"formatted":"-$82.10"},
		{"id":"tx_3","date":"2026-11-18","merchant":"Payroll","category":"Income","amount":2400,"formatted":"+$2,400.00"},
		{"id":"tx_4","date":"2026-11-17","merchant":"Lyft","category":"Transport","amount":-18.25,"formatted":"-$18.25"},
		{"id":"tx_5","date":"2026-11-16","merchant":"Netflix","category":"Subscriptions","amount":-15.99,"formatted":"-$15.99"},
		{"id":"tx_6","date":"2026-11-15","merchant":"Shell","category":"Fuel","amount":-40,"formatted":"-$40.00"}]}`
	unavailableResult = `{"error":"tool_unavailable","message":"the backend did not answer"}`
)

// fixedNow is the clock of the tests: Friday 20 November 2026, 9:30 in New York.
func fixedNow() time.Time {
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		loc = time.FixedZone("EST", -5*3600)
	}
	return time.Date(2026, time.November, 20, 9, 30, 0, 0, loc)
}

// demoIntents reads examples/demobank/intents.yaml as the JSON a tenant file would hold.
func demoIntents(t testing.TB) json.RawMessage {
	t.Helper()
	y, err := os.ReadFile("../examples/demobank/intents.yaml")
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatalf("converting intents.yaml: %v", err)
	}
	return j
}

// demoTenant is the demo bank tenant with its intents and its transfer action.
func demoTenant(t testing.TB) *engine.Tenant {
	return &engine.Tenant{
		Key:     "demo",
		Name:    "Demo Bank",
		Locale:  "en",
		Intents: demoIntents(t),
		Actions: map[string]*engine.Action{"transfer": {Confirm: map[string]engine.ConfirmCopy{
			"en": {Title: "Send money", Body: "Send {amount} to {to}?", ConfirmLabel: "Send", CancelLabel: "Cancel"},
		}}},
	}
}

// demoTools are the tools the engine offers the demo tenant's model: its data tools, its
// action and the UI tools.
func demoTools() []engine.ToolSpec {
	tools := []engine.ToolSpec{
		{Name: "get_balance", Kind: engine.ToolData},
		{Name: "list_transactions", Kind: engine.ToolData},
		{Name: "get_savings_goal", Kind: engine.ToolData},
		{Name: "transfer", Kind: engine.ToolAction},
	}
	for _, u := range widgets.UITools() {
		tools = append(tools, engine.ToolSpec{Name: u.Name, Description: u.Description, Parameters: u.Parameters, Kind: engine.ToolUI})
	}
	return tools
}

// backend answers data tool calls like the demo bank.
type backend func(c engine.ToolCall) (content string, isError bool)

func demoBackend(c engine.ToolCall) (string, bool) {
	switch c.Name {
	case "get_balance":
		var args struct{ Account string }
		_ = json.Unmarshal(c.Arguments, &args)
		if args.Account == "savings" {
			return savingsResult, false
		}
		return balanceResult, false
	case "list_transactions":
		return transactionsResult, false
	case "get_savings_goal":
		return goalResult, false
	}
	return `{"error":"not_found","message":"no such tool"}`, true
}

// completion is what one call of Stream produced.
type completion struct {
	deltas []string
	calls  []engine.ToolCall
	finish engine.FinishReason
}

func (c completion) text() string { return strings.Join(c.deltas, "") }

// collect ranges over one completion and checks the shape of its events: a single finish,
// last.
func collect(t *testing.T, m engine.Model, req *engine.ModelRequest) completion {
	t.Helper()
	var c completion
	finished := false
	for ev, err := range m.Stream(context.Background(), req) {
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
		if finished {
			t.Fatalf("event %+v after the finish event", ev)
		}
		switch ev.Kind {
		case engine.EventText:
			c.deltas = append(c.deltas, ev.Text)
		case engine.EventToolCall:
			c.calls = append(c.calls, ev.ToolCall)
		case engine.EventFinish:
			c.finish, finished = ev.Finish, true
		default:
			t.Fatalf("event of kind %d", ev.Kind)
		}
	}
	if !finished {
		t.Fatal("no finish event")
	}
	return c
}

// turnResult is a whole turn as the engine would run it.
type turnResult struct {
	steps []completion
	// text is the speech of the turn; data the data tool calls; ui the UI and action calls.
	text string
	data []engine.ToolCall
	ui   []engine.ToolCall
}

// uiCall returns the arguments of the turn's call of the tool named.
func (r turnResult) uiCall(name string) (json.RawMessage, bool) {
	for _, c := range r.ui {
		if c.Name == name {
			return c.Arguments, true
		}
	}
	return nil, false
}

// runTurn drives m through one turn the way the engine does: it runs data tool calls against
// b and calls again with their results, and calls again with {"shown":true} after a step that
// produced only UI or action calls.
func runTurn(t *testing.T, m engine.Model, req *engine.ModelRequest, b backend) turnResult {
	t.Helper()
	kinds := toolKinds(req.Tools)
	var r turnResult
	ids := make(map[string]bool)
	for range 6 {
		c := collect(t, m, req)
		r.steps = append(r.steps, c)
		r.text += c.text()
		var data []engine.ToolCall
		for _, call := range c.calls {
			if ids[call.ID] {
				t.Fatalf("call ID %q used twice in the turn", call.ID)
			}
			ids[call.ID] = true
			if !json.Valid(call.Arguments) || !isJSONObject(call.Arguments) {
				t.Fatalf("%s: arguments %s are not a JSON object", call.Name, call.Arguments)
			}
			if kinds[call.Name] == engine.ToolData {
				data = append(data, call)
			} else {
				r.ui = append(r.ui, call)
			}
		}
		r.data = append(r.data, data...)
		switch {
		case len(data) > 0:
			if c.finish != engine.FinishToolCalls {
				t.Fatalf("finish %q after data tool calls", c.finish)
			}
			req.Messages = append(req.Messages, engine.Message{Role: engine.RoleAssistant, Content: c.text(), ToolCalls: c.calls})
			for _, call := range data {
				content, isErr := b(call)
				req.Messages = append(req.Messages, engine.Message{Role: engine.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: content, IsError: isErr})
			}
		case c.text() == "" && len(c.calls) > 0:
			req.Messages = append(req.Messages, engine.Message{Role: engine.RoleAssistant, ToolCalls: c.calls})
			for _, call := range c.calls {
				req.Messages = append(req.Messages, engine.Message{Role: engine.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: `{"shown":true}`})
			}
		default:
			if c.finish != engine.FinishStop {
				t.Fatalf("finish %q at the end of the turn", c.finish)
			}
			return r
		}
	}
	t.Fatal("the turn did not end within 6 steps")
	return r
}

func isJSONObject(b []byte) bool {
	var m map[string]any
	return json.Unmarshal(b, &m) == nil && m != nil
}

// ask is a request for one user message in text mode with the demo tools.
func ask(tenant *engine.Tenant, locale, text string) *engine.ModelRequest {
	return &engine.ModelRequest{
		Tenant:   tenant,
		Mode:     engine.ModeText,
		Locale:   locale,
		Tools:    demoTools(),
		Messages: []engine.Message{{Role: engine.RoleUser, Content: text}},
	}
}
