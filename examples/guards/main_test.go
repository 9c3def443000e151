package main

import (
	"bytes"
	"context"
	"iter"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/intent"
)

// recordingModel is the intent model, keeping every request it was given.
type recordingModel struct {
	mu   sync.Mutex
	seen []string
	next engine.Model
}

func (m *recordingModel) Stream(ctx context.Context, req *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	m.mu.Lock()
	for _, msg := range req.Messages {
		m.seen = append(m.seen, msg.Content)
	}
	m.mu.Unlock()
	return m.next.Stream(ctx, req)
}

func (m *recordingModel) text() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.seen, "\n")
}

func setup(t *testing.T) (*engine.Engine, *recordingModel, *enginetest.Backend, *bytes.Buffer) {
	backend := enginetest.NewBackend(demobank.New(nil))
	bank := httptest.NewServer(backend)
	t.Cleanup(bank.Close)
	model := &recordingModel{next: intent.New(nil)}
	var audit bytes.Buffer
	eng, err := newEngine(bank.URL, model, &audit)
	if err != nil {
		t.Fatal(err)
	}
	return eng, model, backend, &audit
}

// TestRedaction: card numbers and e-mail addresses never reach the model, in the transcript or
// in the conversation before it; the turn is still answered.
func TestRedaction(t *testing.T) {
	eng, model, _, _ := setup(t)
	caller := &engine.Caller{EngineKey: demobank.EngineKey, UserToken: "demo-user"}
	var spec string
	in := &engine.TurnInput{
		Transcript: "show my recent transactions for card 4111-1111-1111-1111",
		Messages:   []engine.Message{{Role: engine.RoleUser, Content: "I am alex@example.com, card 5500 0000 0000 0004"}, {Role: engine.RoleAssistant, Content: "Hello."}},
	}
	for ev, err := range eng.Turn(t.Context(), caller, in) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == engine.EventDone {
			spec = ev.Spec.Speak
		}
	}
	seen := model.text()
	for _, secret := range []string{"4111", "5500 0000", "alex@example.com"} {
		if strings.Contains(seen, secret) {
			t.Errorf("the model was given %q:\n%s", secret, seen)
		}
	}
	if !strings.Contains(seen, "[card number]") || !strings.Contains(seen, "[email]") {
		t.Errorf("nothing was redacted:\n%s", seen)
	}
	if !strings.HasPrefix(spec, "Here are your latest transactions.") {
		t.Errorf("the redacted turn was answered %q", spec)
	}
}

// TestRefusals: a blocked user is refused before the model or the bank hear of the turn; a
// topic the bank will not discuss is answered with its own line, without tools.
func TestRefusals(t *testing.T) {
	eng, model, backend, audit := setup(t)
	ctx := t.Context()
	if got := ask(ctx, eng, "demo-user-blocked", "What's my balance?"); got != "refused: engine: user_blocked: this account cannot use the assistant; call the bank" {
		t.Errorf("a blocked user: %s", got)
	}
	if got := ask(ctx, eng, "demo-user", "Should I buy crypto?"); !strings.HasPrefix(got, "answered: I can't help with cryptocurrency.") {
		t.Errorf("a refused topic: %s", got)
	}
	if model.text() != "" || len(backend.Received()) != 0 || audit.Len() != 0 {
		t.Errorf("refused turns reached the model (%q), the bank (%d calls) or the audit (%q)", model.text(), len(backend.Received()), audit.String())
	}
	var p *engine.Problem
	for _, err := range eng.Turn(ctx, &engine.Caller{EngineKey: demobank.EngineKey, UserToken: "demo-user-blocked"}, &engine.TurnInput{Transcript: "hi"}) {
		p, _ = err.(*engine.Problem)
	}
	if p == nil || p.Status != 403 || p.Code != "user_blocked" {
		t.Errorf("the blocked user's problem: %+v", p)
	}
}

// TestAudit: each tool call is one audit line naming the tool and the user without the token.
func TestAudit(t *testing.T) {
	eng, _, backend, audit := setup(t)
	if got := ask(t.Context(), eng, "demo-user", "What's my balance?"); !strings.HasPrefix(got, "answered: Your Everyday Checking balance") {
		t.Fatal(got)
	}
	lines := strings.Split(strings.TrimSpace(audit.String()), "\n")
	if len(lines) != 1 || len(backend.Received()) != 1 || !strings.Contains(lines[0], `"tool":"get_balance"`) ||
		!strings.Contains(lines[0], `"declined":false`) || strings.Contains(lines[0], "demo-user") {
		t.Errorf("audit %q, %d bank calls", audit.String(), len(backend.Received()))
	}
}
