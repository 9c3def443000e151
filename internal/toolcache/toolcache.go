// Package toolcache holds an engine's background work and the tool lists it shares: a
// registry of the work running in the background, which [Cache.Close] stops and waits for;
// the tool list of each key (a tenant environment, or one user of it) kept for a time to
// live, made once for the callers that ask together ([Cache.Fetch]); the list's description,
// made for one owner (a tenant); and the keys warmed up ([Cache.Warm]), whose expired entries
// [Sweep] deletes.
//
// Times are passed in by the caller, whose clock may be a test's.
package toolcache

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// DefaultTTL is how long a list and a warm mark are kept when [New] is given no time to live.
const DefaultTTL = 5 * time.Minute

// Bounds of what a Cache keeps.
const (
	maxWarmEntries = 1024 // entries kept before expired ones are swept
	maxLists       = 8192 // lists kept, with a Toolset that lists per user
)

// ErrClosed is what background work asked for after [Cache.Close] fails with.
var ErrClosed = errors.New("toolcache: closed")

// Cache is an engine's background work and the tool lists it shares: lists of T, each with a
// description I made for an owner O. Its methods may be called from many goroutines at once;
// none blocks but Close.
type Cache[T any, O comparable, I any] struct {
	ttl time.Duration // negative: nothing is kept

	mu     sync.Mutex
	lists  map[string]entry[T, O, I]
	warmed map[string]time.Time // until when a key counts as warm
	closed bool
	wg     sync.WaitGroup
	group  singleflight.Group // of the lists and warm-ups being made

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
}

type entry[T any, O comparable, I any] struct {
	list  []T
	until time.Time
	// index describes list for owner; set once a caller has made it.
	index    I
	owner    O
	hasIndex bool
}

// New returns a Cache that keeps lists and warm marks for ttl: [DefaultTTL] when ttl is 0,
// nothing when it is negative.
func New[T any, O comparable, I any](ttl time.Duration) *Cache[T, O, I] {
	if ttl == 0 {
		ttl = DefaultTTL
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Cache[T, O, I]{ttl: ttl, lists: map[string]entry[T, O, I]{}, warmed: map[string]time.Time{}, ctx: ctx, cancel: cancel}
}

// Enter registers one piece of background work, which must call [Cache.Exit] when it ends, or
// reports false after Close.
func (c *Cache[T, O, I]) Enter() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	return true
}

// Exit ends a piece of background work that [Cache.Enter] registered.
func (c *Cache[T, O, I]) Exit() { c.wg.Done() }

// Detach returns a context with parent's values that outlives parent's cancellation: it ends
// after d, or when the Cache is closed.
func (c *Cache[T, O, I]) Detach(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), d)
	stop := context.AfterFunc(c.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// Go runs f on a goroutine of its own as background work, with a context detached from parent
// for at most d (see [Cache.Detach]). After Close it runs nothing and reports false.
func (c *Cache[T, O, I]) Go(parent context.Context, d time.Duration, f func(ctx context.Context)) bool {
	if !c.Enter() {
		return false
	}
	go func() {
		defer c.Exit()
		ctx, cancel := c.Detach(parent, d)
		defer cancel()
		f(ctx)
	}()
	return true
}

// Close cancels the contexts of the background work and waits for the work to end; from then
// on, [Cache.Enter] reports false. It may be called more than once.
func (c *Cache[T, O, I]) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
}

// List returns the list kept for key and whether it is still fresh at now.
func (c *Cache[T, O, I]) List(key string, now time.Time) ([]T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lists[key]
	return e.list, ok && now.Before(e.until)
}

// PutList keeps list for key until the time to live has passed from now, with no description.
// When the Cache holds many lists, expired ones are swept, then others dropped.
func (c *Cache[T, O, I]) PutList(key string, list []T, now time.Time) {
	if c.ttl < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.lists) >= maxWarmEntries {
		Sweep(c.lists, -1, func(e entry[T, O, I]) time.Time { return e.until }, now)
	}
	for k := range c.lists { // lists of many users, none expired: one goes
		if len(c.lists) < maxLists {
			break
		}
		delete(c.lists, k)
	}
	c.lists[key] = entry[T, O, I]{list: list, until: now.Add(c.ttl)}
}

// Index returns the description of the fresh list of key, when it was made for owner (an
// owner may change under the same key, as a tenant store hands out a changed tenant).
func (c *Cache[T, O, I]) Index(key string, owner O, now time.Time) (I, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lists[key]
	if !ok || !now.Before(e.until) || !e.hasIndex || e.owner != owner {
		var zero I
		return zero, false
	}
	return e.index, true
}

// PutIndex keeps idx, made of list for owner, with the list of key, if list is still the one
// kept (the same slice, not an equal one).
func (c *Cache[T, O, I]) PutIndex(key string, list []T, owner O, idx I) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lists[key]
	if !ok || len(e.list) != len(list) || (len(list) > 0 && &e.list[0] != &list[0]) {
		return
	}
	e.index, e.owner, e.hasIndex = idx, owner, true
	c.lists[key] = e
}

// IsWarm reports whether key was marked warm less than the time to live before now.
func (c *Cache[T, O, I]) IsWarm(key string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	until, ok := c.warmed[key]
	return ok && now.Before(until)
}

// MarkWarm marks key warm from now for the time to live.
func (c *Cache[T, O, I]) MarkWarm(key string, now time.Time) {
	if c.ttl < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.warmed) >= maxWarmEntries {
		Sweep(c.warmed, -1, func(until time.Time) time.Time { return until }, now)
	}
	c.warmed[key] = now.Add(c.ttl)
}
