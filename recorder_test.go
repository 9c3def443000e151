package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/pii"
	"github.com/convengine/engine/widgets"
)

// keptRecords is a Recorder that keeps what it is given, or refuses actions while failing.
type keptRecords struct {
	mu       sync.Mutex
	turns    []*engine.RecordedTurn
	actions  []*engine.RecordedAction
	outcomes []*engine.ActionOutcome
	failing  bool
}

func (k *keptRecords) Turn(_ context.Context, r *engine.RecordedTurn) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.turns = append(k.turns, r)
}

func (k *keptRecords) Action(_ context.Context, r *engine.RecordedAction) (func(context.Context, *engine.ActionOutcome), error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.failing {
		return nil, errors.New("the record store is down")
	}
	k.actions = append(k.actions, r)
	return func(_ context.Context, o *engine.ActionOutcome) {
		k.mu.Lock()
		defer k.mu.Unlock()
		k.outcomes = append(k.outcomes, o)
	}, nil
}

func recordedDemo(t *testing.T, rec *keptRecords) *enginetest.Demo {
	privacy, err := pii.NewPrivacy(&pii.PrivacyOptions{Default: pii.Banking()})
	if err != nil {
		t.Fatal(err)
	}
	return newDemo(t, &enginetest.DemoOptions{Config: engine.Config{Recorder: rec, Privacy: privacy}})
}

// TestTheRecordSeesWhatTheUserSawAndApproved: a turn is recorded with the user's words as the
// model saw them (a card number as a placeholder), the answer as the user saw it (a confirm's
// token as its hash), and an execute's evidence comes before its backend is called.
func TestTheRecordSeesWhatTheUserSawAndApproved(t *testing.T) {
	rec := &keptRecords{}
	d := recordedDemo(t, rec)
	c := confirmFor(t, d, demobank.EngineKey, "send 20 dollars to Alex from card 4111 1111 1111 1111")
	rec.mu.Lock()
	if len(rec.turns) != 1 {
		t.Fatalf("%d turns recorded, want 1", len(rec.turns))
	}
	turn := rec.turns[0]
	rec.mu.Unlock()
	if strings.Contains(turn.Input, "4111") || !strings.Contains(turn.Input, "send 20 dollars") {
		t.Errorf("input recorded as %q: not as the model saw it", turn.Input)
	}
	if turn.Disclosure == "" || turn.User == "" || strings.Contains(turn.User, testToken) || turn.ConversationID == "" || turn.TurnID == "" {
		t.Errorf("turn record %+v lacks its disclosure or keys, or holds the token", turn.RecordKey)
	}
	var confirm widgets.Confirm
	for _, w := range turn.Spec.Widgets {
		if cw, ok := w.(widgets.Confirm); ok {
			confirm = cw
		}
	}
	if !strings.HasPrefix(confirm.Execute.Token, "sha256:") || confirm.Body != c.Body {
		t.Errorf("recorded confirm %+v, want the shown copy %q and the token's hash", confirm, c.Body)
	}

	received := len(d.Backend.Received())
	rec.mu.Lock()
	rec.failing = true
	rec.mu.Unlock()
	status, body := execute(t, d, demobank.EngineKey, executeBody(c.Execute, freshAuth()))
	if status != http.StatusServiceUnavailable || !strings.Contains(body, engine.CodeRecordUnavailable) {
		t.Fatalf("execute while the record fails: %d %s", status, body)
	}
	if len(d.Backend.Received()) != received {
		t.Fatal("the backend was called for an action whose evidence was not recorded")
	}
	rec.mu.Lock()
	rec.failing = false
	rec.mu.Unlock()
	// Nothing moved: the same token runs once the record is back.
	if status, body = execute(t, d, demobank.EngineKey, executeBody(c.Execute, freshAuth())); status != http.StatusOK {
		t.Fatalf("execute after the record came back: %d %s", status, body)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.actions) != 1 || len(rec.outcomes) != 1 {
		t.Fatalf("%d actions and %d outcomes recorded, want 1 and 1", len(rec.actions), len(rec.outcomes))
	}
	a := rec.actions[0]
	if a.ConversationID != turn.ConversationID || a.TurnID != turn.TurnID || a.User != turn.User || a.TokenID != c.ID ||
		"sha256:"+a.TokenSHA256 != confirm.Execute.Token || a.Confirm.Body != c.Body || a.Method != "faceid" {
		t.Errorf("action evidence %+v does not join its confirm %+v", a, confirm)
	}
	if strings.Contains(string(a.Claims), "sealed") {
		t.Errorf("the claims recorded hold the sealed arguments: %s", a.Claims)
	}
	if o := rec.outcomes[0]; o.Outcome != "ok" || o.Reply == nil || o.Reply.Done.Title != "Money sent" {
		t.Errorf("outcome %+v", o)
	}
}

// TestDisclosureStartsAConversation: the tenant's AI disclosure rides on the start event of a
// conversation's first turn, and not on the turns after it.
func TestDisclosureStartsAConversation(t *testing.T) {
	d := newDemo(t, nil)
	h := harnessOf(t, d.Server, d.Engine, d.Logs)
	first := h.turnWith(demoHeaders(), `{"transcript":"what is my balance"}`)
	var start struct {
		Disclosure string `json:"disclosure"`
	}
	if err := json.Unmarshal(first.events[0].Data, &start); err != nil || first.events[0].Name != "start" {
		t.Fatalf("first event %+v", first.events[0])
	}
	if start.Disclosure != "You are talking to Demo Bank's automated assistant." {
		t.Errorf("disclosure %q", start.Disclosure)
	}
	later := h.turnWith(demoHeaders(), `{"transcript":"and my savings","messages":[{"role":"user","content":"what is my balance"},{"role":"assistant","content":"It is $1,234.56."}]}`)
	if strings.Contains(string(later.events[0].Data), "disclosure") {
		t.Errorf("a later turn's start carries the disclosure: %s", later.events[0].Data)
	}
	es := h.turnWith(demoHeaders(), `{"transcript":"cuál es mi saldo","meta":{"locale":"es"}}`)
	if !strings.Contains(string(es.events[0].Data), "Está hablando con el asistente automático") {
		t.Errorf("Spanish start %s", es.events[0].Data)
	}
}
