package engine_test

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/usage"
)

// countingTools is a toolset that counts its listings. While gate is open (nil or closed)
// listings answer at once; fail makes them fail.
type countingTools struct {
	*enginetest.FuncToolset
	lists atomic.Int64
	gate  chan struct{}
	fail  atomic.Bool
}

func (c *countingTools) Tools(ctx context.Context, env *engine.ToolEnv) ([]engine.Tool, error) {
	c.lists.Add(1)
	if c.gate != nil {
		select {
		case <-c.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if c.fail.Load() {
		return nil, errors.New("backend down")
	}
	return c.FuncToolset.Tools(ctx, env)
}

// warmModel is a scripted model that is also a Warmer, recording what it was asked.
type warmModel struct {
	enginetest.ScriptedModel
	mu     sync.Mutex
	warms  []*engine.ModelRequest
	turns  []*engine.ModelRequest
	warmed chan struct{} // receives after each Warm
}

func newWarmModel() *warmModel {
	return &warmModel{ScriptedModel: enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}},
		warmed: make(chan struct{}, 64)}
}

func (m *warmModel) Warm(_ context.Context, req *engine.ModelRequest) (engine.ModelEvent, error) {
	m.mu.Lock()
	m.warms = append(m.warms, req)
	m.mu.Unlock()
	m.warmed <- struct{}{}
	return engine.ModelEvent{Kind: engine.EventFinish, Finish: engine.FinishLength,
		Usage: engine.Usage{InputTokens: 700, CachedTokens: 0, OutputTokens: 1, Reported: true}}, nil
}

func (m *warmModel) Stream(ctx context.Context, req *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	m.mu.Lock()
	m.turns = append(m.turns, req)
	m.mu.Unlock()
	return m.ScriptedModel.Stream(ctx, req)
}

func (m *warmModel) counts() (warms, turns int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.warms), len(m.turns)
}

func toolNames(specs []engine.ToolSpec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return out
}

// TestWarmUpCollapsesAndFeedsTheFirstTurn creates sessions at once while the tenant's backend
// is slow: every answer comes at once, the tools are listed once, the model warms once with
// the prompt a turn sends, and the next turn lists nothing.
func TestWarmUpCollapsesAndFeedsTheFirstTurn(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tools := &countingTools{FuncToolset: bankTools(), gate: make(chan struct{})}
	model := newWarmModel()
	calls := make(chan engine.ModelCallEvent, 16)
	h := newHarness(t, engine.Config{Model: model, Toolset: tools,
		Observer: &engine.Observer{ModelCall: func(_ context.Context, e engine.ModelCallEvent) { calls <- e }}})

	const n = 8
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp := h.do(t.Context(), http.MethodPost, engine.PathCreateSession, headers(), ``)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				t.Errorf("create-session: %d", resp.StatusCode)
			}
		})
	}
	wg.Wait() // every 201 arrived while the listing is still blocked
	close(tools.gate)
	<-model.warmed

	// The warm-up is metered as what it cost, marked as a warm-up of no turn.
	if w := <-calls; !w.Warmup || w.Usage.InputTokens != 700 || w.Step != 0 || w.TurnID != "" || w.Tenant != testKey {
		t.Errorf("the warm-up observed as %+v", w)
	}
	res := h.turn(`{"transcript":"hi"}`)
	if res.spec.Speak != "Hi." {
		t.Fatalf("spec %+v", res.spec)
	}
	if c := <-calls; c.Warmup || c.Step != 1 {
		t.Errorf("the turn's call observed as %+v", c)
	}
	if got := tools.lists.Load(); got != 1 {
		t.Errorf("tools listed %d times for %d sessions and a turn, want 1", got, n)
	}
	h.srv.Close()
	h.engine.Close()
	warms, turns := model.counts()
	if warms != 1 || turns != 1 {
		t.Fatalf("%d warm-ups, %d turn completions; want 1 and 1", warms, turns)
	}
	w, tr := model.warms[0], model.turns[0]
	if w.System != tr.System || w.Mode != engine.ModeText || w.Locale != "en" || len(w.Messages) != 0 ||
		w.Environment != engine.EnvProduction || w.Tenant.Key != testKey ||
		!slices.Equal(toolNames(w.Tools), toolNames(tr.Tools)) || !slices.Contains(toolNames(w.Tools), "get_balance") {
		t.Errorf("warm request %+v does not match the turn's %+v", w, tr)
	}
}

// TestFailedWarmUpIsNotCached checks that a warm-up whose tool listing failed is done again by
// the next session, and that its tool list then serves the turns.
func TestFailedWarmUpIsNotCached(t *testing.T) {
	tools := &countingTools{FuncToolset: bankTools()}
	tools.fail.Store(true)
	model := newWarmModel()
	h := newHarness(t, engine.Config{Model: model, Toolset: tools})

	h.createSession(t, headers(), ``)
	waitFor(t, "the failed warm-up", func() bool { return strings.Contains(h.logs.String(), "warm-up failed") })
	if w, _ := model.counts(); w != 0 {
		t.Fatalf("the model warmed without tools")
	}
	resp := h.do(t.Context(), http.MethodPost, "/engine", headers(), `{"transcript":"hi"}`)
	if p := readProblem(t, resp); resp.StatusCode != http.StatusBadGateway || p.Code != engine.CodeToolsUnavailable {
		t.Fatalf("turn while the backend is down: %d %s", resp.StatusCode, p.Code)
	}

	tools.fail.Store(false)
	h.createSession(t, headers(), ``)
	<-model.warmed
	if got := tools.lists.Load(); got != 3 {
		t.Fatalf("tools listed %d times, want 3 (failed warm-up, failed turn, second warm-up)", got)
	}
	h.turn(`{"transcript":"hi"}`)
	h.turn(`{"transcript":"hi"}`)
	if got := tools.lists.Load(); got != 3 {
		t.Fatalf("turns listed the tools again: %d listings", got)
	}
}

func TestToolListExpires(t *testing.T) {
	clk := newClock()
	tools := &countingTools{FuncToolset: bankTools()}
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}
	h := newHarness(t, engine.Config{Model: model, Toolset: tools, Now: clk.Now, ToolListTTL: time.Minute})
	h.turn(`{"transcript":"hi"}`)
	h.turn(`{"transcript":"hi"}`)
	if got := tools.lists.Load(); got != 1 {
		t.Fatalf("%d listings for two turns within the TTL", got)
	}
	clk.Add(61 * time.Second)
	h.turn(`{"transcript":"hi"}`)
	if got := tools.lists.Load(); got != 2 {
		t.Fatalf("%d listings after the TTL", got)
	}

	uncached := &countingTools{FuncToolset: bankTools()}
	h2 := newHarness(t, engine.Config{Model: model, Toolset: uncached, ToolListTTL: -1})
	h2.turn(`{"transcript":"hi"}`)
	h2.turn(`{"transcript":"hi"}`)
	if got := uncached.lists.Load(); got != 2 {
		t.Fatalf("%d listings for two turns without a cache", got)
	}
}

// TestCloseStopsWarmUps checks that a warm-up stuck on a backend that never answers ends when
// the engine closes, leaving no goroutine behind.
func TestCloseStopsWarmUps(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tools := &countingTools{FuncToolset: bankTools(), gate: make(chan struct{})}
	h := newHarness(t, engine.Config{Model: newWarmModel(), Toolset: tools})
	h.createSession(t, headers(), ``)
	waitFor(t, "the warm-up to list tools", func() bool { return tools.lists.Load() == 1 })
	h.srv.Close()
	h.engine.Close()
	h.engine.Close()
}

// TestTurnGivesUpOnASlowListing checks that a client leaving while the tools are listed ends
// its turn without failing the listing for others.
func TestTurnGivesUpOnASlowListing(t *testing.T) {
	tools := &countingTools{FuncToolset: bankTools(), gate: make(chan struct{})}
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}
	h := newHarness(t, engine.Config{Model: model, Toolset: tools})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := h.srv.Client().Do(mustRequest(t, ctx, h.srv.URL+"/engine"))
		if err == nil {
			resp.Body.Close()
		}
	}()
	waitFor(t, "the turn to list tools", func() bool { return tools.lists.Load() == 1 })
	cancel()
	<-done
	close(tools.gate)
	h.turn(`{"transcript":"hi"}`)
	if got := tools.lists.Load(); got != 1 {
		t.Fatalf("%d listings; the abandoned listing should have served the next turn", got)
	}
}

func mustRequest(t *testing.T, ctx context.Context, url string) *http.Request {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"transcript":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = headers()
	return req
}

// recordingBudget is a MemoryBudget that records what was reserved and settled.
type recordingBudget struct {
	usage.MemoryBudget
	mu       sync.Mutex
	reserved []engine.Spend
	refused  int
	settled  []engine.Spend
}

func (b *recordingBudget) Reserve(ctx context.Context, s engine.Spend) (engine.Reservation, error) {
	r, err := b.MemoryBudget.Reserve(ctx, s)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		b.refused++
		return nil, err
	}
	b.reserved = append(b.reserved, s)
	return recordingReservation{r, b}, nil
}

type recordingReservation struct {
	engine.Reservation
	b *recordingBudget
}

func (r recordingReservation) Settle(ctx context.Context, spent engine.Spend) error {
	r.b.mu.Lock()
	r.b.settled = append(r.b.settled, spent)
	r.b.mu.Unlock()
	return r.Reservation.Settle(ctx, spent)
}

// TestWarmUpIsChargedToTheBudget: under a token budget, the warm-up a session starts is
// reserved before the model is called and settled to the tokens it reported; when the budget
// has no room for it, the model is not called.
func TestWarmUpIsChargedToTheBudget(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tokens int64
		warms  int
	}{{"room", 1_000_000, 1}, {"no room", 10, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			model, budget := newWarmModel(), &recordingBudget{}
			tenant := testTenant()
			tenant.Limits.TokensPerDay = tc.tokens
			h := newHarness(t, engine.Config{Model: model, Toolset: bankTools(), Budget: budget}, tenant)
			resp := h.do(t.Context(), http.MethodPost, engine.PathCreateSession, headers(), ``)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("create-session: %d", resp.StatusCode)
			}
			h.engine.Close() // waits for the warm-up
			budget.mu.Lock()
			defer budget.mu.Unlock()
			if warms, _ := model.counts(); warms != tc.warms {
				t.Fatalf("%d warm-ups, want %d", warms, tc.warms)
			}
			if tc.warms == 0 {
				if budget.refused != 1 || len(budget.reserved) != 0 {
					t.Errorf("reserved %+v, refused %d", budget.reserved, budget.refused)
				}
				return
			}
			if len(budget.reserved) != 1 || budget.reserved[0].Tokens < 100 || budget.reserved[0].Turns != 0 ||
				len(budget.settled) != 1 || budget.settled[0].Tokens != 701 {
				t.Errorf("reserved %+v, settled %+v", budget.reserved, budget.settled)
			}
		})
	}
}
