package engine

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// defaultTurnLogMemory bounds the memory of a MemoryTurnLog.
const defaultTurnLogMemory = 16 << 20

// What a turn and an event cost in memory besides their data: the turn's record, its map
// entry, list element and channel; an event's slot in a slice that grows by doubling.
const (
	memTurnOverhead  = 512
	memEventOverhead = 96
	// fullSweepEvery is how often a full log looks at all of its turns for expired ones,
	// rather than at the front of its order alone.
	fullSweepEvery = time.Second
)

var _ TurnReserver = (*MemoryTurnLog)(nil)

// MemoryTurnLog is a [TurnLog] in this process's memory, for a single replica. It is also a
// [TurnReserver]: it says before a turn starts whether it will keep it. The zero value is ready
// to use.
//
// A turn it keeps is kept until its time is over: no turn is dropped to make room for
// another. A new turn is refused ([ErrStoreFull]; the engine runs it without keeping it) when
// the turns kept fill three quarters of MaxBytes, the rest being room for the turns that run
// to grow into, or when its user's turns fill MaxBytesPerUser. A running turn that would take
// the log past MaxBytes stops being kept (its resumes are 404) rather than push out one that
// is over.
type MemoryTurnLog struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxBytes bounds the memory of the turns kept (default 16 MiB, some 3 000 turns of the
	// demo's size).
	MaxBytes int64
	// MaxBytesPerUser bounds the memory of the turns of one user of a tenant (TurnOwner's
	// Tenant and User) that a new turn of theirs may find kept; 0 means an eighth of MaxBytes.
	MaxBytesPerUser int64

	mu    sync.Mutex
	turns map[string]*memTurn
	order list.List // of *memTurn, first logged first
	bytes int64
	users map[memUser]int64 // bytes of each user's turns
	swept time.Time         // when the whole log was last swept
}

// memUser names a user among the turns of a MemoryTurnLog.
type memUser struct{ tenant, user string }

type memTurn struct {
	id      string
	owner   TurnOwner
	user    memUser
	events  []LoggedEvent
	done    bool
	keep    time.Time
	bytes   int64
	elem    *list.Element
	changed chan struct{} // closed and replaced when events arrive or the turn ends
}

func (m *MemoryTurnLog) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// ReserveTurn makes room for a turn about to start, or returns [ErrStoreFull].
func (m *MemoryTurnLog) ReserveTurn(_ context.Context, turn string, owner *TurnOwner, keep time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.turns[turn] != nil {
		return nil
	}
	_, err := m.admit(turn, owner, keep, m.now())
	return err
}

// AppendEvents adds evs to the turn's log.
func (m *MemoryTurnLog) AppendEvents(_ context.Context, turn string, owner *TurnOwner, evs []LoggedEvent, done bool, keep time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.sweep(now)
	t := m.turns[turn]
	if t == nil && owner == nil {
		// Over for too long, or not kept: written again from here, it would have no owner and
		// a hole where its first events were.
		return ErrTurnNotFound
	}
	if t == nil {
		var err error
		if t, err = m.admit(turn, owner, keep, now); err != nil {
			return err
		}
	}
	var n int64
	for _, ev := range evs {
		n += int64(len(ev.Data) + len(ev.Name) + memEventOverhead)
	}
	if m.bytes+n > m.maxBytes() {
		m.drop(t) // it outgrew the room left for running turns; the turns over stay
		return ErrStoreFull
	}
	for _, ev := range evs {
		ev.Data = append([]byte(nil), ev.Data...)
		t.events = append(t.events, ev)
	}
	m.grow(t, n)
	t.done = t.done || done
	t.keep = keep
	close(t.changed)
	t.changed = make(chan struct{})
	return nil
}

func (m *MemoryTurnLog) maxBytes() int64 {
	if m.MaxBytes > 0 {
		return m.MaxBytes
	}
	return defaultTurnLogMemory
}

// admit adds an empty turn, or returns ErrStoreFull when the log or the user has no room for
// a new one. The caller holds m.mu.
func (m *MemoryTurnLog) admit(turn string, owner *TurnOwner, keep time.Time, now time.Time) (*memTurn, error) {
	if m.turns == nil {
		m.turns, m.users = map[string]*memTurn{}, map[memUser]int64{}
	}
	m.sweep(now)
	limit := m.maxBytes()
	perUser := m.MaxBytesPerUser
	if perUser <= 0 {
		perUser = limit / 8
	}
	u := memUser{owner.Tenant, owner.User}
	room := func() bool { return m.bytes+memTurnOverhead <= limit/4*3 && m.users[u]+memTurnOverhead <= perUser }
	if !room() && now.Sub(m.swept) >= fullSweepEvery {
		m.sweepAll(now)
	}
	if !room() {
		return nil, ErrStoreFull
	}
	t := &memTurn{id: turn, owner: *owner, user: u, keep: keep, changed: make(chan struct{})}
	t.elem = m.order.PushBack(t)
	m.turns[turn] = t
	m.grow(t, memTurnOverhead)
	return t, nil
}

// grow counts n more bytes of t. The caller holds m.mu.
func (m *MemoryTurnLog) grow(t *memTurn, n int64) {
	t.bytes += n
	m.bytes += n
	m.users[t.user] += n
}

// ReadEvents returns the turn's events after after, waiting up to wait for some.
func (m *MemoryTurnLog) ReadEvents(ctx context.Context, turn string, after, max int, wait time.Duration) (*TurnRecord, error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		m.mu.Lock()
		t := m.turns[turn]
		if t == nil || !m.now().Before(t.keep) {
			m.mu.Unlock()
			return nil, ErrTurnNotFound
		}
		rec := &TurnRecord{Owner: t.owner, Done: t.done}
		for _, ev := range t.events {
			if ev.ID > after && len(rec.Events) < max {
				rec.Events = append(rec.Events, ev)
			}
		}
		changed := t.changed
		m.mu.Unlock()
		if len(rec.Events) > 0 || rec.Done {
			return rec, nil
		}
		select {
		case <-changed:
		case <-deadline.C:
			return rec, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// sweep drops the turns at the front whose time is over: turns are kept for about as long as
// each other, so that the first logged are the first to go. The caller holds m.mu.
func (m *MemoryTurnLog) sweep(now time.Time) {
	for e := m.order.Front(); e != nil; e = m.order.Front() {
		t := e.Value.(*memTurn)
		if now.Before(t.keep) {
			return
		}
		m.drop(t)
	}
}

// sweepAll drops every turn whose time is over, wherever it is in the order: a turn that
// runs long keeps those logged after it from the front. The caller holds m.mu.
func (m *MemoryTurnLog) sweepAll(now time.Time) {
	m.swept = now
	for e := m.order.Front(); e != nil; {
		next := e.Next()
		if t := e.Value.(*memTurn); !now.Before(t.keep) {
			m.drop(t)
		}
		e = next
	}
}

func (m *MemoryTurnLog) drop(t *memTurn) {
	m.order.Remove(t.elem)
	delete(m.turns, t.id)
	m.bytes -= t.bytes
	if m.users[t.user] -= t.bytes; m.users[t.user] <= 0 {
		delete(m.users, t.user)
	}
	close(t.changed)
	t.changed = make(chan struct{})
}
