package engine_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/usage"
)

// swappableTenants serves one tenant whose configuration the test changes while the engine
// runs, as a reloaded tenant file does.
type swappableTenants struct{ t atomic.Pointer[engine.Tenant] }

func (s *swappableTenants) Tenant(_ context.Context, key string) (*engine.Tenant, error) {
	if t := s.t.Load(); t.Key == key {
		return t, nil
	}
	return nil, engine.ErrUnknownTenant
}

func withLimits(l engine.Limits) *engine.Tenant {
	t := testTenant()
	t.Limits = l
	return t
}

// TestBudgetRefusesBeforeTheWork: past a user's turns of the day, a turn is a 429
// quota_exceeded before anything runs, over HTTP and in process; another user's turn runs;
// raising the budget while the engine runs lets the user go on.
func TestBudgetRefusesBeforeTheWork(t *testing.T) {
	var calls atomic.Int64
	model := enginetest.ModelFunc(func(context.Context, *engine.ModelRequest) []engine.ModelEvent {
		calls.Add(1)
		return enginetest.Text("Hello.")
	})
	tenants := &swappableTenants{}
	tenants.t.Store(withLimits(engine.Limits{TurnsPerUserPerDay: 2}))
	h := newHarness(t, engine.Config{Model: model, Tenants: tenants, Budget: &usage.MemoryBudget{}})
	for range 2 {
		h.turn(`{"transcript":"hi"}`)
	}
	resp := h.do(t.Context(), http.MethodPost, engine.PathTurn, headers(), `{"transcript":"hi"}`)
	p := readProblem(t, resp)
	retry, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	if resp.StatusCode != http.StatusTooManyRequests || p.Code != engine.CodeQuotaExceeded || !p.Retryable || retry < 1 || retry > 86400 {
		t.Errorf("the third turn of the day: %d %+v, Retry-After %q", resp.StatusCode, p, resp.Header.Get("Retry-After"))
	}
	// In process, the same problem is the turn's error.
	var err error
	for _, e := range h.engine.Turn(t.Context(), &engine.Caller{EngineKey: testKey, UserToken: testToken}, &engine.TurnInput{Transcript: "hi"}) {
		err = e
	}
	if pr := (*engine.Problem)(nil); !errors.As(err, &pr) || pr.Code != engine.CodeQuotaExceeded {
		t.Errorf("in process: %v", err)
	}
	if calls.Load() != 2 {
		t.Errorf("%d model calls for 2 turns run", calls.Load())
	}
	other := headers()
	other.Set("X-Token", "another-user-token")
	h.turnWith(other, `{"transcript":"hi"}`)

	tenants.t.Store(withLimits(engine.Limits{TurnsPerUserPerDay: 3}))
	h.turn(`{"transcript":"hi"}`)
}

// TestSpeechBudget: syntheses count the seconds they spoke; past the tenant's speech seconds
// of the day, a tts request is refused before it is synthesized, and audio before it is
// transcribed.
func TestSpeechBudget(t *testing.T) {
	synth := &fakeSynthesizer{Rate: 16000, Seconds: 1}
	var heard atomic.Int64
	hears := transcriberFunc(func(context.Context, []int16, int, string) (string, error) {
		heard.Add(1)
		return "hello", nil
	})
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, Synthesizer: synth, Transcriber: hears,
		Budget: &usage.MemoryBudget{}}, withLimits(engine.Limits{SpeechSecondsPerDay: 5}))
	// "Hello there." reserves 2.2 s and is settled to the 1 s it spoke: after three, 3 + 2.2 s
	// would pass five seconds.
	for i := range 4 {
		resp := h.do(t.Context(), http.MethodPost, engine.PathTTS, headers(), `{"text":"Hello there."}`)
		if i < 3 {
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("synthesis %d: %d", i, resp.StatusCode)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			continue
		}
		if p := readProblem(t, resp); p.Code != engine.CodeQuotaExceeded {
			t.Errorf("synthesis past the budget: %+v", p)
		}
	}
	if got := synth.Read.Load(); got != 3*2*16000 {
		t.Errorf("%d bytes synthesized, want three seconds", got)
	}
	resp := h.do(t.Context(), http.MethodPost, engine.PathTurn, headers(), audioBody(voiced(16000*6), 16000, nil))
	if p := readProblem(t, resp); resp.StatusCode != http.StatusTooManyRequests || p.Code != engine.CodeQuotaExceeded || heard.Load() != 0 {
		t.Errorf("audio past the speech budget: %d %+v, transcribed %d times", resp.StatusCode, p, heard.Load())
	}
}

// TestMemoryBudgetWindows: a day's counts end at UTC midnight, a month's at the month's end;
// a refusal says how long until then; a settlement after its window closed changes nothing
// of the next.
func TestMemoryBudgetWindows(t *testing.T) {
	now := time.Date(2026, 11, 30, 23, 59, 0, 0, time.UTC)
	b := &usage.MemoryBudget{Now: func() time.Time { return now }}
	tenant := withLimits(engine.Limits{TokensPerDay: 1000, TokensPerMonth: 1500})
	ctx := t.Context()
	r, err := b.Reserve(ctx, engine.Spend{Tenant: tenant, Tokens: 900})
	if err != nil {
		t.Fatal(err)
	}
	var q *engine.QuotaError
	if _, err := b.Reserve(ctx, engine.Spend{Tenant: tenant, Tokens: 200}); !errors.As(err, &q) || q.Limit != "tokens_per_day" || q.RetryAfter != time.Minute {
		t.Fatalf("past the day's tokens: %v", err)
	}
	// The turn spent less than it reserved: what is left is free again.
	r.Settle(ctx, engine.Spend{Tenant: tenant, Tokens: 300})
	if _, err := b.Reserve(ctx, engine.Spend{Tenant: tenant, Tokens: 600}); err != nil {
		t.Fatalf("after settling: %v", err)
	}
	now = now.Add(2 * time.Minute) // December 1st: a new day and a new month
	if _, err := b.Reserve(ctx, engine.Spend{Tenant: tenant, Tokens: 1000}); err != nil {
		t.Fatalf("a new day: %v", err)
	}
	if _, err := b.Reserve(ctx, engine.Spend{Tenant: tenant, Tokens: 1}); !errors.As(err, &q) || q.Limit != "tokens_per_day" || q.RetryAfter != 24*time.Hour-time.Minute {
		t.Fatalf("the new day's budget spent: %v", err)
	}
	now = now.Add(24 * time.Hour)
	if _, err := b.Reserve(ctx, engine.Spend{Tenant: tenant, Tokens: 501}); !errors.As(err, &q) || q.Limit != "tokens_per_month" {
		t.Fatalf("past the month's tokens: %v", err)
	}
}

// TestSmallTokenBudgetAnswersUntilSpent: a 5,000-token budget under the default limits (4,096
// output tokens a call) answers turns until what is left cannot hold a reply: each model call
// reserves its own prompt and output bound, lowered to what is left, and is settled before the
// next. The refusal says what a reply needs, and the budget is never passed by more than a call.
func TestSmallTokenBudgetAnswersUntilSpent(t *testing.T) {
	const budget, perCall = 5000, 400
	var (
		calls   atomic.Int64
		lastOut atomic.Int64
	)
	model := enginetest.ModelFunc(func(_ context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		calls.Add(1)
		lastOut.Store(int64(req.MaxOutputTokens))
		return []engine.ModelEvent{{Kind: engine.EventText, Text: "Hello."},
			{Kind: engine.EventFinish, Finish: engine.FinishStop, Usage: engine.Usage{Reported: true, InputTokens: perCall - 20, OutputTokens: 20}}}
	})
	b := &usage.MemoryBudget{}
	h := newHarness(t, engine.Config{Model: model, Budget: b}, withLimits(engine.Limits{TokensPerDay: budget}))
	answered := 0
	var refused *engine.Problem
	for range 30 {
		resp := h.do(t.Context(), http.MethodPost, engine.PathTurn, headers(), `{"transcript":"hi"}`)
		if resp.StatusCode != http.StatusOK {
			p := readProblem(t, resp)
			refused = &p
			break
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		answered++
	}
	if answered == 0 {
		t.Fatalf("a 5,000-token budget answered no turn: %+v", refused)
	}
	spent := int64(answered * perCall)
	if refused == nil || refused.Code != engine.CodeQuotaExceeded || !strings.Contains(refused.Detail, "a reply needs") {
		t.Fatalf("after %d turns (%d tokens): %+v", answered, spent, refused)
	}
	t.Logf("%d turns answered, %d tokens spent of %d, then: %s", answered, spent, budget, refused.Detail)
	// Refused only once what is left cannot hold a reply's prompt and least output.
	if left := budget - spent; left >= perCall+256 {
		t.Errorf("refused with %d tokens left, after %d turns: %s", left, answered, refused.Detail)
	}
	if spent > budget {
		t.Errorf("%d tokens spent of %d", spent, budget)
	}
	// Near the end, a call was given an output bound that fits what was left.
	if out := lastOut.Load(); out >= 4096 || out < 256 {
		t.Errorf("the last call's output bound: %d", out)
	}
	if calls.Load() != int64(answered) {
		t.Errorf("%d model calls for %d turns", calls.Load(), answered)
	}
}

// spendLog is a MemoryBudget that keeps what it reserved.
type spendLog struct {
	usage.MemoryBudget
	mu       sync.Mutex
	reserved []engine.Spend
}

func (b *spendLog) Reserve(ctx context.Context, s engine.Spend) (engine.Reservation, error) {
	r, err := b.MemoryBudget.Reserve(ctx, s)
	if err == nil {
		b.mu.Lock()
		b.reserved = append(b.reserved, s)
		b.mu.Unlock()
	}
	return r, err
}

// TestLimitsAtTheTopReserve: a tenant at the top of each limit's range reserves its model
// calls without overflow: a call reserves its prompt and the whole output bound; near the end
// of the month's 10^15 tokens, it is given what is left; past it, it is refused saying what is
// left.
func TestLimitsAtTheTopReserve(t *testing.T) {
	const maxOut, maxTokens = 1_000_000, 1_000_000_000_000_000
	var out atomic.Int64
	model := enginetest.ModelFunc(func(_ context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		out.Store(int64(req.MaxOutputTokens))
		return []engine.ModelEvent{{Kind: engine.EventText, Text: "Hello."},
			{Kind: engine.EventFinish, Finish: engine.FinishStop, Usage: engine.Usage{Reported: true, InputTokens: 100, OutputTokens: 2}}}
	})
	top := engine.Limits{MaxSteps: 32, MaxOutputTokens: maxOut, TokensPerDay: maxTokens, TokensPerMonth: maxTokens,
		SpeechSecondsPerDay: 1e9, TurnsPerUserPerDay: 1_000_000, UserPerMinute: 1e9, UserBurst: 1e9, TenantPerMinute: 1e9, TenantBurst: 1e9,
		ToolTimeout: engine.Duration(10 * time.Minute), TurnTimeout: engine.Duration(time.Hour),
		ActionTTL: engine.Duration(24 * time.Hour), VerificationMaxAge: engine.Duration(time.Hour)}
	tenant := withLimits(top)
	if err := tenant.Validate(); err != nil {
		t.Fatal(err)
	}
	b := &spendLog{}
	h := newHarness(t, engine.Config{Model: model, Budget: b}, tenant)
	h.turn(`{"transcript":"hi"}`)
	first := b.reserved[len(b.reserved)-1].Tokens
	if out.Load() != maxOut || first <= maxOut || first > maxOut+100_000 {
		t.Fatalf("a call reserved %d tokens, the model was given %d of output", first, out.Load())
	}
	// All but 10 000 tokens of the day are spent elsewhere.
	if _, err := b.Reserve(t.Context(), engine.Spend{Tenant: tenant, Tokens: maxTokens - 102 - 10_000}); err != nil {
		t.Fatal(err)
	}
	h.turn(`{"transcript":"hi"}`)
	if got := out.Load(); got >= 10_000 || got < 256 {
		t.Errorf("near the day's end, the model was given %d tokens of output", got)
	}
	var q *engine.QuotaError
	if _, err := b.Reserve(t.Context(), engine.Spend{Tenant: tenant, Tokens: maxTokens}); !errors.As(err, &q) || q.Remaining < 0 || q.Remaining > 10_000 {
		t.Fatalf("past the top: %v %+v", err, q)
	}
}
