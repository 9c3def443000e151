// Package bound holds the counters that bound what strangers can start, for the engine's
// admission: slots of work that runs at once, memory shared by many holders, what each user
// holds open, and the token buckets of the rate limits kept in memory, with the names of users'
// buckets and the fallback to them while a shared limiter fails. Each refuses at once rather
// than queueing: a full process turns new work away quickly instead of slowing everything
// down.
package bound

import (
	"sync"
	"sync/atomic"
)

// Slots bounds work that runs at once; a nil Slots means no bound.
type Slots chan struct{}

// NewSlots makes room for n at once: def when n is 0, no bound when it is negative.
func NewSlots(n, def int) Slots {
	switch {
	case n < 0:
		return nil
	case n == 0:
		n = def
	}
	return make(Slots, n)
}

// TryAcquire takes a slot at once, or reports false when none is free.
func (s Slots) TryAcquire() (release func(), ok bool) {
	if s == nil {
		return func() {}, true
	}
	select {
	case s <- struct{}{}:
		return func() { <-s }, true
	default:
		return nil, false
	}
}

// Budget is an amount (of memory) shared by many holders; a negative Limit means no bound.
type Budget struct {
	Limit int64
	used  atomic.Int64
}

// Take reserves n, or reports false when it would pass the limit.
func (b *Budget) Take(n int64) bool {
	if b.Limit < 0 {
		b.used.Add(n)
		return true
	}
	for {
		used := b.used.Load()
		if used+n > b.Limit {
			return false
		}
		if b.used.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

// Give returns n taken before.
func (b *Budget) Give(n int64) { b.used.Add(-n) }

// PerUser counts what each user holds open; a Limit below 1 means no bound.
type PerUser struct {
	Limit int
	mu    sync.Mutex
	held  map[string]int
}

// NewPerUser bounds each user to n at once: def when n is 0, no bound when it is negative.
func NewPerUser(n, def int) *PerUser {
	if n == 0 {
		n = def
	}
	return &PerUser{Limit: n}
}

// Take counts one more for user, or reports false when the user holds the limit already.
func (u *PerUser) Take(user string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.Limit > 0 && u.held[user] >= u.Limit {
		return false
	}
	if u.held == nil {
		u.held = make(map[string]int)
	}
	u.held[user]++
	return true
}

// Give counts one less for user.
func (u *PerUser) Give(user string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.held[user] <= 1 {
		delete(u.held, user)
	} else {
		u.held[user]--
	}
}

// Hold bounds what one kind of work holds at once: in the process (a nil Process is no bound),
// for a tenant and for a user (nil: no bound).
type Hold struct {
	Process   Slots
	PerTenant *PerUser
	PerUser   *PerUser
}

// Which bound of a [Hold] refused.
const (
	HeldProcess = "process"
	HeldTenant  = "tenant"
	HeldUser    = "user"
)

// Take takes one place in each of h's bounds, in the process, the tenant's and the user's, or
// none: refused then names the bound that is full.
func (h *Hold) Take(tenant, user string) (release func(), refused string) {
	releaseSlot, ok := h.Process.TryAcquire()
	if !ok {
		return nil, HeldProcess
	}
	if h.PerTenant != nil && !h.PerTenant.Take(tenant) {
		releaseSlot()
		return nil, HeldTenant
	}
	if h.PerUser != nil && !h.PerUser.Take(user) {
		if h.PerTenant != nil {
			h.PerTenant.Give(tenant)
		}
		releaseSlot()
		return nil, HeldUser
	}
	return func() {
		if h.PerUser != nil {
			h.PerUser.Give(user)
		}
		if h.PerTenant != nil {
			h.PerTenant.Give(tenant)
		}
		releaseSlot()
	}, ""
}
