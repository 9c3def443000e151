// Package sessiontable holds what the engine's MemoryStore keeps: sessions in memory in the
// order they were created, which is also the order they expire in, within bounds on their bytes
// and on the sessions of each user ([Table]); values bound to keys until a time, the claims,
// bindings and actions' leases ([Leases]), whose expired entries go as new ones come; and the
// claims and results of confirmed actions ([Actions]).
package sessiontable

import "time"

// Entry is what a table knows of a session: its id, its user ("" for none), when it expires,
// what it costs in memory, and the session itself.
type Entry[V any] struct {
	ID      string
	User    string
	Expires time.Time
	Size    int64
	Value   V
}

// Table holds a MemoryStore's sessions in the order they were created, which is also
// the order they expire in (every session of an engine lives as long). A user past their bound
// loses their own oldest session: its next request gets 401 invalid_session, and the client
// creates a new one. A table past its bytes keeps every session it holds and refuses new ones
// until some expire: evicting the oldest of all would let anyone who creates sessions fast
// enough log every other user out.
type Table[V any] struct {
	byID    map[string]*Entry[V]
	order   []string // ids by creation; some may be gone already
	head    int      // order[head:] is still to look at
	bytes   int64
	perUser map[string][]string // ids by creation, per user
}

// Get returns the session of id unless it expired by now.
func (t *Table[V]) Get(id string, now time.Time) (V, bool) {
	s, ok := t.byID[id]
	if !ok || !now.Before(s.Expires) {
		var zero V
		return zero, false
	}
	return s.Value, true
}

// Put drops expired sessions, then adds s, dropping the user's oldest past maxPerUser. It
// reports false, and changes nothing else, when s would take the table past maxBytes. A
// bound of 0 or less is no bound.
func (t *Table[V]) Put(s *Entry[V], now time.Time, maxBytes int64, maxPerUser int) bool {
	if t.byID == nil {
		t.byID = make(map[string]*Entry[V])
		t.perUser = make(map[string][]string)
	}
	for t.head < len(t.order) {
		id := t.order[t.head]
		old, ok := t.byID[id]
		if ok && now.Before(old.Expires) {
			break
		}
		t.head++
		if ok {
			t.remove(old)
		}
	}
	if t.head > 1024 && t.head > len(t.order)/2 { // let the dropped ids go
		t.order = append([]string(nil), t.order[t.head:]...)
		t.head = 0
	}
	var replaced, evicted *Entry[V] // what s takes the place of
	if old, ok := t.byID[s.ID]; ok {
		replaced = old
	}
	if ids := t.perUser[s.User]; s.User != "" && maxPerUser > 0 && len(ids) >= maxPerUser && replaced == nil {
		evicted = t.byID[ids[0]]
	}
	if maxBytes > 0 {
		freed := int64(0)
		for _, old := range [...]*Entry[V]{replaced, evicted} {
			if old != nil {
				freed += old.Size
			}
		}
		if t.bytes-freed+s.Size > maxBytes {
			return false
		}
	}
	t.remove(replaced)
	t.remove(evicted)
	t.byID[s.ID] = s
	t.order = append(t.order, s.ID)
	t.bytes += s.Size
	if s.User != "" {
		t.perUser[s.User] = append(t.perUser[s.User], s.ID)
	}
	return true
}

// remove forgets s; its id may stay in order, where put skips it.
func (t *Table[V]) remove(s *Entry[V]) {
	if s == nil || t.byID[s.ID] != s {
		return
	}
	delete(t.byID, s.ID)
	t.bytes -= s.Size
	if ids := t.perUser[s.User]; s.User != "" {
		for i, id := range ids {
			if id == s.ID {
				ids = append(ids[:i:i], ids[i+1:]...)
				break
			}
		}
		if len(ids) == 0 {
			delete(t.perUser, s.User)
		} else {
			t.perUser[s.User] = ids
		}
	}
}
