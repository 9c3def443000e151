package handoff

import (
	"context"
	"slices"
	"sync"
	"time"
)

// State is a handoff as the [Store] keeps it, so that any replica can relay its messages.
type State struct {
	ID             string    `json:"id"`
	Tenant         string    `json:"tenant"`
	Environment    string    `json:"environment"`
	User           string    `json:"user"` // the keyed hash of the user (engine.UserKey)
	ConversationID string    `json:"conversation_id"`
	Session        string    `json:"session,omitempty"`
	Locale         string    `json:"locale"`
	Channel        string    `json:"channel"`
	Reason         string    `json:"reason"`
	Summary        string    `json:"summary"`
	Transcript     []Line    `json:"transcript,omitempty"`
	Status         Status    `json:"status"`
	Centre         string    `json:"centre"` // "webhook" or "desk"
	Agent          string    `json:"agent,omitempty"`
	Note           string    `json:"note,omitempty"`
	Ended          string    `json:"ended,omitempty"` // why it failed or ended: timeout, rejected, centre_down…
	RejectReason   string    `json:"reject_reason,omitempty"`
	Created        time.Time `json:"created"`
	Joined         time.Time `json:"joined,omitzero"`
	// LastPerson and LastCustomer are when each last spoke, for the person who goes silent and
	// the customer who leaves.
	LastPerson   time.Time `json:"last_person,omitzero"`
	LastCustomer time.Time `json:"last_customer,omitzero"`
	Closed       time.Time `json:"closed,omitzero"`
}

// Event is one event of a handoff, as the customer's stream carries it: Type "handoff" (Status
// changed; Agent, and Text the line said) or "message" (From "person" or "user", Text).
type Event struct {
	Seq    int64     `json:"seq"`
	Type   string    `json:"type"`
	Status Status    `json:"status,omitempty"`
	Agent  string    `json:"agent,omitempty"`
	From   string    `json:"from,omitempty"`
	Text   string    `json:"text,omitempty"`
	At     time.Time `json:"at"`
}

// Store keeps handoffs and their events, shared by the replicas that relay them:
// [MemoryStore] for one process, redisstore for several. Its methods are called from many
// goroutines at once; errors other than ErrNotFound, ErrActive and those of Update's f mean
// that the store could not be reached.
type Store interface {
	// Create stores a new handoff; ErrActive when the user's conversation has one open.
	Create(ctx context.Context, s *State) error
	// Get returns a handoff; ErrNotFound when there is none.
	Get(ctx context.Context, id string) (*State, error)
	// Latest returns the last handoff of a user's conversation; ErrNotFound when none.
	Latest(ctx context.Context, tenant, user, conversation string) (*State, error)
	// Update changes a handoff atomically: f may be called again when another replica changed
	// it meanwhile. An error of f leaves it as it was and is returned.
	Update(ctx context.Context, id string, f func(*State) error) (*State, error)
	// Append numbers ev (from 1) and adds it to the handoff's events.
	Append(ctx context.Context, id string, ev *Event) error
	// Events returns the events after seq, waiting up to wait (or ctx's end) for the next one
	// when there are none.
	Events(ctx context.Context, id string, after int64, wait time.Duration) ([]Event, error)
	// Open lists the handoffs queued or connected, for the switchboard's timers and the desk.
	Open(ctx context.Context) ([]*State, error)
	// Count counts one more handoff for key within window and returns the count.
	Count(ctx context.Context, key string, window time.Duration) (int, error)
	// AddLines keeps the latest lines of a user's conversation (at most MaxLines) and Lines
	// returns them, for the summary; they expire after LinesTTL.
	AddLines(ctx context.Context, tenant, user, conversation string, lines ...Line) error
	Lines(ctx context.Context, tenant, user, conversation string) ([]Line, error)
}

// Bounds of what a Store keeps.
const (
	MaxLines  = 40
	LinesTTL  = 2 * time.Hour
	KeepEnded = 2 * time.Hour // an ended handoff is kept this long, for its last events and note
	MaxEvents = 500
)

// MemoryStore is a [Store] in this process's memory, for a single replica. The zero value is
// ready to use.
type MemoryStore struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex
	wake    chan struct{} // closed and replaced on each event
	byID    map[string]*memHandoff
	latest  map[string]string // tenant, user, conversation → id
	counts  map[string][]time.Time
	lines   map[string]*memLines
	cleaned time.Time
}

type memHandoff struct {
	s      State
	events []Event
}

type memLines struct {
	lines []Line
	at    time.Time
}

var _ Store = (*MemoryStore)(nil)

func (m *MemoryStore) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func convKey(tenant, user, conversation string) string {
	return tenant + "\x00" + user + "\x00" + conversation
}

// init makes the maps and drops what expired, at most once a minute; m.mu is held.
func (m *MemoryStore) init() {
	if m.byID == nil {
		m.byID, m.latest, m.counts, m.lines = map[string]*memHandoff{}, map[string]string{}, map[string][]time.Time{}, map[string]*memLines{}
		m.wake = make(chan struct{})
	}
	now := m.now()
	if now.Sub(m.cleaned) < time.Minute {
		return
	}
	m.cleaned = now
	for id, h := range m.byID {
		if !h.s.Status.Open() && now.Sub(h.s.Closed) > KeepEnded {
			delete(m.byID, id)
			if k := convKey(h.s.Tenant, h.s.User, h.s.ConversationID); m.latest[k] == id {
				delete(m.latest, k)
			}
		}
	}
	for k, l := range m.lines {
		if now.Sub(l.at) > LinesTTL {
			delete(m.lines, k)
		}
	}
	for k, ts := range m.counts {
		if len(ts) == 0 || now.Sub(ts[len(ts)-1]) > 24*time.Hour {
			delete(m.counts, k)
		}
	}
}

// Create implements [Store].
func (m *MemoryStore) Create(_ context.Context, s *State) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	k := convKey(s.Tenant, s.User, s.ConversationID)
	if id, ok := m.latest[k]; ok && m.byID[id] != nil && m.byID[id].s.Status.Open() {
		return ErrActive
	}
	m.byID[s.ID] = &memHandoff{s: clone(s)}
	m.latest[k] = s.ID
	return nil
}

func clone(s *State) State {
	c := *s
	c.Transcript = slices.Clone(s.Transcript)
	return c
}

// Get implements [Store].
func (m *MemoryStore) Get(_ context.Context, id string) (*State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	h := m.byID[id]
	if h == nil {
		return nil, ErrNotFound
	}
	c := clone(&h.s)
	return &c, nil
}

// Latest implements [Store].
func (m *MemoryStore) Latest(ctx context.Context, tenant, user, conversation string) (*State, error) {
	m.mu.Lock()
	id, ok := "", false
	if m.latest != nil {
		id, ok = m.latest[convKey(tenant, user, conversation)]
	}
	m.mu.Unlock()
	if !ok {
		return nil, ErrNotFound
	}
	return m.Get(ctx, id)
}

// Update implements [Store].
func (m *MemoryStore) Update(_ context.Context, id string, f func(*State) error) (*State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	h := m.byID[id]
	if h == nil {
		return nil, ErrNotFound
	}
	c := clone(&h.s)
	if err := f(&c); err != nil {
		return nil, err
	}
	h.s = clone(&c)
	return &c, nil
}

// Append implements [Store].
func (m *MemoryStore) Append(_ context.Context, id string, ev *Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	h := m.byID[id]
	if h == nil {
		return ErrNotFound
	}
	ev.Seq = 1
	if n := len(h.events); n > 0 {
		ev.Seq = h.events[n-1].Seq + 1
	}
	if len(h.events) >= MaxEvents {
		h.events = slices.Delete(h.events, 0, len(h.events)-MaxEvents+1)
	}
	h.events = append(h.events, *ev)
	close(m.wake)
	m.wake = make(chan struct{})
	return nil
}

// Events implements [Store].
func (m *MemoryStore) Events(ctx context.Context, id string, after int64, wait time.Duration) ([]Event, error) {
	var timer <-chan time.Time
	for {
		m.mu.Lock()
		m.init()
		h := m.byID[id]
		if h == nil {
			m.mu.Unlock()
			return nil, ErrNotFound
		}
		var out []Event
		for _, ev := range h.events {
			if ev.Seq > after {
				out = append(out, ev)
			}
		}
		wake := m.wake
		m.mu.Unlock()
		if len(out) > 0 || wait <= 0 {
			return out, nil
		}
		if timer == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			timer = t.C
		}
		select {
		case <-wake:
		case <-timer:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Open implements [Store].
func (m *MemoryStore) Open(context.Context) ([]*State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	var out []*State
	for _, h := range m.byID {
		if h.s.Status.Open() {
			c := clone(&h.s)
			out = append(out, &c)
		}
	}
	slices.SortFunc(out, func(a, b *State) int { return a.Created.Compare(b.Created) })
	return out, nil
}

// Count implements [Store].
func (m *MemoryStore) Count(_ context.Context, key string, window time.Duration) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	now := m.now()
	ts := m.counts[key]
	i := 0
	for i < len(ts) && now.Sub(ts[i]) >= window {
		i++
	}
	ts = append(ts[i:], now)
	m.counts[key] = ts
	return len(ts), nil
}

// AddLines implements [Store].
func (m *MemoryStore) AddLines(_ context.Context, tenant, user, conversation string, lines ...Line) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	k := convKey(tenant, user, conversation)
	l := m.lines[k]
	if l == nil {
		l = &memLines{}
		m.lines[k] = l
	}
	l.lines = append(l.lines, lines...)
	if n := len(l.lines); n > MaxLines {
		l.lines = slices.Delete(l.lines, 0, n-MaxLines)
	}
	l.at = m.now()
	return nil
}

// Lines implements [Store].
func (m *MemoryStore) Lines(_ context.Context, tenant, user, conversation string) ([]Line, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	l := m.lines[convKey(tenant, user, conversation)]
	if l == nil || m.now().Sub(l.at) > LinesTTL {
		return nil, nil
	}
	return slices.Clone(l.lines), nil
}
