package engine

import (
	"context"
	"sync"
	"time"

	"github.com/convengine/engine/internal/sessiontable"
	"github.com/convengine/engine/internal/toolcache"
)

// MemoryStore is a [SessionStore], a [ReplayStore] and an [ActionStore] in this process's memory, for a single
// replica. Expired entries are removed as new ones arrive. The zero value is ready to use.
type MemoryStore struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxSessionBytes bounds the memory of the sessions kept, their metadata included (default
	// 64 MiB; negative means no bound), and MaxSessionsPerUser the sessions of one user of a
	// tenant (default 16; negative means no bound). A user's session past MaxSessionsPerUser
	// drops that user's oldest: its next request gets 401 invalid_session, and the client
	// creates a new one. A session past MaxSessionBytes is refused with [ErrStoreFull] until
	// sessions expire: no user's session is dropped to make room for another user's.
	MaxSessionBytes    int64
	MaxSessionsPerUser int

	mu       sync.Mutex
	sessions sessiontable.Table[*Session]
	claims   map[string]time.Time
	binds    map[string]binding
	actions  map[string]*actionRecord
}

// Defaults of a MemoryStore's bounds on sessions.
const (
	defaultSessionMemory      int64 = 64 << 20
	defaultMaxSessionsPerUser       = 16
	// sessionOverhead is what a session costs besides its metadata: the struct, its strings and
	// the index entries.
	sessionOverhead = 320
)

func sessionSize(s *Session) int64 {
	return sessionOverhead + int64(len(s.ID)+len(s.TenantKey)+len(s.KeyThumbprint)+len(s.User)+len(s.GateKey)+len(s.GateCredential)+len(s.Metadata))
}

// binding is a value bound to a key until a time.
type binding struct {
	value string
	until time.Time
}

// Bind binds key to value until expiry unless it is bound already, and returns the value bound.
func (m *MemoryStore) Bind(_ context.Context, key, value string, expiry time.Time) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.binds == nil {
		m.binds = make(map[string]binding)
	}
	now := m.now()
	if b, ok := m.binds[key]; ok && now.Before(b.until) {
		return b.value, nil
	}
	toolcache.Sweep(m.binds, sweepSample, func(b binding) time.Time { return b.until }, now)
	m.binds[key] = binding{value, expiry}
	return value, nil
}

func (m *MemoryStore) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// PutSession stores s until s.ExpiresAt, within the store's bounds, or returns [ErrStoreFull].
func (m *MemoryStore) PutSession(_ context.Context, s *Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	maxBytes, maxPerUser := m.MaxSessionBytes, m.MaxSessionsPerUser
	if maxBytes == 0 {
		maxBytes = defaultSessionMemory
	}
	if maxPerUser == 0 {
		maxPerUser = defaultMaxSessionsPerUser
	}
	cp := *s
	if !m.sessions.Put(&sessiontable.Entry[*Session]{ID: cp.ID, User: cp.User, Expires: cp.ExpiresAt, Size: sessionSize(&cp), Value: &cp}, m.now(), maxBytes, maxPerUser) {
		return ErrStoreFull
	}
	return nil
}

// Session returns the session of id.
func (m *MemoryStore) Session(_ context.Context, id string) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions.Get(id, m.now())
	if !ok {
		return nil, ErrSessionNotFound
	}
	cp := *s
	return &cp, nil
}

// Claim records key until expiry unless it is already recorded.
func (m *MemoryStore) Claim(_ context.Context, key string, expiry time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.claims == nil {
		m.claims = make(map[string]time.Time)
	}
	if until, ok := m.claims[key]; ok && m.now().Before(until) {
		return false, nil
	}
	m.sweepLocked()
	m.claims[key] = expiry
	return true, nil
}

// sweepSample bounds the entries of each map one write looks at for expired ones.
const sweepSample = 8

// sweepLocked drops the expired claims and actions among a few of each map's (sessions go in
// the order they expire, as the next one is stored), visited in Go's random
// iteration order, so that a write costs the same however many entries are live. An entry
// outlives its expiry by about n/sweepSample writes, n the size of its map, which keeps the
// expired entries to a fraction of the live ones; reads never return them.
func (m *MemoryStore) sweepLocked() {
	now := m.now()
	toolcache.Sweep(m.claims, sweepSample, func(until time.Time) time.Time { return until }, now)
	toolcache.Sweep(m.actions, sweepSample, func(r *actionRecord) time.Time { return r.until }, now)
}

// actionRecord is an action's state in a MemoryStore.
type actionRecord struct {
	owner  string    // the claim's owner while the action runs
	result []byte    // nil while the action runs
	until  time.Time // lease end while running, record expiry once finished
}

// BeginAction claims id for owner unless it is claimed or finished.
func (m *MemoryStore) BeginAction(_ context.Context, id, owner string, leaseUntil time.Time) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.actions == nil {
		m.actions = make(map[string]*actionRecord)
	}
	if r, ok := m.liveAction(id); ok {
		if r.result == nil {
			return nil, ErrActionInProgress
		}
		return r.result, nil
	}
	m.sweepLocked()
	m.actions[id] = &actionRecord{owner: owner, until: leaseUntil}
	return nil, nil
}

// FinishAction records result for id until expiry, unless another owner holds id.
func (m *MemoryStore) FinishAction(_ context.Context, id, owner string, result []byte, expiry time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.actions == nil {
		m.actions = make(map[string]*actionRecord)
	}
	if r, ok := m.liveAction(id); ok && (r.result != nil || r.owner != owner) {
		return ErrActionInProgress
	}
	m.actions[id] = &actionRecord{result: append([]byte{}, result...), until: expiry}
	return nil
}

// AbandonAction forgets owner's claim of id.
func (m *MemoryStore) AbandonAction(_ context.Context, id, owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.actions[id]; ok && r.result == nil && r.owner == owner {
		delete(m.actions, id)
	}
	return nil
}

// liveAction returns the record of id unless it expired. The caller holds m.mu.
func (m *MemoryStore) liveAction(id string) (*actionRecord, bool) {
	r, ok := m.actions[id]
	if !ok || !m.now().Before(r.until) {
		return nil, false
	}
	return r, true
}
