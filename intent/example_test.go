package intent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/widgets"
)

// The engine calls Stream once per step of a turn. The first step asks for the data tool; the
// second, with its result appended, speaks and shows a widget.
func ExampleModel() {
	tenant := &engine.Tenant{Key: "demo", Locale: "en", Intents: json.RawMessage(`{
	  "fallback": "help",
	  "intents": [
	    {"name": "balance", "examples": ["what's my balance", "how much money do I have"],
	     "tools": [{"name": "get_balance"}],
	     "responses": {"en": {
	       "speak": "You have {results.get_balance.formatted}.",
	       "widgets": [{"stat": {"label": "{results.get_balance.name}", "value": "{results.get_balance.formatted}"}}]}}},
	    {"name": "help", "responses": {"en": {"speak": "I can check your balance."}}}
	  ]}`)}
	req := &engine.ModelRequest{
		Tenant: tenant,
		Mode:   engine.ModeText,
		Tools: []engine.ToolSpec{
			{Name: "get_balance", Kind: engine.ToolData},
			{Name: widgets.ToolShowStat, Kind: engine.ToolUI},
		},
		Messages: []engine.Message{{Role: engine.RoleUser, Content: "How much money do I have?"}},
	}
	m := intent.New(nil)
	step := func() []engine.ToolCall {
		var calls []engine.ToolCall
		for ev, err := range m.Stream(context.Background(), req) {
			switch {
			case err != nil:
				fmt.Println("error:", err)
			case ev.Kind == engine.EventText:
				fmt.Printf("text %q\n", ev.Text)
			case ev.Kind == engine.EventToolCall:
				fmt.Println("call", ev.ToolCall.ID, ev.ToolCall.Name, string(ev.ToolCall.Arguments))
				calls = append(calls, ev.ToolCall)
			case ev.Kind == engine.EventFinish:
				fmt.Println("finish", ev.Finish)
			}
		}
		return calls
	}

	calls := step()
	req.Messages = append(req.Messages,
		engine.Message{Role: engine.RoleAssistant, ToolCalls: calls},
		engine.Message{Role: engine.RoleTool, ToolCallID: calls[0].ID, Name: calls[0].Name,
			Content: `{"name":"Everyday Checking","formatted":"$1,234.56"}`})
	step()
	// Output:
	// call call_balance_1_1 get_balance {}
	// finish tool_calls
	// text "You "
	// text "have "
	// text "$1,234.56."
	// call call_balance_1_2 show_stat {"label":"Everyday Checking","value":"$1,234.56"}
	// finish stop
}

// Config.Match shows how an utterance is understood, without running a turn.
func ExampleConfig_Match() {
	cfg, err := intent.Compile(json.RawMessage(`{
	  "fallback": "help",
	  "intents": [
	    {"name": "transfer", "examples": ["send money"],
	     "patterns": ["\\b(?:send|transfer)\\s+(?P<amount>.+?)\\s+to\\s+(?P<to>\\pL+)"],
	     "slots": {"amount": {"type": "amount", "required": true}, "to": {"type": "name", "required": true}},
	     "action": {"name": "transfer", "arguments": {"amount": "{slots.amount}", "to": "{slots.to}"}},
	     "responses": {"en": {"speak": "Send ${slots.amount|money} to {slots.to}?", "ask": "How much, and to whom?"}}},
	    {"name": "help", "responses": {"en": {"speak": "I can send money."}}}
	  ]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, text := range []string{"Transfer twenty five dollars to jordan", "send money", "what's the weather?"} {
		m := cfg.Match(text, time.Now())
		fmt.Printf("%s %.1f %v\n", m.Intent, m.Score, m.Slots)
	}
	// Output:
	// transfer 1.0 map[amount:25 to:Jordan]
	// transfer 1.0 map[]
	// help 0.0 map[]
}
