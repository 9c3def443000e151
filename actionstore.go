package engine

import (
	"context"
	"errors"
	"time"
)

// An ActionStore makes confirmed actions run at most once, across every replica: the execute
// endpoint claims an action token's id before it calls the tool, and records the result after.
// Its methods are called from many goroutines at once.
type ActionStore interface {
	// BeginAction claims id while its action runs, until leaseUntil. It returns the recorded
	// result of an action that already finished, [ErrActionInProgress] while another claim
	// holds id, or nil, nil when the caller now holds the claim. A claim whose lease passed
	// (its replica crashed) can be taken again.
	BeginAction(ctx context.Context, id string, leaseUntil time.Time) (result []byte, err error)
	// FinishAction records the result of the claimed action until expiry.
	FinishAction(ctx context.Context, id string, result []byte, expiry time.Time) error
	// AbandonAction releases the claim of an action that did not run to the end, so that the
	// same token can be tried again.
	AbandonAction(ctx context.Context, id string) error
}

// ErrActionInProgress is returned by [ActionStore.BeginAction] while another call holds the
// action's claim.
var ErrActionInProgress = errors.New("engine: action in progress")

// actionRecord is an action's state in a MemoryStore.
type actionRecord struct {
	result []byte    // nil while the action runs
	until  time.Time // lease end while running, record expiry once finished
}

// BeginAction claims id unless it is claimed or finished.
func (m *MemoryStore) BeginAction(_ context.Context, id string, leaseUntil time.Time) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.actions == nil {
		m.actions = make(map[string]*actionRecord)
	}
	now := m.now()
	if r, ok := m.actions[id]; ok && now.Before(r.until) {
		if r.result == nil {
			return nil, ErrActionInProgress
		}
		return r.result, nil
	}
	m.sweepLocked()
	m.actions[id] = &actionRecord{until: leaseUntil}
	return nil, nil
}

// FinishAction records result for id until expiry.
func (m *MemoryStore) FinishAction(_ context.Context, id string, result []byte, expiry time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.actions == nil {
		m.actions = make(map[string]*actionRecord)
	}
	m.actions[id] = &actionRecord{result: append([]byte(nil), result...), until: expiry}
	return nil
}

// AbandonAction forgets the claim of id, unless it finished.
func (m *MemoryStore) AbandonAction(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.actions[id]; ok && r.result == nil {
		delete(m.actions, id)
	}
	return nil
}
