package bound

import (
	"container/list"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// DefaultBuckets is the bound of a [Buckets] asked with max 0.
const DefaultBuckets = 1 << 16

// BucketKey names a bucket.
type BucketKey struct{ Tenant, User string }

// BucketLimit is what a request takes from: the bucket of Key, giving PerMinute requests a
// minute and holding Burst (at least 1). A PerMinute of 0 or less is no limit.
type BucketLimit struct {
	Key       BucketKey
	PerMinute int
	Burst     int
}

// Burst is the burst of a bucket of perMinute whose limits name burst: burst, or when it is 0
// or less a tenth of perMinute, at least 1.
func Burst(perMinute, burst int) int {
	if burst > 0 {
		return burst
	}
	return max(1, perMinute/10)
}

// Buckets is a set of token buckets in memory, a bounded number of them, the least recently
// used dropped first. A dropped bucket starts again full, as does one that was idle long
// enough to refill: dropping never makes a limit stricter. The zero value is ready to use; its
// methods may be called from many goroutines at once.
type Buckets struct {
	mu      sync.Mutex
	entries map[BucketKey]*list.Element // of *bucket
	lru     *list.List
}

type bucket struct {
	key BucketKey
	lim *rate.Limiter
}

// Allow takes one request at now from every bucket of limits, or from none, keeping at most
// bound buckets (0 means DefaultBuckets). When it takes none, it returns how long to wait.
func (s *Buckets) Allow(now time.Time, bound int, limits []BucketLimit) (bool, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var buf [2]*rate.Reservation // a request takes from two buckets
	taken, wait := buf[:0], time.Duration(0)
	for _, l := range limits {
		if l.PerMinute <= 0 {
			continue
		}
		r := s.limiter(l, now, bound).ReserveN(now, 1)
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
		return false, wait
	}
	return true, 0
}

// Len returns how many buckets are kept.
func (s *Buckets) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lru == nil {
		return 0
	}
	return s.lru.Len()
}

// limiter returns the bucket of l, making or retuning it. It is called with s.mu held.
func (s *Buckets) limiter(l BucketLimit, now time.Time, bound int) *rate.Limiter {
	if s.entries == nil {
		s.entries, s.lru = map[BucketKey]*list.Element{}, list.New()
	}
	limit, burst := rate.Limit(float64(l.PerMinute)/60), max(l.Burst, 1)
	if el, ok := s.entries[l.Key]; ok {
		s.lru.MoveToFront(el)
		lim := el.Value.(*bucket).lim
		if lim.Limit() != limit || lim.Burst() != burst { // the tenant's configuration changed
			lim.SetLimitAt(now, limit)
			lim.SetBurstAt(now, burst)
		}
		return lim
	}
	if bound <= 0 {
		bound = DefaultBuckets
	}
	for s.lru.Len() >= bound {
		oldest := s.lru.Back()
		delete(s.entries, oldest.Value.(*bucket).key)
		s.lru.Remove(oldest)
	}
	lim := rate.NewLimiter(limit, burst)
	s.entries[l.Key] = s.lru.PushFront(&bucket{key: l.Key, lim: lim})
	return lim
}
