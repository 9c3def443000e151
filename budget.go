package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/convengine/engine/internal/prompt"
)

// A Budget holds tenants to the spending limits of their [Limits] (TokensPerDay,
// TokensPerMonth, SpeechSecondsPerDay, TurnsPerUserPerDay), in one process or across every
// replica that shares it. Before work that spends (a turn, before its audio is transcribed and
// its model called; a transcription; a synthesis) the engine reserves the most the work may
// spend, and the work is refused, before anything is done, when a limit would be passed; once
// the work is over the reservation is settled to what it spent. Package usage keeps the counts
// in memory, package redisstore in Redis for every replica.
type Budget interface {
	// Reserve counts s against the limits of s.Tenant, unless one of them would be passed: it
	// then counts nothing and returns a *QuotaError. Any other error refuses the work with 503
	// store_unavailable: budgets fail closed.
	Reserve(ctx context.Context, s Spend) (Reservation, error)
}

// A Reservation is what one [Budget.Reserve] counted.
type Reservation interface {
	// Settle replaces what was reserved by what was spent, in the windows the reservation was
	// counted in, even if they have closed since.
	Settle(ctx context.Context, spent Spend) error
}

// Spend is what a piece of work may spend, or spent, of a tenant's budget.
type Spend struct {
	Tenant *Tenant // whose Limits apply
	// User is the user's keyed hash, as [Engine.UserKey]: turns are counted per user.
	User          string
	Tokens        int64 // input and output tokens
	SpeechSeconds float64
	Turns         int
}

// QuotaError is a [Budget]'s refusal: Limit (the JSON name of the Limits field, such as
// "tokens_per_day") would be passed. Its window ends after RetryAfter. Remaining is what the
// limit has left in its window (tokens, milliseconds of speech, turns), when the Budget knows
// it: the engine then gives a model call a lower output bound that fits, rather than none.
type QuotaError struct {
	Limit      string
	RetryAfter time.Duration
	Remaining  int64
}

func (q *QuotaError) Error() string { return "engine: over the " + q.Limit + " budget" }

// defaultBudgetOutputTokens bounds each completion of a tenant with a token budget and no
// Limits.MaxOutputTokens, so that what a turn reserves is a bound of what it spends.
const defaultBudgetOutputTokens = 4096

// budgeted reports whether the tenant has a spending limit.
func (l *Limits) budgeted() bool {
	return l.TokensPerDay > 0 || l.TokensPerMonth > 0 || l.SpeechSecondsPerDay > 0 || l.TurnsPerUserPerDay > 0
}

// maxOutputTokens bounds each completion: Limits.MaxOutputTokens, or the default under a token
// budget; 0 leaves it to the model.
func (l *Limits) maxOutputTokens() int {
	if l.MaxOutputTokens == 0 && (l.TokensPerDay > 0 || l.TokensPerMonth > 0) {
		return defaultBudgetOutputTokens
	}
	return l.MaxOutputTokens
}

// reserve asks the Budget for s of tenant's user: nil, nil when no budget applies; a 429
// quota_exceeded problem over budget; 503 when the Budget cannot answer.
func (e *Engine) reserve(ctx context.Context, requestID string, s Spend) (Reservation, *Problem) {
	if e.budget == nil || !s.Tenant.Limits.budgeted() {
		return nil, nil
	}
	r, err := e.budget.Reserve(ctx, s)
	return r, e.budgetProblem(ctx, requestID, s, err, "")
}

// budgetProblem is the problem of a Budget's error, nil for none; needs, when not "", says in
// the detail what the work needed.
func (e *Engine) budgetProblem(ctx context.Context, requestID string, s Spend, err error, needs string) *Problem {
	var q *QuotaError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &q):
		secs := max(1, int(math.Ceil(q.RetryAfter.Seconds())))
		return newProblem(http.StatusTooManyRequests, CodeQuotaExceeded,
			fmt.Sprintf("the assistant has used its %s budget%s; try again in %d seconds", q.Limit, needs, secs)).WithRetryAfter(time.Duration(secs) * time.Second)
	default:
		e.log.ErrorContext(ctx, "budget unavailable", "requestId", requestID, "tenant", s.Tenant.Key, "err", err)
		return newProblem(http.StatusServiceUnavailable, CodeStoreUnavailable, "the engine cannot check the assistant's budget right now; try again")
	}
}

// settle settles r to spent, whatever became of the work's context. A settlement that fails
// leaves the reservation counted, which errs on the side of the budget.
func (e *Engine) settle(ctx context.Context, r Reservation, spent Spend) {
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := r.Settle(ctx, spent); err != nil {
		e.log.WarnContext(ctx, "settling a budget reservation failed; it stays counted", "tenant", spent.Tenant.Key,
			"tokens", spent.Tokens, "speechSeconds", spent.SpeechSeconds, "err", err)
	}
}

// minCallOutput is the least output a model call is given when the token budget has little
// left: a call that cannot have it is not made.
const minCallOutput = 256

// tokenBudget reports whether the tenant has a token budget.
func (l *Limits) tokenBudget() bool { return l.TokensPerDay > 0 || l.TokensPerMonth > 0 }

// reserveTurn reserves what a turn needs of the budget before it starts: its place among its
// user's turns and, when its model will be called under a token budget, its first call. Each
// later call reserves its own (reserveCall) just before it runs, and every call is settled to
// what it spent before the next: a turn overshoots its budget by one call at most, and a small
// budget answers turns until it is spent.
func (e *Engine) reserveTurn(ctx context.Context, t *turn) *Problem {
	s := Spend{Tenant: t.req.Tenant, User: t.userKey, Turns: 1}
	l := &t.req.Tenant.Limits
	if !l.budgeted() {
		return nil
	}
	if !l.tokenBudget() || t.guardAnswer != "" || t.unclear {
		var p *Problem
		t.budget, p = e.reserve(ctx, t.req.ID, s)
		return p
	}
	t.mreq = e.modelRequest(t)
	r, p := e.reserveCall(ctx, t, s, t.mreq)
	t.budget, t.call = r, r
	return p
}

// reserveCall reserves s and one model call of mreq: its prompt (estimated as the engine does,
// four bytes a token) and its output bound, which is lowered to what the budget has left when
// the whole bound does not fit, down to minCallOutput. It sets mreq's output bound to what
// was reserved. The sums cannot overflow: the output bound is at most 10^6 (Limits), the
// prompt a quarter of what the engine holds in memory, and what a Budget says is left is
// taken between 0 and the largest token limit.
func (e *Engine) reserveCall(ctx context.Context, t *turn, s Spend, mreq *ModelRequest) (Reservation, *Problem) {
	prompt := int64((promptBytes(mreq) + 3) / 4)
	out := int64(t.req.Tenant.Limits.maxOutputTokens())
	var (
		r   Reservation
		err error
		q   *QuotaError
	)
	// A refusal that says what is left is tried again with what fits: once for each of the
	// day's and the month's limits.
	for try := 0; try < 3; try++ {
		s.Tokens = prompt + out
		if r, err = e.budget.Reserve(ctx, s); !errors.As(err, &q) || !strings.HasPrefix(q.Limit, "tokens_") {
			break
		}
		fit := min(max(q.Remaining, 0), maxTokensLimit) - prompt
		if fit >= out || fit < minCallOutput {
			break
		}
		out = fit
	}
	needs := ""
	if q != nil && err != nil && strings.HasPrefix(q.Limit, "tokens_") {
		needs = fmt.Sprintf(": a reply needs %d tokens (its prompt of %d and %d of output) and %d are left",
			prompt+minCallOutput, prompt, minCallOutput, max(0, q.Remaining))
	}
	if p := e.budgetProblem(ctx, t.req.ID, s, err, needs); p != nil {
		return nil, p
	}
	mreq.MaxOutputTokens = int(out)
	return r, nil
}

// settleCall settles the reservation of the model call that just ran to the tokens it spent
// (and the turn, when the call was reserved with it).
func (e *Engine) settleCall(ctx context.Context, t *turn, tokens int64) {
	if t.call == nil {
		return
	}
	spent := Spend{Tenant: t.req.Tenant, User: t.userKey, Tokens: tokens}
	if t.call == t.budget {
		spent.Turns = t.counted
		t.budget = nil // settled here, not when the turn ends
	}
	e.settle(ctx, t.call, spent)
	t.call = nil
}

// promptBytes measures what req sends the model: the system prompt, the messages and the tools.
func promptBytes(req *ModelRequest) int {
	n := len(req.System) + len(req.Context)
	for _, m := range req.Messages {
		n += len(m.Content)
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Arguments)
		}
	}
	for _, s := range req.Tools {
		n += len(s.Name) + len(s.Description) + len(s.Parameters)
	}
	return n
}

// warnBudget logs, once per tenant as it is loaded, a token budget that cannot hold one model
// call: the tenant's system prompt (the tools and the conversation come on top) and the least
// output a call is given. Every turn of such a tenant is refused with quota_exceeded.
func (e *Engine) warnBudget(ctx context.Context, t *Tenant) {
	need := int64((len(prompt.Stable(t.Prompt))+3)/4 + minCallOutput)
	for _, l := range []struct {
		name  string
		limit int64
	}{{"tokens_per_day", t.Limits.TokensPerDay}, {"tokens_per_month", t.Limits.TokensPerMonth}} {
		if l.limit > 0 && l.limit < need {
			e.log.WarnContext(ctx, "the tenant's token budget cannot hold one model call: every turn will be refused",
				"tenant", t.Key, "limit", l.name, "tokens", l.limit, "needs", need)
		}
	}
}
