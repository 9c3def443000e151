package engine

import (
	"container/list"
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// defaultMaxRateBuckets is [MemoryRateLimiter.Max] when it is zero.
const defaultMaxRateBuckets = 1 << 16

// MemoryRateLimiter is a [RateLimiter] in this process's memory, for a single replica. It keeps
// at most Max buckets, the least recently used dropped first. A dropped bucket starts again
// full, as does one that was idle long enough to refill: dropping never makes a limit
// stricter. The zero value is ready to use.
type MemoryRateLimiter struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Max bounds the buckets kept; 0 means 65 536.
	Max int

	mu      sync.Mutex
	entries map[RateLimit]*list.Element // of *bucket, keyed by Tenant and User only
	lru     *list.List
}

var _ RateLimiter = (*MemoryRateLimiter)(nil)

type bucket struct {
	key RateLimit // Tenant and User
	lim *rate.Limiter
}

// Allow takes one request from every bucket of limits, or from none. It never fails.
func (m *MemoryRateLimiter) Allow(_ context.Context, limits []RateLimit) (bool, time.Duration, error) {
	now := time.Now()
	if m.Now != nil {
		now = m.Now()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var buf [2]*rate.Reservation // a request takes from two buckets
	taken, wait := buf[:0], time.Duration(0)
	for _, l := range limits {
		if l.PerMinute <= 0 {
			continue
		}
		r := m.limiter(l, now).ReserveN(now, 1)
		if d := r.DelayFrom(now); d > 0 {
			r.CancelAt(now)
			wait = max(wait, d)
			continue
		}
		taken = append(taken, r)
	}
	if wait > 0 {
		for _, r := range taken {
			r.CancelAt(now)
		}
		return false, wait, nil
	}
	return true, 0, nil
}

// Len returns how many buckets are kept.
func (m *MemoryRateLimiter) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lru == nil {
		return 0
	}
	return m.lru.Len()
}

// limiter returns the bucket of l, making or retuning it. It is called with m.mu held.
func (m *MemoryRateLimiter) limiter(l RateLimit, now time.Time) *rate.Limiter {
	if m.entries == nil {
		m.entries, m.lru = map[RateLimit]*list.Element{}, list.New()
	}
	limit, burst := rate.Limit(float64(l.PerMinute)/60), max(l.Burst, 1)
	key := RateLimit{Tenant: l.Tenant, User: l.User}
	if el, ok := m.entries[key]; ok {
		m.lru.MoveToFront(el)
		lim := el.Value.(*bucket).lim
		if lim.Limit() != limit || lim.Burst() != burst { // the tenant's configuration changed
			lim.SetLimitAt(now, limit)
			lim.SetBurstAt(now, burst)
		}
		return lim
	}
	bound := m.Max
	if bound <= 0 {
		bound = defaultMaxRateBuckets
	}
	for m.lru.Len() >= bound {
		oldest := m.lru.Back()
		delete(m.entries, oldest.Value.(*bucket).key)
		m.lru.Remove(oldest)
	}
	lim := rate.NewLimiter(limit, burst)
	m.entries[key] = m.lru.PushFront(&bucket{key: key, lim: lim})
	return lim
}
