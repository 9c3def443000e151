package redisstore_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/redisstore"
)

// budgetModel answers every request at once with a fixed, reported usage, and counts the
// requests and the tokens it reported.
type budgetModel struct {
	calls  atomic.Int64
	tokens atomic.Int64
	// reserve is what a turn reserves: its one step's maximum output, 50, and its prompt at
	// four bytes a token.
	reserve atomic.Int64
}

const (
	callInput  = 100
	callOutput = 40
)

func (m *budgetModel) model() enginetest.ModelFunc {
	return func(_ context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		n := len(req.System) + len(req.Context)
		for _, msg := range req.Messages {
			n += len(msg.Content)
		}
		for _, s := range req.Tools {
			n += len(s.Name) + len(s.Description) + len(s.Parameters)
		}
		m.reserve.Store(int64(50 + (n+3)/4))
		m.calls.Add(1)
		m.tokens.Add(callInput + callOutput)
		return []engine.ModelEvent{engine.TextEvent("Done."), {Kind: engine.EventFinish, Finish: engine.FinishStop,
			Usage: engine.Usage{InputTokens: callInput, OutputTokens: callOutput, Reported: true}}}
	}
}

// budgetTenant is a tenant with a daily token budget, one step a turn and 50 output tokens a
// call: a turn reserves 50 tokens and its prompt's estimate.
func budgetTenant(t *testing.T, limits engine.Limits) engine.TenantStore {
	t.Helper()
	limits.MaxSteps, limits.MaxOutputTokens = 1, 50
	tenants, err := engine.NewStaticTenants(&engine.Tenant{Key: "pk_budget", Name: "Budget Bank", Locale: "en",
		Prompt: "You are Budget Bank's assistant.", Limits: limits,
		Environments: map[string]*engine.Environment{engine.EnvProduction: {BackendURL: "https://bank.invalid"}}})
	if err != nil {
		t.Fatal(err)
	}
	return tenants
}

// budgetReplicas serves tenants from n engines sharing store's Redis through stores of their own.
func budgetReplicas(t *testing.T, n int, tenants engine.TenantStore, model engine.Model, newStore func() *redisstore.Store) []*httptest.Server {
	t.Helper()
	var out []*httptest.Server
	for range n {
		store := newStore()
		e, err := engine.New(engine.Config{Tenants: tenants, Model: model, SigningKey: make([]byte, 32),
			Sessions: store, Replay: store, Actions: store, Budget: store, MaxConcurrentTurns: 256,
			Logger: enginetest.DebugLogger()})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(e.Handler())
		t.Cleanup(srv.Close)
		out = append(out, srv)
	}
	return out
}

// budgetTurn posts a turn as user and returns the status, the problem's code and Retry-After.
func budgetTurn(t *testing.T, srv *httptest.Server, user string) (int, string, string) {
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+engine.PathTurn, strings.NewReader(`{"transcript":"what is my balance"}`))
	req.Header = http.Header{"X-Engine-Key": {"pk_budget"}, "X-Token": {user}, "X-Request-Id": {"prod-budget"}, "Content-Type": {"application/json"}}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Error(err)
		return 0, "", ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var p struct{ Code string }
	if resp.StatusCode != http.StatusOK {
		json.Unmarshal(body, &p)
	} else if !strings.Contains(string(body), "event: done") {
		t.Errorf("a turn without its done event: %s", body)
	}
	return resp.StatusCode, p.Code, resp.Header.Get("Retry-After")
}

// TestBudgetAcrossReplicas runs 200 turns at once on two engines sharing one Redis under a
// daily token budget, then turns one at a time until one is refused: the tokens the model
// reported stop within one turn's reservation of the budget, never past it, and the refused
// turn is a 429 quota_exceeded that never reached the model.
func TestBudgetAcrossReplicas(t *testing.T) {
	needRedis(t)
	const budget = 10_000
	tenants := budgetTenant(t, engine.Limits{TokensPerDay: budget})
	model := &budgetModel{}
	p := prefix(t)
	replicas := budgetReplicas(t, 2, tenants, model.model(), func() *redisstore.Store {
		return redisstore.New(client(t, standalone), &redisstore.Options{Prefix: p, Timeout: generous})
	})

	var (
		wg      sync.WaitGroup
		refused atomic.Int64
	)
	for i := range 200 {
		wg.Go(func() {
			status, code, _ := budgetTurn(t, replicas[i%2], "user-"+strconv.Itoa(i))
			switch {
			case status == http.StatusTooManyRequests && code == engine.CodeQuotaExceeded:
				refused.Add(1)
			case status != http.StatusOK:
				t.Errorf("turn %d: %d %s", i, status, code)
			}
		})
	}
	wg.Wait()
	if refused.Load() == 0 {
		t.Fatalf("200 turns of %d tokens each within a budget of %d: none refused", callInput+callOutput, budget)
	}
	// One at a time, until the budget refuses.
	var status int
	var code, retry string
	for i := 0; i < 200; i++ {
		if status, code, retry = budgetTurn(t, replicas[i%2], "late-user"); status != http.StatusOK {
			break
		}
	}
	calls := model.calls.Load()
	if status != http.StatusTooManyRequests || code != engine.CodeQuotaExceeded {
		t.Fatalf("past the budget: %d %q", status, code)
	}
	if secs, err := strconv.Atoi(retry); err != nil || secs < 1 || secs > 86400 {
		t.Errorf("Retry-After %q, want the seconds to the end of the UTC day", retry)
	}
	// The refused turn called no model, and neither does the next.
	if status, code, _ := budgetTurn(t, replicas[0], "another-user"); status != http.StatusTooManyRequests || code != engine.CodeQuotaExceeded {
		t.Errorf("a new user past the tenant's budget: %d %q", status, code)
	}
	if got := model.calls.Load(); got != calls {
		t.Errorf("the model was called %d times by refused turns", got-calls)
	}
	spent, reserve := model.tokens.Load(), model.reserve.Load()
	if spent > budget || spent <= budget-reserve {
		t.Errorf("the model reported %d tokens under a budget of %d: want at most the budget, and within a turn's reservation (%d) of it",
			spent, budget, reserve)
	}
	t.Logf("%d tokens spent of %d (a turn reserves %d); %d of the 200 concurrent turns refused", spent, budget, reserve, refused.Load())
}

// TestBudgetFailsClosed: with Redis gone, a budgeted tenant's turn is refused with 503
// store_unavailable, before the model is called.
func TestBudgetFailsClosed(t *testing.T) {
	needRedis(t)
	srv := startTestRedis(t)
	tenants := budgetTenant(t, engine.Limits{TokensPerDay: 1_000_000, TurnsPerUserPerDay: 3})
	model := &budgetModel{}
	replicas := budgetReplicas(t, 1, tenants, model.model(), func() *redisstore.Store {
		return redisstore.New(client(t, srv), &redisstore.Options{Prefix: prefix(t), Timeout: 500 * time.Millisecond})
	})
	// Three turns a user a day: the fourth is refused, another user's is not.
	for i := range 3 {
		if status, code, _ := budgetTurn(t, replicas[0], "alice"); status != http.StatusOK {
			t.Fatalf("turn %d: %d %s", i, status, code)
		}
	}
	if status, code, _ := budgetTurn(t, replicas[0], "alice"); status != http.StatusTooManyRequests || code != engine.CodeQuotaExceeded {
		t.Errorf("alice's fourth turn of the day: %d %q", status, code)
	}
	if status, _, _ := budgetTurn(t, replicas[0], "bob"); status != http.StatusOK {
		t.Errorf("bob's first turn: %d", status)
	}
	calls := model.calls.Load()
	srv.Stop()
	if status, code, _ := budgetTurn(t, replicas[0], "bob"); status != http.StatusServiceUnavailable || code != engine.CodeStoreUnavailable {
		t.Errorf("with Redis down: %d %q, want 503 store_unavailable", status, code)
	}
	if got := model.calls.Load(); got != calls {
		t.Errorf("the model was called with the budget unknown")
	}
}
