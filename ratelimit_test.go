package engine_test

import (
	"context"
	"iter"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

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
	clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
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
	}
	for _, r := range routes {
		t.Run(r.path, func(t *testing.T) {
			if secs := checkRateLimited(t, h.do(t.Context(), r.method, r.path, alice, r.body)); secs != 1 {
				t.Errorf("Retry-After %d, want 1 at one request a second", secs)
			}
		})
	}
	h.turnWith(userHeaders("another-users-token"), helloTurn)

	clock.Advance(time.Second)
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
	clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
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
	clock.Advance(10 * time.Second)
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
