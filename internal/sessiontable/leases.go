package sessiontable

import "time"

// sweepSample bounds the entries one [Leases.Add] or [Leases.Put] looks at for expired ones.
const sweepSample = 8

// Leases holds values bound to keys until a time: a MemoryStore's claims, its bindings and its
// actions' leases and results. Reads never return an expired entry. Writes drop the expired
// entries among a few (visited in Go's random iteration order), so that a write costs the same
// however many entries are live: an entry outlives its expiry by about n/8 writes, n the
// entries held, which keeps the expired entries to a fraction of the live ones. The zero value
// is ready to use; it is not safe for concurrent use.
type Leases[V any] struct {
	m map[string]lease[V]
}

type lease[V any] struct {
	value V
	until time.Time
}

// Get returns the value of key unless it expired by now.
func (l *Leases[V]) Get(key string, now time.Time) (V, bool) {
	e, ok := l.m[key]
	if !ok || !now.Before(e.until) {
		var zero V
		return zero, false
	}
	return e.value, true
}

// Add binds key to value until until, unless key is bound already: it then returns the value
// bound and false.
func (l *Leases[V]) Add(key string, value V, until, now time.Time) (V, bool) {
	if v, ok := l.Get(key, now); ok {
		return v, false
	}
	l.Put(key, value, until, now)
	return value, true
}

// Put binds key to value until until, in place of what it was bound to.
func (l *Leases[V]) Put(key string, value V, until, now time.Time) {
	if l.m == nil {
		l.m = make(map[string]lease[V])
	}
	n := sweepSample
	for k, e := range l.m {
		if !now.Before(e.until) {
			delete(l.m, k)
		}
		if n--; n == 0 {
			break
		}
	}
	l.m[key] = lease[V]{value, until}
}

// Delete forgets key.
func (l *Leases[V]) Delete(key string) { delete(l.m, key) }

// Len returns how many entries are held, expired ones not yet dropped included.
func (l *Leases[V]) Len() int { return len(l.m) }
