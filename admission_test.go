package engine_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/usage"
)

// admitted admits w of c and returns the problem a host's transport writes for a refusal:
// its code, status and Retry-After; an empty code when admitted.
func admitted(t *testing.T, e *engine.Engine, c *engine.Caller, w engine.Work) (*engine.Admission, string, int, string) {
	t.Helper()
	a, err := e.Admit(t.Context(), c, w)
	if err == nil {
		return a, "", 0, ""
	}
	var p *engine.Problem
	if !errors.As(err, &p) {
		t.Fatalf("not a problem: %v", err)
	}
	rec := httptest.NewRecorder()
	engine.WriteProblem(rec, p)
	return nil, p.Code, rec.Code, rec.Header().Get("Retry-After")
}

// TestHoldBoundsProcessTenantAndUser: a transport's Hold (a phone line's calls) bounds the
// user's calls (429 rate_limited, Retry-After 5), the tenant's (503 overloaded) and the
// process's, each refusal reported to the Observer under its bound's name, and a released call
// makes room again.
func TestHoldBoundsProcessTenantAndUser(t *testing.T) {
	var (
		mu     sync.Mutex
		bounds []string
	)
	obs := engine.Observer{Overload: func(_ context.Context, ev engine.OverloadEvent) {
		mu.Lock()
		bounds = append(bounds, ev.Bound)
		mu.Unlock()
	}}
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, Observer: &obs})
	calls := engine.NewHold("calls", "calls", 3, 2, 1)
	call := engine.Work{Kind: engine.WorkConnection, Hold: calls}
	alice := &engine.Caller{EngineKey: testKey, UserToken: "alice"}
	bob := &engine.Caller{EngineKey: testKey, UserToken: "bob"}
	carol := &engine.Caller{EngineKey: testKey, UserToken: "carol"}

	first, code, _, _ := admitted(t, h.engine, alice, call)
	if code != "" {
		t.Fatalf("the first call: %s", code)
	}
	if _, code, status, retry := admitted(t, h.engine, alice, call); code != engine.CodeRateLimited || status != 429 || retry != "5" {
		t.Errorf("alice's second call: %s %d Retry-After %q", code, status, retry)
	}
	if _, code, _, _ := admitted(t, h.engine, bob, call); code != "" {
		t.Errorf("bob's call: %s", code)
	}
	if _, code, status, retry := admitted(t, h.engine, carol, call); code != engine.CodeOverloaded || status != 503 || retry != "1" {
		t.Errorf("the tenant's third call: %s %d Retry-After %q", code, status, retry)
	}
	first.Release()
	first.Release() // twice is once
	if _, code, _, _ := admitted(t, h.engine, carol, call); code != "" {
		t.Errorf("carol's call once alice's ended: %s", code)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(bounds, []string{"user_calls", "tenant_calls"}) {
		t.Errorf("bounds reported: %v", bounds)
	}
}

// TestUnverifiedCallerIsBoundedByItsName: a phone caller the bank has not named yet is admitted
// by its calling number: the number's own bound holds against it, another number is not
// slowed, and such an admission runs no turn (no user token would reach the backend).
func TestUnverifiedCallerIsBoundedByItsName(t *testing.T) {
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}})
	calls := engine.NewHold("calls", "calls", 0, 0, 1)
	anon := &engine.Caller{EngineKey: testKey}
	a, code, _, _ := admitted(t, h.engine, anon, engine.Work{Kind: engine.WorkConnection, Hold: calls, Unverified: "+441632960001"})
	if code != "" {
		t.Fatalf("an unverified call: %s", code)
	}
	defer a.Release()
	if _, code, status, _ := admitted(t, h.engine, anon, engine.Work{Kind: engine.WorkConnection, Hold: calls, Unverified: "+441632960001"}); code != engine.CodeRateLimited || status != 429 {
		t.Errorf("the same number again: %s %d", code, status)
	}
	if _, code, _, _ := admitted(t, h.engine, anon, engine.Work{Kind: engine.WorkConnection, Hold: calls, Unverified: "+441632960002"}); code != "" {
		t.Errorf("another number: %s", code)
	}
	if _, code, status, _ := admitted(t, h.engine, anon, engine.Work{Kind: engine.WorkTurn, Unverified: "+441632960003"}); code != engine.CodeInvalidRequest || status != 400 {
		t.Errorf("a turn of an unverified caller: %s %d", code, status)
	}
	if _, code, _, _ := admitted(t, h.engine, anon, engine.Work{Kind: engine.WorkConnection, Hold: calls}); code != engine.CodeMissingUserToken {
		t.Errorf("a caller with neither a token nor a name: %s", code)
	}
	for _, err := range h.engine.Turn(t.Context(), anon, &engine.TurnInput{Transcript: "hi", Admission: a}) {
		if err == nil {
			t.Fatal("a turn ran on an unverified caller's admission")
		}
		break
	}
}

// TestRelayCountsRatesNotTheBudget: a message relayed to a person during a handoff passes the
// user's rate limits, and not the model's budget, which no relay spends.
func TestRelayCountsRatesNotTheBudget(t *testing.T) {
	tn := testTenant()
	tn.Limits.TurnsPerUserPerDay = 1
	tn.Limits.UserPerMinute, tn.Limits.UserBurst = 60, 3
	clock := newClock()
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}},
		Budget: &usage.MemoryBudget{Now: clock.Now}, Now: clock.Now}, tn)
	h.turn(helloTurn) // the day's only turn, and one of three requests
	resp := h.do(t.Context(), http.MethodPost, engine.PathTurn, headers(), helloTurn)
	if p := readProblem(t, resp); p.Code != engine.CodeQuotaExceeded {
		t.Fatalf("the second turn: %s", p.Code)
	}
	user := &engine.Caller{EngineKey: testKey, UserToken: testToken}
	if _, code, _, _ := admitted(t, h.engine, user, engine.Work{Kind: engine.WorkRelay}); code != "" {
		t.Errorf("a relay past the budget: %s", code)
	}
	if _, code, status, retry := admitted(t, h.engine, user, engine.Work{Kind: engine.WorkRelay}); code != engine.CodeRateLimited || status != 429 || retry != "1" {
		t.Errorf("a relay past the rate limit: %s %d %q", code, status, retry)
	}
}
