package engine

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"
)

// Session is what the engine keeps of a session between requests.
type Session struct {
	ID        string
	TenantKey string
	CreatedAt time.Time
	ExpiresAt time.Time
	// KeyThumbprint is the RFC 7638 thumbprint of the device key of a bound session.
	KeyThumbprint string
	Metadata      json.RawMessage
}

// A SessionStore keeps sessions until they expire. Its methods are called from many goroutines
// at once; with several engine replicas it must be shared by all of them.
type SessionStore interface {
	PutSession(ctx context.Context, s *Session) error
	// Session returns [ErrSessionNotFound] for an unknown or expired id.
	Session(ctx context.Context, id string) (*Session, error)
}

// A ReplayStore remembers single-use values, such as DPoP proof ids and action token ids, until
// they expire. It is called from many goroutines at once and, with several replicas, must be
// shared by all of them.
type ReplayStore interface {
	// Claim records key until expiry and reports true, or reports false when key is already
	// recorded and has not expired. It is atomic.
	Claim(ctx context.Context, key string, expiry time.Time) (bool, error)
}

// ErrSessionNotFound is returned by a [SessionStore] for an unknown or expired session.
var ErrSessionNotFound = errors.New("engine: session not found")

// ErrStoreUnavailable is wrapped by the errors a store returns when its backend cannot be
// reached or does not answer in time. What needs the store then answers 503 store_unavailable,
// which the client may retry; a store never reports "not found" or "claimed" instead.
var ErrStoreUnavailable = errors.New("engine: store unavailable")

// MemoryStore is a [SessionStore], a [ReplayStore] and an [ActionStore] in this process's memory, for a single
// replica. Expired entries are removed as new ones arrive. The zero value is ready to use.
type MemoryStore struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu       sync.Mutex
	sessions map[string]*Session
	claims   map[string]time.Time
	actions  map[string]*actionRecord
}

func (m *MemoryStore) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// PutSession stores s until s.ExpiresAt.
func (m *MemoryStore) PutSession(_ context.Context, s *Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sessions == nil {
		m.sessions = make(map[string]*Session)
	}
	m.sweepLocked()
	cp := *s
	m.sessions[s.ID] = &cp
	return nil
}

// Session returns the session of id.
func (m *MemoryStore) Session(_ context.Context, id string) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok || !m.now().Before(s.ExpiresAt) {
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

// sweepLocked drops the expired entries among a few of each map's, visited in Go's random
// iteration order, so that a write costs the same however many entries are live. An entry
// outlives its expiry by about n/sweepSample writes, n the size of its map, which keeps the
// expired entries to a fraction of the live ones; reads never return them.
func (m *MemoryStore) sweepLocked() {
	now := m.now()
	n := 0
	for k, s := range m.sessions {
		if !now.Before(s.ExpiresAt) {
			delete(m.sessions, k)
		}
		if n++; n == sweepSample {
			break
		}
	}
	n = 0
	for k, until := range m.claims {
		if !now.Before(until) {
			delete(m.claims, k)
		}
		if n++; n == sweepSample {
			break
		}
	}
	n = 0
	for k, r := range m.actions {
		if !now.Before(r.until) {
			delete(m.actions, k)
		}
		if n++; n == sweepSample {
			break
		}
	}
}
