package intent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/widgets"
	"go.uber.org/goleak"
	"sigs.k8s.io/yaml"
)

// shopConfig exercises what the demo bank does not: literal and slot arguments, list limits,
// error copy with the error's message, and several locales.
const shopConfig = `
threshold: 0.5
max_list_items: 2
error:
  en: "Default error: {error.error}."
intents:
  - name: orders
    examples: [show my orders, where are my orders]
    slots:
      day: {type: date}
    tools:
      - name: list_orders
        arguments: {status: open, since: "{slots.day}", page: 1}
    responses:
      en:
        speak: You have {results.list_orders.count} open orders.
        voice: "{results.list_orders.count} orders."
        error: "Orders failed: {error.message}"
        follow: Oldest first.
        suggestions: [Track my parcel, "Reorder {results.list_orders.orders.0.name}"]
        widgets:
          - list:
              title: Orders
              items_from: results.list_orders.orders
              item: {title: "{name}", trailing: "{total|money:€}"}
      es:
        speak: Tienes {results.list_orders.count} pedidos abiertos.
      pt-BR:
        speak: Você tem {results.list_orders.count} pedidos.
  - name: refund
    examples: [i want a refund]
    slots:
      amount: {type: amount, required: true}
    action:
      name: refund
      arguments: {amount: "{slots.amount}", reason: customer request}
    responses:
      en:
        speak: Refund ${slots.amount|money}?
        ask: How much should I refund?
  - name: fallback
    responses:
      en: {speak: "Sorry?"}
`

const ordersResult = `{"count":3,"orders":[{"name":"Tea","total":4.5},{"name":"Mug","total":12},{"name":"Pot","total":30}]}`

func shopTenant(t testing.TB, locale string) *engine.Tenant {
	t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(shopConfig))
	if err != nil {
		t.Fatal(err)
	}
	return &engine.Tenant{Key: "shop", Name: "Shop", Locale: locale, Intents: raw,
		Actions: map[string]*engine.Action{"refund": {}}}
}

func shopTools() []engine.ToolSpec {
	tools := []engine.ToolSpec{{Name: "list_orders", Kind: engine.ToolData}, {Name: "refund", Kind: engine.ToolAction}}
	for _, u := range widgets.UITools() {
		tools = append(tools, engine.ToolSpec{Name: u.Name, Kind: engine.ToolUI})
	}
	return tools
}

func shopRequest(tenant *engine.Tenant, text string) *engine.ModelRequest {
	return &engine.ModelRequest{Tenant: tenant, Mode: engine.ModeText, Tools: shopTools(),
		Messages: []engine.Message{{Role: engine.RoleUser, Content: "hi"}, {Role: engine.RoleAssistant, Content: "Sorry?"},
			{Role: engine.RoleUser, Content: text}}}
}

func TestStreamSteps(t *testing.T) {
	m := New(&Options{Now: fixedNow})
	req := shopRequest(shopTenant(t, "en"), "show my orders since yesterday")

	first := collect(t, m, req)
	if first.text() != "" || first.finish != engine.FinishToolCalls || len(first.calls) != 1 {
		t.Fatalf("first step: text %q, %d calls, finish %q; want one data call and tool_calls", first.text(), len(first.calls), first.finish)
	}
	call := first.calls[0]
	if call.Name != "list_orders" || call.ID != "call_orders_1_1" ||
		string(call.Arguments) != `{"page":1,"since":"2026-11-19","status":"open"}` {
		t.Errorf("first call %s %s %s", call.ID, call.Name, call.Arguments)
	}
	if again := collect(t, m, req); !slices.EqualFunc(again.calls, first.calls, func(a, b engine.ToolCall) bool {
		return a.ID == b.ID && string(a.Arguments) == string(b.Arguments)
	}) {
		t.Errorf("the same request gave other calls: %+v", again.calls)
	}

	req.Messages = append(req.Messages,
		engine.Message{Role: engine.RoleAssistant, ToolCalls: first.calls},
		engine.Message{Role: engine.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: ordersResult})
	second := collect(t, m, req)
	if second.text() != "You have 3 open orders." || len(second.deltas) != 5 || second.finish != engine.FinishStop {
		t.Errorf("second step: %q in %d deltas, finish %q", second.deltas, len(second.deltas), second.finish)
	}
	var got []string
	for _, c := range second.calls {
		got = append(got, c.ID+" "+c.Name+" "+string(c.Arguments))
	}
	want := []string{
		`call_orders_1_2 show_list {"title":"Orders","items":[{"title":"Tea","trailing":"€4.50"},{"title":"Mug","trailing":"€12.00"}]}`,
		`call_orders_2_2 set_follow {"text":"Oldest first."}`,
		`call_orders_3_2 set_suggestions {"suggestions":["Track my parcel","Reorder Tea"]}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("second step calls:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Whatever follows an answer only finishes the turn.
	req.Messages = append(req.Messages, engine.Message{Role: engine.RoleAssistant, Content: second.text(), ToolCalls: second.calls})
	for _, c := range second.calls {
		req.Messages = append(req.Messages, engine.Message{Role: engine.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: `{"shown":true}`})
	}
	if third := collect(t, m, req); third.text() != "" || len(third.calls) != 0 || third.finish != engine.FinishStop {
		t.Errorf("after the answer: %+v, want only a stop", third)
	}
}

func TestStreamEventOrder(t *testing.T) {
	m := New(nil)
	req := shopRequest(shopTenant(t, "en"), "show my orders")
	req.Messages = append(req.Messages,
		engine.Message{Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "call_orders_1_1", Name: "list_orders"}}},
		engine.Message{Role: engine.RoleTool, ToolCallID: "call_orders_1_1", Name: "list_orders", Content: ordersResult})
	var kinds []engine.ModelEventKind
	for ev, err := range m.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		if len(kinds) == 0 || kinds[len(kinds)-1] != ev.Kind {
			kinds = append(kinds, ev.Kind)
		}
	}
	if want := []engine.ModelEventKind{engine.EventText, engine.EventToolCall, engine.EventFinish}; !slices.Equal(kinds, want) {
		t.Errorf("event kinds in runs %v, want all text, then the calls, then the finish %v", kinds, want)
	}
}

func TestStreamToolErrors(t *testing.T) {
	tenant := shopTenant(t, "en")
	m := New(nil)
	cases := []struct {
		name    string
		tools   []engine.ToolSpec
		content string
		isError bool
		want    string
	}{
		{"refused", shopTools(), `{"error":"not_found","message":"no orders service"}`, true, "Orders failed: no orders service"},
		{"unreachable", shopTools(), unavailableResult, true, "Orders failed: the backend did not answer"},
		{"not JSON", shopTools(), `<html>502</html>`, false, "Orders failed: <html>502</html>"},
		{"error without message", shopTools(), `"boom"`, true, "Orders failed:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := shopRequest(tenant, "show my orders")
			req.Tools = tc.tools
			r := runTurn(t, m, req, func(engine.ToolCall) (string, bool) { return tc.content, tc.isError })
			if r.text != tc.want {
				t.Errorf("speak %q, want %q", r.text, tc.want)
			}
			for _, c := range r.ui {
				if c.Name != widgets.ToolSetSuggestions {
					t.Errorf("%s after an error", c.Name)
				}
			}
		})
	}
	t.Run("tool not offered", func(t *testing.T) {
		req := shopRequest(tenant, "show my orders")
		req.Tools = shopTools()[1:]
		r := runTurn(t, m, req, nil)
		if len(r.data) != 0 || r.text != "Orders failed:" {
			t.Errorf("calls %v, speak %q; want no call and the error copy", r.data, r.text)
		}
	})
	t.Run("called without a result", func(t *testing.T) {
		req := shopRequest(tenant, "show my orders")
		req.Messages = append(req.Messages, engine.Message{Role: engine.RoleAssistant,
			ToolCalls: []engine.ToolCall{{ID: "x", Name: "list_orders", Arguments: json.RawMessage(`{}`)}}})
		c := collect(t, m, req)
		if c.text() != "Orders failed:" || len(c.calls) != 1 || string(c.calls[0].Arguments) != `{"suggestions":["Track my parcel"]}` {
			t.Errorf("speak %q with calls %v; want the error copy and the suggestions that need no result", c.text(), c.calls)
		}
	})
	t.Run("default error copy", func(t *testing.T) {
		req := shopRequest(tenant, "show my orders")
		req.Locale = "es"
		r := runTurn(t, m, req, func(engine.ToolCall) (string, bool) { return unavailableResult, true })
		if r.text != "Default error: tool_unavailable." {
			t.Errorf("speak %q", r.text)
		}
	})
	t.Run("action not offered", func(t *testing.T) {
		req := shopRequest(tenant, "i want a refund of $5")
		req.Tools = shopTools()[:1]
		if r := runTurn(t, m, req, nil); r.text != "Default error: tool_unavailable." || len(r.ui) != 0 {
			t.Errorf("speak %q, calls %v", r.text, r.ui)
		}
	})
}

func TestStreamLocales(t *testing.T) {
	m := New(nil)
	cases := []struct {
		tenantLocale, locale, want string
	}{
		{"en", "", "You have 3 open orders."},
		{"es", "", "Tienes 3 pedidos abiertos."},
		{"", "", "You have 3 open orders."},
		{"en", "es", "Tienes 3 pedidos abiertos."},
		{"en", "ES-mx", "Tienes 3 pedidos abiertos."},
		{"en", "pt-BR-x-bank", "Você tem 3 pedidos."},
		{"en", "pt", "You have 3 open orders."},
		{"es", "fr-CA", "Tienes 3 pedidos abiertos."},
		{"de", "fr", "You have 3 open orders."}, // no fallback matches: the first locale, in tag order
	}
	for _, tc := range cases {
		t.Run(tc.tenantLocale+"/"+tc.locale, func(t *testing.T) {
			req := shopRequest(shopTenant(t, tc.tenantLocale), "show my orders")
			req.Locale = tc.locale
			if r := runTurn(t, m, req, func(engine.ToolCall) (string, bool) { return ordersResult, false }); r.text != tc.want {
				t.Errorf("speak %q, want %q", r.text, tc.want)
			}
		})
	}
}

func TestStreamModes(t *testing.T) {
	m := New(nil)
	tenant := shopTenant(t, "en")
	orders := func(engine.ToolCall) (string, bool) { return ordersResult, false }
	t.Run("voice", func(t *testing.T) {
		req := shopRequest(tenant, "show my orders")
		req.Mode = engine.ModeVoice
		if r := runTurn(t, m, req, orders); r.text != "3 orders." {
			t.Errorf("speak %q, want the voice copy", r.text)
		}
	})
	t.Run("voice without voice copy", func(t *testing.T) {
		req := shopRequest(tenant, "show my orders")
		req.Mode, req.Locale = engine.ModeVoice, "es"
		if r := runTurn(t, m, req, orders); r.text != "Tienes 3 pedidos abiertos." {
			t.Errorf("speak %q, want the speak copy", r.text)
		}
	})
	t.Run("home without a home intent", func(t *testing.T) {
		req := shopRequest(tenant, "")
		req.Mode, req.Messages = engine.ModeHome, nil
		if r := runTurn(t, m, req, orders); r.text != "Sorry?" {
			t.Errorf("speak %q, want the fallback", r.text)
		}
	})
	t.Run("no UI tools offered", func(t *testing.T) {
		req := shopRequest(tenant, "show my orders")
		req.Tools = shopTools()[:1]
		r := runTurn(t, m, req, orders)
		if r.text != "You have 3 open orders." || len(r.ui) != 0 {
			t.Errorf("speak %q, calls %v; want no UI call", r.text, r.ui)
		}
	})
}

func TestStreamSlotFilling(t *testing.T) {
	m := New(nil)
	tenant := demoTenant(t)
	const askTransfer = "How much would you like to send, and to whom? You can pay Alex, Jordan, Sam or Taylor."
	cases := []struct {
		name    string
		history []string // user, assistant, user, …
		action  string
		speak   string
	}{
		{"ask", []string{"send money"}, "", askTransfer},
		{"amount then name", []string{"send money", askTransfer, "twenty dollars to Sam"}, `transfer {"amount":20,"to":"Sam"}`, "I can send $20.00 to Sam. Please confirm."},
		{"name known, amount given", []string{"send money to alex", askTransfer, "$35"}, `transfer {"amount":35,"to":"Alex"}`, "I can send $35.00 to Alex. Please confirm."},
		{"still missing", []string{"send money", askTransfer, "jordan"}, "", askTransfer},
		{"same intent again", []string{"send money to taylor", askTransfer, "send 12 dollars"}, `transfer {"amount":12,"to":"Taylor"}`, "I can send $12.00 to Taylor. Please confirm."},
		{"changed subject", []string{"send money", askTransfer, "what can you do"}, "", enHelp},
		{"nothing to fill", []string{"send money", askTransfer, "tell me a joke"}, "", enHelp},
		{"only the last ask counts", []string{"send money", askTransfer, "help", enHelp, "$20"}, "", enHelp},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := ask(tenant, "en", "")
			req.Messages = nil
			for i, s := range tc.history {
				role := engine.RoleUser
				if i%2 == 1 {
					role = engine.RoleAssistant
				}
				req.Messages = append(req.Messages, engine.Message{Role: role, Content: s})
			}
			r := runTurn(t, m, req, demoBackend)
			action := ""
			for _, c := range r.ui {
				if c.Name == "transfer" {
					action = c.Name + " " + string(c.Arguments)
				}
			}
			if r.text != tc.speak || action != tc.action {
				t.Errorf("speak %q, action %q\nwant  %q, %q", r.text, action, tc.speak, tc.action)
			}
		})
	}
}

func TestStreamErrors(t *testing.T) {
	m := New(nil)
	bad := &engine.Tenant{Key: "bad", Intents: json.RawMessage(`{"intents":[{"name":"x","patterns":["("],"responses":{"en":{"speak":"x"}}}]}`)}
	cases := []struct {
		name string
		req  *engine.ModelRequest
		is   error
		want string
	}{
		{"nil request", nil, nil, "intent: nil request"},
		{"no tenant", &engine.ModelRequest{}, nil, "intent: request has no tenant"},
		{"no intents", &engine.ModelRequest{Tenant: &engine.Tenant{Key: "empty"}}, ErrNoConfig, `intent: tenant has no intents configuration`},
		{"invalid", &engine.ModelRequest{Tenant: bad}, ErrInvalidConfig, `intent: invalid config: intents[0].patterns[0]: invalid regexp`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			for ev, err := range m.Stream(context.Background(), tc.req) {
				n++
				if err == nil {
					t.Fatalf("event %+v, want an error", ev)
				}
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("error %v does not wrap %v", err, tc.is)
				}
				if !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %q, want it to contain %q", err, tc.want)
				}
			}
			if n != 1 {
				t.Errorf("%d values, want one error", n)
			}
		})
	}
}

func TestStreamCancel(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	m := New(nil)
	tenant := shopTenant(t, "en")
	req := shopRequest(tenant, "show my orders")
	req.Messages = append(req.Messages,
		engine.Message{Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "call_orders_1_1", Name: "list_orders"}}},
		engine.Message{Role: engine.RoleTool, ToolCallID: "call_orders_1_1", Name: "list_orders", Content: ordersResult})

	t.Run("before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var got []error
		for ev, err := range m.Stream(ctx, req) {
			if err == nil {
				t.Errorf("event %+v from a cancelled context", ev)
			}
			got = append(got, err)
		}
		if len(got) != 1 || !errors.Is(got[0], context.Canceled) {
			t.Errorf("got %v, want context.Canceled alone", got)
		}
	})
	t.Run("midway", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var events int
		var last error
		for ev, err := range m.Stream(ctx, req) {
			if err != nil {
				last = err
				continue
			}
			events++
			if ev.Kind == engine.EventFinish {
				t.Error("finish after the context was cancelled")
			}
			cancel()
		}
		if events != 1 || !errors.Is(last, context.Canceled) {
			t.Errorf("%d events then %v, want one event then context.Canceled", events, last)
		}
	})
	t.Run("consumer stops", func(t *testing.T) {
		n := 0
		for range m.Stream(context.Background(), req) {
			n++
			break
		}
		if n != 1 {
			t.Errorf("%d events after break", n)
		}
	})
}

func TestCheck(t *testing.T) {
	m := New(nil)
	if err := m.Check(demoTenant(t)); err != nil {
		t.Errorf("demo tenant: %v", err)
	}
	noAction := demoTenant(t)
	noAction.Actions = nil
	french := shopTenant(t, "fr")
	cases := []struct {
		name   string
		tenant *engine.Tenant
		want   string
	}{
		{"action not allowed", noAction, `intents[3].action.name: "transfer" is not in the tenant's actions`},
		{"no copy in the tenant's locale", french, `intents[0].responses: has no copy for the tenant's locale "fr"`},
		{"no intents", &engine.Tenant{Key: "k"}, "intent: tenant has no intents configuration"},
		{"nil tenant", nil, "intent: request has no tenant"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := m.Check(tc.tenant)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestModelConcurrent(t *testing.T) {
	m := New(&Options{Now: fixedNow})
	tenant := demoTenant(t)
	phrases := []string{"what's my balance", "show me my recent transactions", "send $20 to Alex", "help"}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			req := ask(tenant, "en", phrases[i%len(phrases)])
			if i%8 == 0 {
				if _, err := m.Warm(context.Background(), req); err != nil {
					errs <- err
				}
			}
			n := 0
			for _, err := range m.Stream(context.Background(), req) {
				if err != nil {
					errs <- err
				}
				n++
			}
			if n == 0 {
				errs <- fmt.Errorf("%q: no events", req.Messages[0].Content)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
