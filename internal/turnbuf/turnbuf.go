// Package turnbuf keeps the events of turns in memory while they run and until their time is
// over, within a bound on its memory and on the memory of each user's turns, for an in-memory
// turn log.
package turnbuf

import (
	"container/list"
	"context"
	"errors"
	"sync"
	"time"
)

// Errors of a [Log].
var (
	ErrFull     = errors.New("turnbuf: full")
	ErrNotFound = errors.New("turnbuf: turn not found")
)

// Event is one event of a turn: its id (from 1), its name and its data.
type Event struct {
	ID   int
	Name string
	Data []byte
}

// Record is what [Log.Read] found of a turn.
type Record[O any] struct {
	Owner  O
	Events []Event
	Done   bool
	// Lost: the turn is not over, and its writer has not written it within its lease.
	Lost bool
}

// Bounds bound a Log: MaxBytes its memory (0 means DefaultMaxBytes), MaxBytesPerUser the memory
// of one user's turns that a new turn of theirs may find kept (0 means an eighth of MaxBytes).
// Lease is how long a write holds a turn that is not over: a turn not written for longer is
// read as Lost (0: never).
type Bounds struct {
	MaxBytes, MaxBytesPerUser int64
	Lease                     time.Duration
}

// User names the user of a turn.
type User struct{ Tenant, User string }

// DefaultMaxBytes bounds the memory of a Log without a bound.
const DefaultMaxBytes = 16 << 20

// What a turn and an event cost in memory besides their data: the turn's record, its map
// entry, list element and channel; an event's slot in a slice that grows by doubling.
const (
	memTurnOverhead  = 512
	memEventOverhead = 96
	// fullSweepEvery is how often a full log looks at all of its turns for expired ones,
	// rather than at the front of its order alone.
	fullSweepEvery = time.Second
)

// Log is the turns kept. A turn it keeps is kept until its time is over: no turn is dropped
// to make room for another. A new turn is refused when the turns kept fill three quarters of
// the memory, the rest being room for the turns that run to grow into, or when its user's
// turns fill theirs. A running turn that would take the log past its memory stops being kept
// rather than push out one that is over. The zero value is ready to use; its methods may be
// called from many goroutines at once.
type Log[O any] struct {
	mu    sync.Mutex
	turns map[string]*memTurn[O]
	order list.List // of *memTurn, first logged first
	bytes int64
	users map[User]int64 // bytes of each user's turns
	swept time.Time      // when the whole log was last swept
}

type memTurn[O any] struct {
	id      string
	owner   O
	user    User
	events  []Event
	done    bool
	keep    time.Time
	lease   time.Time // zero: no lease
	bytes   int64
	elem    *list.Element
	changed chan struct{} // closed and replaced when events arrive or the turn ends
}

// Reserve makes room at now for a turn of owner and u about to start, to be kept until
// keep, or returns [ErrFull].
func (m *Log[O]) Reserve(turn string, owner O, u User, keep, now time.Time, b Bounds) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.turns[turn] != nil {
		return nil
	}
	t, err := m.admit(turn, owner, u, keep, now, b)
	if err == nil {
		t.renew(now, b)
	}
	return err
}

// renew extends t's lease from now. The caller holds m.mu.
func (t *memTurn[O]) renew(now time.Time, b Bounds) {
	if b.Lease > 0 {
		t.lease = now.Add(b.Lease)
	}
}

// Append adds evs to the turn's events at now; the first call creates the turn, with owner
// and u (nil: the turn is not created, and is [ErrNotFound]). done marks it over; it is kept
// until keep. A turn the log has no room for is [ErrFull].
func (m *Log[O]) Append(turn string, owner *O, u User, evs []Event, done bool, keep, now time.Time, b Bounds) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	t := m.turns[turn]
	if t == nil && owner == nil {
		// Over for too long, or not kept: written again from here, it would have no owner and
		// a hole where its first events were.
		return ErrNotFound
	}
	if t == nil {
		var err error
		if t, err = m.admit(turn, *owner, u, keep, now, b); err != nil {
			return err
		}
	}
	var n int64
	for _, ev := range evs {
		n += int64(len(ev.Data) + len(ev.Name) + memEventOverhead)
	}
	if m.bytes+n > b.maxBytes() {
		m.drop(t) // it outgrew the room left for running turns; the turns over stay
		return ErrFull
	}
	for _, ev := range evs {
		ev.Data = append([]byte(nil), ev.Data...)
		t.events = append(t.events, ev)
	}
	m.grow(t, n)
	t.done = t.done || done
	t.keep = keep
	t.renew(now, b)
	close(t.changed)
	t.changed = make(chan struct{})
	return nil
}

func (b Bounds) maxBytes() int64 {
	if b.MaxBytes > 0 {
		return b.MaxBytes
	}
	return DefaultMaxBytes
}

// admit adds an empty turn, or returns ErrFull when the log or the user has no room for a new
// one. The caller holds m.mu.
func (m *Log[O]) admit(turn string, owner O, u User, keep time.Time, now time.Time, b Bounds) (*memTurn[O], error) {
	if m.turns == nil {
		m.turns, m.users = map[string]*memTurn[O]{}, map[User]int64{}
	}
	m.sweep(now)
	limit := b.maxBytes()
	perUser := b.MaxBytesPerUser
	if perUser <= 0 {
		perUser = limit / 8
	}
	room := func() bool { return m.bytes+memTurnOverhead <= limit/4*3 && m.users[u]+memTurnOverhead <= perUser }
	if !room() && now.Sub(m.swept) >= fullSweepEvery {
		m.sweepAll(now)
	}
	if !room() {
		return nil, ErrFull
	}
	t := &memTurn[O]{id: turn, owner: owner, user: u, keep: keep, changed: make(chan struct{})}
	t.elem = m.order.PushBack(t)
	m.turns[turn] = t
	m.grow(t, memTurnOverhead)
	return t, nil
}

// grow counts n more bytes of t. The caller holds m.mu.
func (m *Log[O]) grow(t *memTurn[O], n int64) {
	t.bytes += n
	m.bytes += n
	m.users[t.user] += n
}

// Read returns the turn's owner, at most max of its events after after, and whether it is
// over, waiting up to wait for some; now gives the time. A turn not kept is [ErrNotFound].
func (m *Log[O]) Read(ctx context.Context, turn string, after, max int, wait time.Duration, now func() time.Time) (*Record[O], error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		m.mu.Lock()
		t := m.turns[turn]
		if t == nil || !now().Before(t.keep) {
			m.mu.Unlock()
			return nil, ErrNotFound
		}
		rec := &Record[O]{Owner: t.owner, Done: t.done, Lost: !t.done && !t.lease.IsZero() && !now().Before(t.lease)}
		for _, ev := range t.events {
			if ev.ID > after && len(rec.Events) < max {
				rec.Events = append(rec.Events, ev)
			}
		}
		changed, lease := t.changed, t.lease
		m.mu.Unlock()
		if len(rec.Events) > 0 || rec.Done || rec.Lost {
			return rec, nil
		}
		var lapse <-chan time.Time // the lease lapses while the reader waits
		if !lease.IsZero() {
			lapse = time.After(lease.Sub(now()))
		}
		select {
		case <-changed:
		case <-lapse:
		case <-deadline.C:
			return rec, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// sweep drops the turns at the front whose time is over: turns are kept for about as long as
// each other, so that the first logged are the first to go. The caller holds m.mu.
func (m *Log[O]) sweep(now time.Time) {
	for e := m.order.Front(); e != nil; e = m.order.Front() {
		t := e.Value.(*memTurn[O])
		if now.Before(t.keep) {
			return
		}
		m.drop(t)
	}
}

// sweepAll drops every turn whose time is over, wherever it is in the order: a turn that
// runs long keeps those logged after it from the front. The caller holds m.mu.
func (m *Log[O]) sweepAll(now time.Time) {
	m.swept = now
	for e := m.order.Front(); e != nil; {
		next := e.Next()
		if t := e.Value.(*memTurn[O]); !now.Before(t.keep) {
			m.drop(t)
		}
		e = next
	}
}

func (m *Log[O]) drop(t *memTurn[O]) {
	m.order.Remove(t.elem)
	delete(m.turns, t.id)
	m.bytes -= t.bytes
	if m.users[t.user] -= t.bytes; m.users[t.user] <= 0 {
		delete(m.users, t.user)
	}
	close(t.changed)
	t.changed = make(chan struct{})
}
