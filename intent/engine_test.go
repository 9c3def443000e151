package intent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/widgets"
	"sigs.k8s.io/yaml"
)

// TestEngineTurns runs the demo bank's intents through the engine's own turn loop, over HTTP,
// with the tools answering as the demo bank does.
func TestEngineTurns(t *testing.T) {
	y, err := os.ReadFile("../examples/demobank/intents.yaml")
	if err != nil {
		t.Fatal(err)
	}
	intents, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	tenant := &engine.Tenant{
		Key: "pk_demo", Name: "Demo Bank", Locale: "en", Intents: intents,
		Environments: map[string]*engine.Environment{engine.EnvProduction: {BackendURL: "http://127.0.0.1:1"}},
		Actions: map[string]*engine.Action{"transfer": {Confirm: map[string]engine.ConfirmCopy{
			"en": {Title: "Send money", Body: "Send {amount} to {to}?", ConfirmLabel: "Send", CancelLabel: "Cancel"},
		}}},
	}
	tenants, err := engine.NewStaticTenants(tenant)
	if err != nil {
		t.Fatal(err)
	}
	result := func(content string) func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error) {
		return func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error) {
			return engine.ToolResult{Content: json.RawMessage(content)}, nil
		}
	}
	object := func(props string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{` + props + `},"additionalProperties":false}`)
	}
	tools := &enginetest.FuncToolset{
		ToolList: []engine.Tool{
			{Name: "get_balance", Parameters: object(`"account":{"type":"string","enum":["checking","savings"]}`)},
			{Name: "list_transactions", Parameters: object(`"limit":{"type":"integer","minimum":1,"maximum":20}`)},
			{Name: "get_savings_goal", Parameters: object(``)},
			{Name: "transfer", Action: true, Parameters: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number","exclusiveMinimum":0,"maximum":10000},"to":{"type":"string","minLength":1},"currency":{"type":"string","enum":["USD"]}},"required":["amount","to"],"additionalProperties":false}`)},
		},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"get_balance":       result(`{"account":"checking","name":"Everyday Checking","currency":"USD","balance":1234.56,"formatted":"$1,234.56","change":"+$120.00 this month"}`),
			"list_transactions": result(`{"transactions":[{"id":"tx_1","date":"2026-11-20","merchant":"Blue Bottle Coffee","category":"Coffee","amount":-4.5,"formatted":"-$4.50"}]}`),
			"get_savings_goal":  result(`{"name":"Trip to Lisbon","target":2000,"saved":1300,"progress":0.65,"formatted_saved":"$1,300.00","formatted_target":"$2,000.00","percent":"65%"}`),
		},
	}
	eng, err := engine.New(engine.Config{
		Tenants:    tenants,
		Model:      intent.New(nil),
		Toolset:    tools,
		SigningKey: bytes.Repeat([]byte("k"), 32),
		Logger:     enginetest.DebugLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, body, speak string
		widgets           []string // widget types
		suggestions       int
		execute           string // the arguments of a confirm widget
	}{
		{"balance", `{"transcript":"What's my balance?"}`, "Your Everyday Checking balance is $1,234.56.", []string{widgets.TypeStat}, 2, ""},
		{"transactions", `{"transcript":"show me my recent transactions"}`, "Here are your latest transactions. The most recent is Blue Bottle Coffee, -$4.50.", []string{widgets.TypeList}, 2, ""},
		{"goal in Spanish", `{"transcript":"¿Cómo va mi meta de ahorro?","meta":{"locale":"es"}}`, "Has ahorrado $1,300.00 de $2,000.00 para Trip to Lisbon. Llevas el 65% de tu meta.", []string{widgets.TypeProgress}, 2, ""},
		{"transfer", `{"transcript":"send $20 to Alex"}`, "I can send $20.00 to Alex. Please confirm.", []string{widgets.TypeConfirm}, 1, `{"amount":20,"to":"Alex"}`},
		{"transfer in Spanish words", `{"transcript":"envía veinte dólares con cincuenta centavos a Jordan","meta":{"locale":"es"}}`, "Puedo enviar $20.50 a Jordan. Por favor, confirma.", []string{widgets.TypeConfirm}, 1, `{"amount":20.5,"to":"Jordan"}`},
		{"ask", `{"transcript":"send money"}`, "How much would you like to send, and to whom? You can pay Alex, Jordan, Sam or Taylor.", nil, 0, ""},
		{"slot filling", `{"transcript":"$15 to Sam","messages":[{"role":"user","content":"send money"},{"role":"assistant","content":"How much would you like to send, and to whom?"}]}`, "I can send $15.00 to Sam. Please confirm.", []string{widgets.TypeConfirm}, 1, `{"amount":15,"to":"Sam"}`},
		{"slot filling over two replies", `{"transcript":"30 dollars","messages":[{"role":"user","content":"send money"},{"role":"assistant","content":"How much would you like to send, and to whom?"},{"role":"user","content":"to Jordan"},{"role":"assistant","content":"How much would you like to send, and to whom?"}]}`, "I can send $30.00 to Jordan. Please confirm.", []string{widgets.TypeConfirm}, 1, `{"amount":30,"to":"Jordan"}`},
		{"no slot filling after an answered question", `{"transcript":"30 dollars","messages":[{"role":"user","content":"send money"},{"role":"assistant","content":"How much would you like to send, and to whom?"},{"role":"user","content":"what's my balance"},{"role":"assistant","content":"Your Everyday Checking balance is $1,234.56."}]}`, "I can check your balance, show recent transactions, track your savings goal, or send money.", nil, 4, ""},
		{"home", `{"mode":"home"}`, "Hi! Your Everyday Checking balance is $1,234.56, and you're 65% of the way to Trip to Lisbon.", []string{widgets.TypeStat, widgets.TypeProgress}, 3, ""},
		{"fallback", `{"transcript":"tell me a joke"}`, "I can check your balance, show recent transactions, track your savings goal, or send money.", nil, 4, ""},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/engine", strings.NewReader(tc.body))
			req.Header.Set("X-Engine-Key", "pk_demo")
			req.Header.Set("X-Token", "user-token")
			req.Header.Set("X-Request-ID", "prod-"+string(rune('a'+i)))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			eng.Handler().ServeHTTP(rec, req.WithContext(ctx))
			spec, ok := doneSpec(rec.Body.String())
			if !ok {
				t.Fatalf("status %d, no done event in:\n%s", rec.Code, rec.Body.String())
			}
			if spec.Speak != tc.speak || spec.Meta.Error != "" {
				t.Errorf("speak %q (error %q)\nwant  %q", spec.Speak, spec.Meta.Error, tc.speak)
			}
			var types []string
			for _, w := range spec.Widgets {
				types = append(types, w.WidgetType())
				if c, ok := w.(widgets.Confirm); ok && string(c.Execute.Arguments) != tc.execute {
					t.Errorf("confirm executes %s %s, want transfer %s", c.Execute.Tool, c.Execute.Arguments, tc.execute)
				}
				if err := w.Validate(); err != nil {
					t.Errorf("%s widget: %v", w.WidgetType(), err)
				}
			}
			if strings.Join(types, ",") != strings.Join(tc.widgets, ",") {
				t.Errorf("widgets %v, want %v", types, tc.widgets)
			}
			if len(spec.Suggestions) != tc.suggestions {
				t.Errorf("suggestions %q, want %d", spec.Suggestions, tc.suggestions)
			}
		})
	}
}

// doneSpec finds the spec of the stream's done event.
func doneSpec(stream string) (widgets.Spec, bool) {
	var spec widgets.Spec
	for block := range strings.SplitSeq(stream, "\n\n") {
		if !strings.Contains(block, "event: done") {
			continue
		}
		for line := range strings.SplitSeq(block, "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				return spec, json.Unmarshal([]byte(data), &spec) == nil
			}
		}
	}
	return spec, false
}
