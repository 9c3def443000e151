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
)

// MemoryTurnLog is a [TurnLog] in this process's memory, for a single replica. The zero value
// is ready to use.
type MemoryTurnLog struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxBytes bounds the memory of the turns kept (default 16 MiB, some 3 000 turns of the
	// demo's size); past it the turns that were logged first are dropped, and their resumes
	// are 404.
	MaxBytes int64

	mu    sync.Mutex
	turns map[string]*memTurn
	order list.List // of *memTurn, first logged first
	bytes int64
}

type memTurn struct {
	id      string
	owner   TurnOwner
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

// AppendEvents adds evs to the turn's log.
func (m *MemoryTurnLog) AppendEvents(_ context.Context, turn string, owner *TurnOwner, evs []LoggedEvent, done bool, keep time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.turns == nil {
		m.turns = map[string]*memTurn{}
	}
	now := m.now()
	m.sweep(now)
	t := m.turns[turn]
	if t == nil && owner == nil {
		// Dropped to make room, or over for too long: written again from here, it would
		// have no owner and a hole where its first events were.
		return ErrTurnNotFound
	}
	if t == nil {
		t = &memTurn{id: turn, owner: *owner, changed: make(chan struct{})}
		t.elem = m.order.PushBack(t)
		m.turns[turn] = t
		t.bytes = memTurnOverhead
		m.bytes += memTurnOverhead
	}
	for _, ev := range evs {
		ev.Data = append([]byte(nil), ev.Data...)
		n := int64(cap(ev.Data) + len(ev.Name) + memEventOverhead)
		t.events = append(t.events, ev)
		t.bytes += n
		m.bytes += n
	}
	t.done = t.done || done
	t.keep = keep
	close(t.changed)
	t.changed = make(chan struct{})
	limit := m.MaxBytes
	if limit == 0 {
		limit = defaultTurnLogMemory
	}
	for m.bytes > limit && m.order.Len() > 1 {
		m.drop(m.order.Front().Value.(*memTurn))
	}
	return nil
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

func (m *MemoryTurnLog) drop(t *memTurn) {
	m.order.Remove(t.elem)
	delete(m.turns, t.id)
	m.bytes -= t.bytes
	close(t.changed)
	t.changed = make(chan struct{})
}
