package engine

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/convengine/engine/internal/sessiontable"
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
	// Claims, bindings and actions, each until a time: expired entries go as new ones come.
	claims  sessiontable.Leases[struct{}]
	binds   sessiontable.Leases[string]
	actions sessiontable.Actions
}

// Defaults of a MemoryStore's bounds on sessions.
const (
	defaultSessionMemory      int64 = 64 << 20
	defaultMaxSessionsPerUser       = 16
	// sessionOverhead is what a session costs besides its metadata: the struct, its strings and
	// the index entries.
	sessionOverhead = 320
)

// clock is the time of a memory store's Now, time.Now when it is nil.
func clock(now func() time.Time) time.Time {
	if now != nil {
		return now()
	}
	return time.Now()
}

func sessionSize(s *Session) int64 {
	return sessionOverhead + int64(len(s.ID)+len(s.TenantKey)+len(s.KeyThumbprint)+len(s.User)+len(s.GateKey)+len(s.GateCredential)+len(s.Metadata))
}

// Bind binds key to value until expiry unless it is bound already, and returns the value bound.
func (m *MemoryStore) Bind(_ context.Context, key, value string, expiry time.Time) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	bound, _ := m.binds.Add(key, value, expiry, clock(m.Now))
	return bound, nil
}

// PutSession stores s until s.ExpiresAt, within the store's bounds, or returns [ErrStoreFull].
func (m *MemoryStore) PutSession(_ context.Context, s *Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	maxBytes, maxPerUser := cmp.Or(m.MaxSessionBytes, defaultSessionMemory), cmp.Or(m.MaxSessionsPerUser, defaultMaxSessionsPerUser)
	cp := *s
	if !m.sessions.Put(&sessiontable.Entry[*Session]{ID: cp.ID, User: cp.User, Expires: cp.ExpiresAt, Size: sessionSize(&cp), Value: &cp}, clock(m.Now), maxBytes, maxPerUser) {
		return ErrStoreFull
	}
	return nil
}

// Session returns the session of id.
func (m *MemoryStore) Session(_ context.Context, id string) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions.Get(id, clock(m.Now))
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
	_, fresh := m.claims.Add(key, struct{}{}, expiry, clock(m.Now))
	return fresh, nil
}

// BeginAction claims id for owner unless it is claimed or finished.
func (m *MemoryStore) BeginAction(_ context.Context, id, owner string, leaseUntil time.Time) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	result, held := m.actions.Begin(id, owner, leaseUntil, clock(m.Now))
	if held {
		return nil, ErrActionInProgress
	}
	return result, nil
}

// FinishAction records result for id until expiry, unless another owner holds id.
func (m *MemoryStore) FinishAction(_ context.Context, id, owner string, result []byte, expiry time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.actions.Finish(id, owner, result, expiry, clock(m.Now)) {
		return ErrActionInProgress
	}
	return nil
}

// AbandonAction forgets owner's claim of id.
func (m *MemoryStore) AbandonAction(_ context.Context, id, owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.actions.Abandon(id, owner, clock(m.Now))
	return nil
}
