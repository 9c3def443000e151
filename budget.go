package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
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
// "tokens_per_day") would be passed. Its window ends after RetryAfter.
type QuotaError struct {
	Limit      string
	RetryAfter time.Duration
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
	var q *QuotaError
	switch {
	case errors.As(err, &q):
		secs := max(1, int(math.Ceil(q.RetryAfter.Seconds())))
		p := newProblem(http.StatusTooManyRequests, CodeQuotaExceeded,
			fmt.Sprintf("the assistant has used its %s budget; try again in %d seconds", q.Limit, secs))
		p.header = http.Header{"Retry-After": {strconv.Itoa(secs)}}
		return nil, p
	case err != nil:
		e.log.ErrorContext(ctx, "budget unavailable", "requestId", requestID, "tenant", s.Tenant.Key, "err", err)
		return nil, newProblem(http.StatusServiceUnavailable, CodeStoreUnavailable, "the engine cannot check the assistant's budget right now; try again")
	}
	return r, nil
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

// turnSpend is the most a turn may spend: one turn of its user, and, under a token budget,
// each step's prompt and maximum output (the prompt estimated as the engine does, four bytes a
// token, and the tool results to come left out).
func (e *Engine) turnSpend(t *turn) Spend {
	s := Spend{Tenant: t.req.Tenant, User: t.userKey, Turns: 1}
	l := &t.req.Tenant.Limits
	if l.TokensPerDay == 0 && l.TokensPerMonth == 0 || t.guardAnswer != "" || t.unclear {
		return s
	}
	steps := l.MaxSteps
	if steps == 0 {
		steps = defaultMaxSteps
	}
	t.mreq = e.modelRequest(t)
	s.Tokens = int64(steps * (l.maxOutputTokens() + (promptBytes(t.mreq)+3)/4))
	return s
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
