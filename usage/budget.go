package usage

import (
	"context"
	"sync"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/quota"
)

// MemoryBudget is an [engine.Budget] in this process's memory, for a single replica: the
// counts of each tenant's budgets in UTC days and months, forgotten when their window closes.
// Replicas that must share budgets use redisstore's Budget. The zero value is ready to use.
type MemoryBudget struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu     sync.Mutex
	counts map[string]*count
	swept  time.Time
}

type count struct {
	n   int64
	end time.Time
}

var _ engine.Budget = (*MemoryBudget)(nil)

func (b *MemoryBudget) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// Reserve implements [engine.Budget]: all of s's counters, or none.
func (b *MemoryBudget) Reserve(_ context.Context, s engine.Spend) (engine.Reservation, error) {
	now := b.now()
	cs := quota.Counters(s, now)
	keys := make([]string, len(cs))
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sweep(now)
	for i, c := range cs {
		keys[i] = s.Tenant.Key + "\x00" + c.Key
		var have int64
		if n := b.counts[keys[i]]; n != nil {
			have = n.n
		}
		if c.Over(have) {
			return nil, &engine.QuotaError{Limit: c.Limit, RetryAfter: c.End.Sub(now), Remaining: max(0, c.Max-have)}
		}
	}
	for i, c := range cs {
		b.add(keys[i], c.Add, c.End)
	}
	return &memoryReservation{b: b, keys: keys, counters: cs}, nil
}

// add adds n to the count of key, which lives until end.
func (b *MemoryBudget) add(key string, n int64, end time.Time) {
	if b.counts == nil {
		b.counts = make(map[string]*count)
	}
	c := b.counts[key]
	if c == nil {
		if n == 0 {
			return
		}
		c = &count{end: end}
		b.counts[key] = c
	}
	c.n += n
}

// sweep forgets the counts whose window closed, at most once a minute.
func (b *MemoryBudget) sweep(now time.Time) {
	if now.Sub(b.swept) < time.Minute {
		return
	}
	b.swept = now
	for k, c := range b.counts {
		if !now.Before(c.end) {
			delete(b.counts, k)
		}
	}
}

type memoryReservation struct {
	b        *MemoryBudget
	keys     []string
	counters []quota.Counter
	once     sync.Once
}

// Settle implements [engine.Reservation]; a reservation settles once, later calls do nothing.
func (r *memoryReservation) Settle(_ context.Context, spent engine.Spend) error {
	r.once.Do(func() {
		d := quota.Deltas(r.counters, spent)
		now := r.b.now()
		r.b.mu.Lock()
		defer r.b.mu.Unlock()
		for i, c := range r.counters {
			if now.Before(c.End) {
				r.b.add(r.keys[i], d[i], c.End)
			}
		}
	})
	return nil
}
