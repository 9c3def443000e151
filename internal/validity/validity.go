// Package validity remembers whether values passed a check, per pointer, for as long as each
// value lives: the engine checks every tenant its store returns, and a store that returns the
// same *Tenant for every request pays for the check once.
package validity

import (
	"runtime"
	"sync"
	"weak"
)

// Cache remembers the result of check for each pointer it saw. Its zero value is ready; it is
// safe for concurrent use. Keys are weak: a value that is no longer referenced elsewhere is
// collected, and its entry removed, so that a store that builds a new value for every request
// does not grow the cache.
type Cache[T any] struct {
	// mu serializes the checks: a check may fill in derived fields of its value.
	mu sync.Mutex
	m  sync.Map // weak.Pointer[T] -> result
}

type result struct{ err error }

// Check returns what check(p) returned the first time Check saw p, calling it only then.
func (c *Cache[T]) Check(p *T, check func(*T) error) error {
	k := weak.Make(p)
	if r, ok := c.m.Load(k); ok {
		return r.(result).err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.m.Load(k); ok {
		return r.(result).err
	}
	err := check(p)
	c.m.Store(k, result{err})
	runtime.AddCleanup(p, func(k weak.Pointer[T]) { c.m.Delete(k) }, k)
	return err
}
