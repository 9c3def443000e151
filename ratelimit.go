package engine

import (
	"container/list"
	"crypto/sha256"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Problem codes of the engine's admission control.
const (
	// CodeRateLimited answers a request past its tenant's or its user's rate (429).
	CodeRateLimited = "rate_limited"
	// CodeOverloaded answers a turn when the process runs as many as it may (503).
	CodeOverloaded = "overloaded"
)

// Bounds of admission control.
const (
	// defaultMaxConcurrentTurns is Config.MaxConcurrentTurns when it is zero.
	defaultMaxConcurrentTurns = 1024
	// maxLimiters bounds the rate limiters kept in memory; the least recently used go first.
	maxLimiters = 1 << 16
)

// rateLimits keeps the token buckets of tenants and users, in memory, most recently used
// first. A user's key is a hash of the tenant and the user token: the token itself is never
// kept. A bucket evicted from a full map starts again full, as does one that was idle long
// enough to refill: eviction never makes a limit stricter.
type rateLimits struct {
	mu      sync.Mutex
	max     int
	entries map[string]*list.Element // of *limiterEntry
	lru     *list.List
}

type limiterEntry struct {
	key string
	lim *rate.Limiter
}

func newRateLimits(max int) *rateLimits {
	return &rateLimits{max: max, entries: map[string]*list.Element{}, lru: list.New()}
}

// len returns how many buckets are kept.
func (rl *rateLimits) len() int {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return rl.lru.Len()
}

// limiter returns the bucket of key with the given rate, making or retuning it. It is called
// with rl.mu held.
func (rl *rateLimits) limiter(key string, perMinute, burst int, now time.Time) *rate.Limiter {
	limit := rate.Limit(float64(perMinute) / 60)
	if burst <= 0 {
		burst = max(1, perMinute/10)
	}
	if el, ok := rl.entries[key]; ok {
		rl.lru.MoveToFront(el)
		lim := el.Value.(*limiterEntry).lim
		if lim.Limit() != limit || lim.Burst() != burst { // the tenant's configuration changed
			lim.SetLimitAt(now, limit)
			lim.SetBurstAt(now, burst)
		}
		return lim
	}
	for rl.lru.Len() >= rl.max {
		oldest := rl.lru.Back()
		delete(rl.entries, oldest.Value.(*limiterEntry).key)
		rl.lru.Remove(oldest)
	}
	lim := rate.NewLimiter(limit, burst)
	rl.entries[key] = rl.lru.PushFront(&limiterEntry{key: key, lim: lim})
	return lim
}

// admit takes one request from the buckets of the request's user and tenant, as their limits
// set. When either is empty it takes from neither and returns how long to wait.
func (rl *rateLimits) admit(l Limits, tenantKey string, userToken Secret, now time.Time) (ok bool, wait time.Duration) {
	if l.UserPerMinute <= 0 && l.TenantPerMinute <= 0 {
		return true, 0
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	var taken []*rate.Reservation
	take := func(key string, perMinute, burst int) bool {
		r := rl.limiter(key, perMinute, burst, now).ReserveN(now, 1)
		if d := r.DelayFrom(now); d > 0 {
			r.CancelAt(now)
			wait = max(wait, d)
			return false
		}
		taken = append(taken, r)
		return true
	}
	ok = true
	if l.UserPerMinute > 0 {
		sum := sha256.Sum256([]byte(tenantKey + "\x00" + string(userToken)))
		ok = take(fmt.Sprintf("u\x00%s\x00%x", tenantKey, sum[:16]), l.UserPerMinute, l.UserBurst)
	}
	if ok && l.TenantPerMinute > 0 {
		ok = take("t\x00"+tenantKey, l.TenantPerMinute, l.TenantBurst)
	}
	if !ok {
		for _, r := range taken {
			r.CancelAt(now)
		}
	}
	return ok, wait
}

// rateLimit applies the limits of the request's tenant and user, answering 429 with
// Retry-After in whole seconds when the request is one too many.
func (e *Engine) rateLimit(req *request) *Problem {
	ok, wait := e.limits.admit(req.Tenant.Limits, req.Tenant.Key, req.UserToken, e.now())
	if ok {
		return nil
	}
	secs := int(math.Ceil(wait.Seconds()))
	p := newProblem(http.StatusTooManyRequests, CodeRateLimited,
		fmt.Sprintf("too many requests; try again in %d seconds", secs))
	p.header = http.Header{"Retry-After": {strconv.Itoa(secs)}}
	return p
}

// turnSlots bounds the turns a process runs at once; a nil channel means no bound.
type turnSlots chan struct{}

func newTurnSlots(n int) turnSlots {
	switch {
	case n < 0:
		return nil
	case n == 0:
		n = defaultMaxConcurrentTurns
	}
	return make(turnSlots, n)
}

// acquire takes a slot, or answers 503 overloaded at once when none is free: a full process
// refuses new turns quickly rather than slowing every turn down.
func (s turnSlots) acquire() (release func(), p *Problem) {
	if s == nil {
		return func() {}, nil
	}
	select {
	case s <- struct{}{}:
		return func() { <-s }, nil
	default:
		p := newProblem(http.StatusServiceUnavailable, CodeOverloaded, "the engine is running as many turns as it can; try again in a moment")
		p.header = http.Header{"Retry-After": {"1"}}
		return nil, p
	}
}
