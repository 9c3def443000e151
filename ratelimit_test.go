package engine_test

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

func userHeaders(token string) http.Header {
	h := headers()
	h.Set("X-Token", token)
	return h
}

// checkRateLimited checks a 429 rate_limited answer and returns its Retry-After.
func checkRateLimited(t *testing.T, resp *http.Response) int {
	t.Helper()
	if resp.StatusCode != http.StatusTooManyRequests {
		resp.Body.Close()
		t.Fatalf("status %d, want 429", resp.StatusCode)
	}
	secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if err != nil || secs < 1 {
		t.Errorf("Retry-After %q, want a whole number of seconds", resp.Header.Get("Retry-After"))
	}
	if p := readProblem(t, resp); p.Code != engine.CodeRateLimited || !p.Retryable {
		t.Errorf("problem %+v, want a retryable rate_limited", p)
	}
	return secs
}

const helloTurn = `{"transcript":"hello"}`

// TestRateLimitPerUser gives each user a burst of two and a request a second: the third
// request of a user is refused on every route, other users go on, and a second later the user
// may go on too.
func TestRateLimitPerUser(t *testing.T) {
	clock := enginetest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	tn := testTenant()
	tn.Limits.UserPerMinute, tn.Limits.UserBurst = 60, 2
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}},
		Now: clock.Now}, tn)

	alice := userHeaders(testToken)
	h.turnWith(alice, helloTurn)
	h.turnWith(alice, helloTurn)
	routes := []struct{ method, path, body string }{
		{http.MethodPost, engine.PathTurn, helloTurn},
		{http.MethodPost, engine.PathExecute, `{}`},
		{http.MethodPost, engine.PathTTS, `{"text":"hi"}`},
		{http.MethodGet, engine.PathStream, ""},
		{http.MethodPost, engine.PathCreateSession, `{}`},
	}
	for _, r := range routes {
		t.Run(r.path, func(t *testing.T) {
			if secs := checkRateLimited(t, h.do(t.Context(), r.method, r.path, alice, r.body)); secs != 1 {
				t.Errorf("Retry-After %d, want 1 at one request a second", secs)
			}
		})
	}
	h.turnWith(userHeaders("another-users-token"), helloTurn)

	clock.Add(time.Second)
	h.turnWith(alice, helloTurn)
	checkRateLimited(t, h.do(t.Context(), http.MethodPost, engine.PathTurn, alice, helloTurn))

	// A refused request still gets the problem of its own headers first.
	bad := userHeaders(testToken)
	bad.Set("X-Request-ID", "nope")
	if p := readProblem(t, h.do(t.Context(), http.MethodPost, engine.PathTurn, bad, helloTurn)); p.Code != engine.CodeInvalidRequestID {
		t.Errorf("a malformed request got %s before its own problem", p.Code)
	}
}

// TestRateLimitPerTenant bounds all the users of a tenant together, and only that tenant.
func TestRateLimitPerTenant(t *testing.T) {
	clock := enginetest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	limited := testTenant()
	limited.Limits.TenantPerMinute, limited.Limits.TenantBurst = 6, 3
	other := testTenant()
	other.Key = "pk_other"
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}},
		Now: clock.Now}, limited, other)

	for i := range 3 {
		h.turnWith(userHeaders("user-"+strconv.Itoa(i)), helloTurn)
	}
	if secs := checkRateLimited(t, h.do(t.Context(), http.MethodPost, engine.PathTurn, userHeaders("user-9"), helloTurn)); secs != 10 {
		t.Errorf("Retry-After %d, want 10 at six requests a minute", secs)
	}
	otherHdr := userHeaders("user-9")
	otherHdr.Set("X-Engine-Key", "pk_other")
	for range 5 {
		h.turnWith(otherHdr, helloTurn)
	}
	clock.Add(10 * time.Second)
	h.turnWith(userHeaders("user-9"), helloTurn)
}

// blockingModel answers once release is closed, telling started when each turn reaches it.
type blockingModel struct {
	started chan struct{}
	release chan struct{}
}

func (m *blockingModel) Stream(ctx context.Context, _ *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	return func(yield func(engine.ModelEvent, error) bool) {
		m.started <- struct{}{}
		select {
		case <-m.release:
		case <-ctx.Done():
			yield(engine.ModelEvent{}, ctx.Err())
			return
		}
		_ = yield(engine.TextEvent("Done."), nil) && yield(engine.FinishEvent(engine.FinishStop), nil)
	}
}

// TestMaxConcurrentTurns fills the process with turns: the next one is refused at once with 503
// overloaded and Retry-After: 1, and turns are served again as soon as one ends.
func TestMaxConcurrentTurns(t *testing.T) {
	m := &blockingModel{started: make(chan struct{}, 4), release: make(chan struct{})}
	h := newHarness(t, engine.Config{Model: m, MaxConcurrentTurns: 2})

	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { h.turn(helloTurn) })
	}
	<-m.started
	<-m.started
	resp := h.do(t.Context(), http.MethodPost, engine.PathTurn, headers(), helloTurn)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("status %d, Retry-After %q; want 503 and 1", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if p := readProblem(t, resp); p.Code != engine.CodeOverloaded || !p.Retryable {
		t.Errorf("problem %+v, want a retryable overloaded", p)
	}
	close(m.release)
	wg.Wait()
	go func() { <-m.started }()
	if res := h.turn(helloTurn); res.spec.Speak != "Done." {
		t.Errorf("after the load passed the answer is %q", res.spec.Speak)
	}
}

// TestUnboundedConcurrentTurns checks that a negative MaxConcurrentTurns sets no bound.
func TestUnboundedConcurrentTurns(t *testing.T) {
	const n = 8
	m := &blockingModel{started: make(chan struct{}, n), release: make(chan struct{})}
	h := newHarness(t, engine.Config{Model: m, MaxConcurrentTurns: -1})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { h.turn(helloTurn) })
	}
	for range n {
		<-m.started
	}
	close(m.release)
	wg.Wait()
}

// TestMemoryRateLimiter runs the conformance suite on the in-memory limiter.
func TestMemoryRateLimiter(t *testing.T) {
	enginetest.RateLimiterSuite{New: func(t *testing.T) engine.RateLimiter { return &engine.MemoryRateLimiter{} }}.Run(t)
}

// TestMemoryRateLimiterStaysBounded sends one request each of many users: the buckets kept never
// pass the bound, and the most recent users keep theirs.
func TestMemoryRateLimiterStaysBounded(t *testing.T) {
	const bound, users = 100, 10_000
	rl := &engine.MemoryRateLimiter{Max: bound}
	tenant := engine.RateLimit{Tenant: "pk_test", PerMinute: 1_000_000, Burst: users}
	user := func(i int) engine.RateLimit {
		return engine.RateLimit{Tenant: "pk_test", User: strconv.Itoa(i), PerMinute: 1, Burst: 1}
	}
	for i := range users {
		if ok, _, _ := rl.Allow(t.Context(), []engine.RateLimit{user(i), tenant}); !ok {
			t.Fatalf("user %d refused on a first request", i)
		}
		if n := rl.Len(); n > bound {
			t.Fatalf("%d buckets kept after %d users, bound %d", n, i+1, bound)
		}
	}
	if ok, _, _ := rl.Allow(t.Context(), []engine.RateLimit{user(users - 1)}); ok {
		t.Error("the most recent user's bucket was dropped")
	}
}

// recordingLimiter is a shared RateLimiter that refuses or fails as told, and records what it
// was asked.
type recordingLimiter struct {
	mu    sync.Mutex
	calls [][]engine.RateLimit
	wait  time.Duration // > 0: refuse with this wait
	err   error
}

func (r *recordingLimiter) Allow(_ context.Context, limits []engine.RateLimit) (bool, time.Duration, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, slices.Clone(limits))
	if r.err != nil {
		return false, 0, r.err
	}
	return r.wait == 0, r.wait, nil
}

func (r *recordingLimiter) set(wait time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wait, r.err = wait, err
}

func (r *recordingLimiter) asked() [][]engine.RateLimit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// TestSharedRateLimiter gives the engine a limiter of its own: it is asked for the user's and the
// tenant's buckets together, named the same by every engine with the same signing key and never
// by the token, and its refusals are answered 429 with its wait rounded up.
func TestSharedRateLimiter(t *testing.T) {
	tn := testTenant()
	tn.Limits.UserPerMinute, tn.Limits.TenantPerMinute, tn.Limits.TenantBurst = 30, 600, 100
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}
	rl := &recordingLimiter{}
	a := newHarness(t, engine.Config{Model: model, RateLimiter: rl}, tn)
	b := newHarness(t, engine.Config{Model: model, RateLimiter: rl}, tn)
	a.turn(helloTurn)
	b.turn(helloTurn)
	a.turnWith(userHeaders("another-users-token"), helloTurn)

	calls := rl.asked()
	if len(calls) != 3 {
		t.Fatalf("the limiter was asked %d times for 3 turns", len(calls))
	}
	want := []engine.RateLimit{{Tenant: testKey, User: calls[0][0].User, PerMinute: 30, Burst: 3}, {Tenant: testKey, PerMinute: 600, Burst: 100}}
	if !slices.Equal(calls[0], want) {
		t.Errorf("asked %+v, want %+v", calls[0], want)
	}
	if u := calls[0][0].User; len(u) != 32 || strings.Trim(u, "0123456789abcdef") != "" || strings.Contains(u, testToken) {
		t.Errorf("the user's bucket is named %q, want 32 hex digits of a hash", u)
	}
	if calls[1][0].User != calls[0][0].User {
		t.Error("two engines with one signing key name the user's bucket differently")
	}
	if calls[2][0].User == calls[0][0].User {
		t.Error("two users share a bucket")
	}

	rl.set(1500*time.Millisecond, nil)
	if secs := checkRateLimited(t, a.do(t.Context(), http.MethodPost, engine.PathTurn, headers(), helloTurn)); secs != 2 {
		t.Errorf("Retry-After %d for a wait of 1.5 s, want 2", secs)
	}
}

// TestSharedRateLimiterUnavailable makes the shared limiter fail: requests go on, each process
// applying the limits with its own buckets, a warning is logged and the observer told; a second
// later the shared limiter is asked again.
func TestSharedRateLimiterUnavailable(t *testing.T) {
	clock := enginetest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	tn := testTenant()
	tn.Limits.UserPerMinute, tn.Limits.UserBurst = 60, 2
	rl := &recordingLimiter{err: fmt.Errorf("redis: %w", engine.ErrStoreUnavailable)}
	var mu sync.Mutex
	var events []engine.RateLimitEvent
	obs := &engine.Observer{RateLimit: func(_ context.Context, e engine.RateLimitEvent) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}}
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}},
		RateLimiter: rl, Observer: obs, Now: clock.Now}, tn)

	h.turn(helloTurn)
	h.turn(helloTurn)
	if secs := checkRateLimited(t, h.do(t.Context(), http.MethodPost, engine.PathTurn, headers(), helloTurn)); secs != 1 {
		t.Errorf("Retry-After %d from the process's own bucket, want 1", secs)
	}
	if n := len(rl.asked()); n != 1 {
		t.Errorf("the failing limiter was asked %d times within a second, want once", n)
	}
	if n := strings.Count(h.logs.String(), "rate limiter unavailable"); n != 1 {
		t.Errorf("%d warnings logged, want 1:\n%s", n, h.logs.String())
	}
	mu.Lock()
	got := slices.Clone(events)
	mu.Unlock()
	if len(got) != 3 || !got[0].Unavailable || got[0].Limited || !got[2].Unavailable || !got[2].Limited ||
		got[2].Tenant != testKey || got[2].RetryAfter != time.Second {
		t.Errorf("observer events %+v, want three unavailable, the last limited for 1s", got)
	}

	rl.set(0, nil)
	clock.Add(time.Second)
	h.turn(helloTurn)
	h.turn(helloTurn)
	h.turn(helloTurn)
	if n := len(rl.asked()); n != 4 {
		t.Errorf("the limiter was asked %d times, want again for each request once it answers", n)
	}
}
