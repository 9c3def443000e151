package engine

import "time"

// Defaults of a MemoryStore's bounds on sessions.
const (
	defaultSessionMemory      int64 = 64 << 20
	defaultMaxSessionsPerUser       = 16
	// sessionOverhead is what a session costs besides its metadata: the struct, its strings and
	// the index entries.
	sessionOverhead = 320
)

// sessionTable holds a MemoryStore's sessions in the order they were created, which is also
// the order they expire in (every session of an engine lives as long). A user past their bound
// loses their own oldest session: its next request gets 401 invalid_session, and the client
// creates a new one. A table past its bytes keeps every session it holds and refuses new ones
// until some expire: evicting the oldest of all would let anyone who creates sessions fast
// enough log every other user out.
type sessionTable struct {
	byID    map[string]*Session
	order   []string // ids by creation; some may be gone already
	head    int      // order[head:] is still to look at
	bytes   int64
	perUser map[string][]string // ids by creation, per Session.User
}

func (t *sessionTable) get(id string, now time.Time) (*Session, bool) {
	s, ok := t.byID[id]
	if !ok || !now.Before(s.ExpiresAt) {
		return nil, false
	}
	return s, true
}

// put drops expired sessions, then adds s, dropping the user's oldest past maxPerUser. It
// reports false, and changes nothing else, when s would take the table past maxBytes.
func (t *sessionTable) put(s *Session, now time.Time, maxBytes int64, maxPerUser int) bool {
	if t.byID == nil {
		t.byID = make(map[string]*Session)
		t.perUser = make(map[string][]string)
	}
	for t.head < len(t.order) {
		id := t.order[t.head]
		old, ok := t.byID[id]
		if ok && now.Before(old.ExpiresAt) {
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
	var replaced, evicted *Session // what s takes the place of
	if old, ok := t.byID[s.ID]; ok {
		replaced = old
	}
	if ids := t.perUser[s.User]; s.User != "" && maxPerUser > 0 && len(ids) >= maxPerUser && replaced == nil {
		evicted = t.byID[ids[0]]
	}
	if maxBytes > 0 {
		freed := int64(0)
		for _, old := range [...]*Session{replaced, evicted} {
			if old != nil {
				freed += sessionSize(old)
			}
		}
		if t.bytes-freed+sessionSize(s) > maxBytes {
			return false
		}
	}
	t.remove(replaced)
	t.remove(evicted)
	t.byID[s.ID] = s
	t.order = append(t.order, s.ID)
	t.bytes += sessionSize(s)
	if s.User != "" {
		t.perUser[s.User] = append(t.perUser[s.User], s.ID)
	}
	return true
}

// remove forgets s; its id may stay in order, where put skips it.
func (t *sessionTable) remove(s *Session) {
	if s == nil || t.byID[s.ID] != s {
		return
	}
	delete(t.byID, s.ID)
	t.bytes -= sessionSize(s)
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

func sessionSize(s *Session) int64 {
	return sessionOverhead + int64(len(s.ID)+len(s.TenantKey)+len(s.KeyThumbprint)+len(s.User)+len(s.GateKey)+len(s.GateCredential)+len(s.Metadata))
}
