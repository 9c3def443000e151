package engine_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/pii"
	"github.com/convengine/engine/widgets"
)

// cardDigits finds the test's card number, typed in any grouping.
var cardDigits = regexp.MustCompile(`4111[ -]?1111[ -]?1111[ -]?1111`)

// recordingTurnLog keeps a copy of every event a MemoryTurnLog is given.
type recordingTurnLog struct {
	*engine.MemoryTurnLog
	mu   sync.Mutex
	data []string
}

func (l *recordingTurnLog) AppendEvents(ctx context.Context, turn string, owner *engine.TurnOwner, evs []engine.LoggedEvent, done bool, keep time.Time) error {
	l.mu.Lock()
	for _, ev := range evs {
		l.data = append(l.data, string(ev.Data))
	}
	l.mu.Unlock()
	return l.MemoryTurnLog.AppendEvents(ctx, turn, owner, evs, done, keep)
}

// privacyHarness serves a bank tenant under the banking policy, with a data tool and an
// action that take a card number, a model that writes by script, and a turn log.
func privacyHarness(t *testing.T, script func(step int, req *engine.ModelRequest) []engine.ModelEvent) (*harness, *enginetest.FuncToolset, *enginetest.RecordingModel, *recordingTurnLog) {
	t.Helper()
	tenant := testTenant()
	tenant.Privacy = json.RawMessage(`{"preset":"banking"}`)
	tenant.Actions["pay_card"] = &engine.Action{Confirm: map[string]engine.ConfirmCopy{
		"en": {Title: "Pay a card", Body: "Pay ${amount|money} to card {card}?", ConfirmLabel: "Pay", CancelLabel: "Cancel"}}}
	cardArgs := json.RawMessage(`{"type":"object","properties":{"card":{"type":"string"},"amount":{"type":"number"}},"required":["card"]}`)
	tools := &enginetest.FuncToolset{
		ToolList: []engine.Tool{{Name: "check_card", Parameters: cardArgs}, {Name: "pay_card", Parameters: cardArgs, Action: true}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"check_card": func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error) {
				return engine.ToolResult{Content: json.RawMessage(`{"valid":true}`)}, nil
			},
			"pay_card": func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error) {
				return engine.ToolResult{Content: json.RawMessage(`{"paid":true}`)}, nil
			},
		},
	}
	model := &enginetest.RecordingModel{Answer: func(req *engine.ModelRequest) []engine.ModelEvent {
		return script(enginetest.StepOf(req.Messages), req)
	}}
	privacy, err := pii.NewPrivacy(nil)
	if err != nil {
		t.Fatal(err)
	}
	log := &recordingTurnLog{MemoryTurnLog: &engine.MemoryTurnLog{}}
	h := newHarness(t, engine.Config{Model: model, Toolset: tools, Privacy: privacy, TurnLog: log}, tenant)
	return h, tools, model, log
}

// TestPrivacyCardInATransferRequest: a user types a card number inside a payment request. The
// model sees a placeholder; the data tool and, once confirmed, the action get the number;
// the user sees it masked in the speech, the confirm card and the transcript echoed; the
// debug logs and the turn log do not hold it.
func TestPrivacyCardInATransferRequest(t *testing.T) {
	h, tools, requests, log := privacyHarness(t, func(step int, req *engine.ModelRequest) []engine.ModelEvent {
		if step == 0 {
			return []engine.ModelEvent{engine.TextEvent("Let me check [CA"), engine.TextEvent("RD_1] for you."),
				enginetest.ToolCall("c1", "check_card", `{"card":"[CARD_1]"}`), engine.FinishEvent(engine.FinishToolCalls)}
		}
		return []engine.ModelEvent{engine.TextEvent("Card [CARD_1] is valid; please confirm."),
			enginetest.ToolCall("c2", "pay_card", `{"card":"[CARD_1]","amount":20}`), engine.FinishEvent(engine.FinishToolCalls)}
	})
	res := h.turn(`{"transcript":"Please pay 20 dollars to my card 4111 1111 1111 1111, thanks"}`)

	if len(requests.Requests()) < 2 {
		t.Fatalf("the model was called %d times", len(requests.Requests()))
	}
	for i, r := range requests.Requests() {
		if cardDigits.MatchString(r) || !strings.Contains(r, "[CARD_1]") {
			t.Errorf("model request %d does not hold only the placeholder: %s", i, r)
		}
	}
	calls := tools.Calls()
	if len(calls) != 1 || string(calls[0].Call.Arguments) != `{"card":"4111111111111111"}` {
		t.Fatalf("the backend got %+v, want check_card with the card number", calls)
	}
	if want := "Let me check •••• 1111 for you. Card •••• 1111 is valid; please confirm."; res.speak != want || res.spec.Speak != want {
		t.Errorf("speech %q (done %q), want %q", res.speak, res.spec.Speak, want)
	}
	var confirm widgets.Confirm
	for _, w := range res.spec.Widgets {
		if c, ok := w.(widgets.Confirm); ok {
			confirm = c
		}
	}
	if confirm.Body != "Pay $20.00 to card •••• 1111?" {
		t.Fatalf("confirm body %q (widgets %+v)", confirm.Body, res.spec.Widgets)
	}
	// The token commits to the number the backend will get, and the execute sends it; the
	// backend's card, which repeats the number, is shown masked, and so is its replay.
	tools.Funcs["pay_card"] = func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error) {
		return engine.ToolResult{Content: json.RawMessage(`{"card":{"title":"Paid","line1":"Card 4111 1111 1111 1111 got $20.00"},"speak":"Card 4111-1111-1111-1111 is paid."}`)}, nil
	}
	for range 2 {
		resp := h.do(t.Context(), http.MethodPost, "/engine/execute", headers(), executeBody(confirm.Execute, freshAuth()))
		var done engine.ExecuteResult
		json.NewDecoder(resp.Body).Decode(&done)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("execute: %d", resp.StatusCode)
		}
		if done.Done.Line1 != "Card •••• 1111 got $20.00" || done.Speak != "Card •••• 1111 is paid." {
			t.Errorf("the done card shows %+v, speak %q", done.Done, done.Speak)
		}
	}
	if calls := tools.Calls(); len(calls) != 2 || calls[1].Call.Name != "pay_card" || string(calls[1].Call.Arguments) != `{"amount":20,"card":"4111111111111111"}` {
		t.Errorf("the action sent %+v", calls)
	}

	if cardDigits.MatchString(h.logs.String()) || cardDigits.MatchString(res.turn.Spec.Meta.Transcript) {
		t.Errorf("the debug logs hold the card number:\n%s", h.logs.String())
	}
	// The turn log holds what the user saw, the confirm's execute member included: the client
	// posts back the arguments masked, and the token carries the number sealed.
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.data) == 0 {
		t.Fatal("the turn was not logged")
	}
	for _, d := range log.data {
		if cardDigits.MatchString(d) {
			t.Errorf("the turn log holds the card number: %s", d)
		}
	}
	raw, _ := json.Marshal(confirm.Execute)
	if cardDigits.MatchString(string(raw)) || strings.Contains(string(raw), "4111111111111111") {
		t.Errorf("the client was given the card number to post back: %s", raw)
	}
	for _, part := range strings.Split(confirm.Execute.Token, ".") {
		if b, _ := base64.RawURLEncoding.DecodeString(part); strings.Contains(string(b), "4111111111111111") {
			t.Errorf("the action token carries the card number readable: %s", b)
		}
	}
}

// TestPrivacyRefusesAnInventedPlaceholder: a placeholder the turn never gave the model is the
// tool call's error, which the model sees; the backend is never called.
func TestPrivacyRefusesAnInventedPlaceholder(t *testing.T) {
	h, tools, requests, _ := privacyHarness(t, func(step int, req *engine.ModelRequest) []engine.ModelEvent {
		if step == 0 {
			return []engine.ModelEvent{enginetest.ToolCall("c1", "check_card", `{"card":"[CARD_7]"}`),
				enginetest.ToolCall("c2", "pay_card", `{"card":"[CARD_7]","amount":5}`), engine.FinishEvent(engine.FinishToolCalls)}
		}
		return enginetest.Text("I need the card number again.")
	})
	res := h.turn(`{"transcript":"check my card 4111 1111 1111 1111"}`)
	if calls := tools.Calls(); len(calls) != 0 {
		t.Errorf("the backend was called: %+v", calls)
	}
	if len(res.spec.Widgets) != 0 {
		t.Errorf("a confirm was offered: %+v", res.spec.Widgets)
	}
	if len(requests.Requests()) != 2 {
		t.Fatalf("the model was called %d times, want 2", len(requests.Requests()))
	}
	second := requests.Requests()[1]
	if strings.Count(second, `never given in this conversation`) != 2 || !strings.Contains(second, `"isError":true`) {
		t.Errorf("the model was not told of the unknown placeholder: %s", second)
	}
	if res.spec.Speak != "I need the card number again." {
		t.Errorf("speak %q", res.spec.Speak)
	}
}

// TestPrivacySpokenDigits: a card number said digit by digit, in a transcript of speech, is
// hidden from the model and masked in what the user is shown.
func TestPrivacySpokenDigits(t *testing.T) {
	h, tools, requests, _ := privacyHarness(t, func(step int, req *engine.ModelRequest) []engine.ModelEvent {
		if step == 0 {
			return []engine.ModelEvent{enginetest.ToolCall("c1", "check_card", `{"card":"[CARD_1]"}`), engine.FinishEvent(engine.FinishToolCalls)}
		}
		return enginetest.Text("It is valid.")
	})
	spoken := "my card is four one one one, one one one one, one one one one, one one one one"
	res := h.turn(`{"mode":"voice","transcript":"` + spoken + `"}`)
	if r := requests.Requests()[0]; strings.Contains(r, "four one one one") || !strings.Contains(r, "my card is [CARD_1]") {
		t.Errorf("the model saw %s", r)
	}
	if calls := tools.Calls(); len(calls) != 1 || string(calls[0].Call.Arguments) != `{"card":"4111111111111111"}` {
		t.Errorf("the backend got %+v", calls)
	}
	if cardDigits.MatchString(res.spec.Speak) || strings.Contains(res.spec.Speak, "[CARD") {
		t.Errorf("speak %q", res.spec.Speak)
	}
}

// TestPrivacyHistoryAndContext: the history and the app's context reach the model with
// placeholders, and a tenant without a policy under no default is left alone.
func TestPrivacyHistoryAndContext(t *testing.T) {
	h, _, requests, _ := privacyHarness(t, func(int, *engine.ModelRequest) []engine.ModelEvent {
		return enginetest.Text("Noted.")
	})
	h.turn(`{"transcript":"and the IBAN?","messages":[{"role":"user","content":"my card is 4111-1111-1111-1111"},{"role":"assistant","content":"ok"}],` +
		`"context":{"screen":"payee GB82 WEST 1234 5698 7654 32"}}`)
	r := requests.Requests()[0]
	if cardDigits.MatchString(r) || strings.Contains(r, "WEST") || !strings.Contains(r, "[CARD_1]") || !strings.Contains(r, "[IBAN_1]") {
		t.Errorf("the model saw %s", r)
	}
}

// TestPrivacyToolResults: a backend that answers with a card number shows the model only a
// placeholder, which the model's next call of a tool gets back as the number.
func TestPrivacyToolResults(t *testing.T) {
	h, tools, requests, _ := privacyHarness(t, func(step int, req *engine.ModelRequest) []engine.ModelEvent {
		switch step {
		case 0:
			return []engine.ModelEvent{enginetest.ToolCall("c1", "check_card", `{"card":"mine"}`), engine.FinishEvent(engine.FinishToolCalls)}
		case 1:
			// The model read the placeholder in the result and asks about it.
			var got struct{ Number string }
			json.Unmarshal([]byte(req.Messages[len(req.Messages)-1].Content), &got)
			return []engine.ModelEvent{enginetest.ToolCall("c2", "check_card", `{"card":"`+got.Number+`"}`), engine.FinishEvent(engine.FinishToolCalls)}
		}
		return []engine.ModelEvent{engine.TextEvent("Your card checks out."), engine.FinishEvent(engine.FinishStop)}
	})
	tools.Funcs["check_card"] = func(_ context.Context, _ *engine.ToolEnv, c engine.ToolCall) (engine.ToolResult, error) {
		return engine.ToolResult{Content: json.RawMessage(`{"number":"5555 5555 5555 4444","valid":true}`)}, nil
	}
	h.turn(`{"transcript":"which card do I have?"}`)
	for i, r := range requests.Requests() {
		if strings.Contains(strings.ReplaceAll(r, " ", ""), "5555555555554444") {
			t.Errorf("model request %d holds the card number from the backend: %s", i, r)
		}
	}
	calls := tools.Calls()
	if len(calls) != 2 || string(calls[1].Call.Arguments) != `{"card":"5555555555554444"}` {
		t.Errorf("the backend got %+v, want the second call with the number back", calls)
	}
}

// TestPrivacyWidgetArgumentsEscaped: a tenant lets the model see phone numbers and masks them
// for the user; the model writes one in a widget with its digits as JSON escapes. The user sees
// it masked all the same.
func TestPrivacyWidgetArgumentsEscaped(t *testing.T) {
	tenant := testTenant()
	tenant.Privacy = json.RawMessage(`{"preset":"banking","kinds":{"phone":{"model":"pass","user":"mask"}}}`)
	privacy, err := pii.NewPrivacy(nil)
	if err != nil {
		t.Fatal(err)
	}
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{{
		enginetest.ToolCall("w1", widgets.ToolShowStat, `{"label":"Phone","value":"+34 \u0036\u0031\u0032 345 678"}`),
		engine.TextEvent("Noted."), engine.FinishEvent(engine.FinishStop)}}}
	h := newHarness(t, engine.Config{Model: model, Privacy: privacy}, tenant)
	res := h.turn(`{"transcript":"my phone is +34 612 345 678"}`)
	if len(res.spec.Widgets) != 1 {
		t.Fatalf("widgets %+v", res.spec.Widgets)
	}
	raw, _ := json.Marshal(res.spec.Widgets[0])
	if strings.Contains(strings.ReplaceAll(string(raw), " ", ""), "612345678") || !strings.Contains(string(raw), "•") {
		t.Errorf("the widget shows %s", raw)
	}
}
