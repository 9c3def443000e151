package record

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/convengine/engine"
)

// Options configure a [Recorder]; the zero value of each field means its default.
type Options struct {
	// Key is the key material every record key is derived from (the engine's signing key, at
	// least MinKeySize bytes). It is never stored.
	Key []byte
	// PreviousKeys are earlier key materials, newest first: records sealed and checkpoints
	// signed under them stay readable and checkable after a rotation.
	PreviousKeys [][]byte
	// Logger takes the recorder's errors; never a user's words nor a key. nil discards.
	Logger *slog.Logger
	// MaxQueue bounds the turns waiting to be written; 0 means 10,000. A turn past it is
	// dropped, counted in Stats.Dropped, logged at ERROR and passed to OnAlarm.
	MaxQueue int
	// BatchSize and BatchEvery: the writer appends when BatchSize entries wait (0 means 256),
	// or every BatchEvery (0 means 200 ms).
	BatchSize  int
	BatchEvery time.Duration
	// CheckpointEvery is how often a checkpoint covers the chains that moved; 0 means 30
	// seconds, and more than a minute is a minute.
	CheckpointEvery time.Duration
	// Writers bounds the conversations the writer appends to at once; 0 means 8.
	Writers int
	// ActionTimeout bounds the synchronous write of an action's evidence; 0 means 5 seconds.
	ActionTimeout time.Duration
	// OnAlarm is called, on the caller's goroutine, when an entry is dropped; it must not
	// block.
	OnAlarm func(Alarm)
	// Retention, when set, gives each tenant's retention (see [RetentionOf]); the recorder
	// then sweeps every SweepEvery (0 means an hour).
	Retention  func(ctx context.Context) (map[string]Retention, error)
	SweepEvery time.Duration
	// KeyCacheTTL is how long a user's data key stays in memory; 0 means a minute. An erasure
	// made by another process takes effect here within it.
	KeyCacheTTL time.Duration
	// Now is the clock of checkpoints and statements; nil means time.Now. Entries take the
	// engine's time.
	Now func() time.Time
}

// Alarm says that the record lost something: an entry dropped because the queue was full or
// the recorder closed.
type Alarm struct {
	Tenant string
	Kind   Kind
	Reason string
}

// Stats are a Recorder's counters since it was made.
type Stats struct {
	Queued      int64 // entries waiting now
	Written     int64 // entries appended
	Dropped     int64 // entries lost: a full queue, or a turn after Close
	Failures    int64 // failed appends (retried)
	Checkpoints int64 // checkpoints written
}

// Recorder is the conversation record: an [engine.Recorder] (Config.Recorder) over a
// [Store], and the operations on the record (export, erasure, holds, checkpoints). Turns are
// queued and written in batches by one writer goroutine, retried with backoff while the store
// fails; actions are written synchronously. It is safe for concurrent use; [Recorder.Close]
// flushes it and stops its goroutine.
type Recorder struct {
	store Store
	keys  *keyring
	log   *slog.Logger
	o     Options
	now   func() time.Time

	mu     sync.Mutex
	queue  map[string][]*pending // by chain, in order
	queued int
	locks  map[string]*chainLock
	closed bool

	dkMu sync.Mutex
	dk   map[string]cachedKey

	wake     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	closeCtx context.Context
	once     sync.Once

	written, dropped, failures, checkpoints atomic.Int64
}

var (
	_ engine.Recorder        = (*Recorder)(nil)
	_ engine.HandoffRecorder = (*Recorder)(nil)
)

// pending is an entry on its way to the store. Its sealed bytes are made once, so that a
// retried append carries the same entry (appends are idempotent by id).
type pending struct {
	chain    Chain
	entry    Entry
	personal []byte // in clear until sealed, then nil
	evidence []byte
	must     bool // an outcome: never dropped
}

type chainLock struct {
	ch   chan struct{}
	refs int
}

type cachedKey struct {
	aead    cipher.AEAD
	expires time.Time
}

// New returns a Recorder over store and starts its writer. The Recorder does not close store.
func New(store Store, o *Options) (*Recorder, error) {
	if o == nil {
		o = &Options{}
	}
	kr, err := newKeyring(o.Key, o.PreviousKeys)
	if err != nil {
		return nil, err
	}
	r := &Recorder{store: store, keys: kr, o: *o, log: o.Logger, now: o.Now,
		queue: map[string][]*pending{}, locks: map[string]*chainLock{}, dk: map[string]cachedKey{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.now == nil {
		r.now = time.Now
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defd := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&r.o.MaxQueue, 10_000)
	def(&r.o.BatchSize, 256)
	def(&r.o.Writers, 8)
	defd(&r.o.BatchEvery, 200*time.Millisecond)
	defd(&r.o.CheckpointEvery, 30*time.Second)
	r.o.CheckpointEvery = min(r.o.CheckpointEvery, time.Minute)
	defd(&r.o.ActionTimeout, 5*time.Second)
	defd(&r.o.SweepEvery, time.Hour)
	defd(&r.o.KeyCacheTTL, time.Minute)
	go r.run()
	return r, nil
}

// Stats returns the recorder's counters.
func (r *Recorder) Stats() Stats {
	r.mu.Lock()
	q := r.queued
	r.mu.Unlock()
	return Stats{Queued: int64(q), Written: r.written.Load(), Dropped: r.dropped.Load(), Failures: r.failures.Load(), Checkpoints: r.checkpoints.Load()}
}

func chainOf(k *engine.RecordKey) Chain {
	return Chain{ID: ChainID(k.Tenant, k.Environment, k.User, k.ConversationID), Tenant: k.Tenant, Environment: k.Environment,
		User: k.User, Conversation: k.ConversationID}
}

func newPending(k *engine.RecordKey, kind Kind, at time.Time) *pending {
	c := chainOf(k)
	return &pending{chain: c, entry: Entry{ID: uuid.NewString(), Chain: c.ID, Kind: kind, At: microseconds(at), Tenant: k.Tenant,
		Environment: k.Environment, User: k.User, Session: k.SessionID, Conversation: k.ConversationID, Turn: k.TurnID, Request: k.RequestID}}
}

// Turn queues a turn; it does not block. Implements [engine.Recorder].
func (r *Recorder) Turn(ctx context.Context, t *engine.RecordedTurn) {
	p := newPending(&t.RecordKey, KindTurn, t.Time)
	content, err := turnContent(t)
	if err != nil {
		r.log.ErrorContext(ctx, "record: encoding a turn failed", "tenant", t.Tenant, "conversation", t.ConversationID, "err", err)
		return
	}
	p.personal = content
	r.enqueue(ctx, p)
}

// Handoff queues a handoff's event as turns are queued, sealed under the user's data key (the
// person's and the customer's words are personal); it does not block. Implements
// [engine.HandoffRecorder].
func (r *Recorder) Handoff(ctx context.Context, h *engine.RecordedHandoff) {
	p := newPending(&h.RecordKey, KindHandoff, h.Time)
	content, err := json.Marshal(HandoffContent{Event: h.Event, Handoff: h.Handoff, Person: h.Person, Text: h.Text, Reason: h.Reason})
	if err != nil {
		r.log.ErrorContext(ctx, "record: encoding a handoff failed", "tenant", h.Tenant, "err", err)
		return
	}
	p.personal = content
	r.enqueue(ctx, p)
}

func (r *Recorder) enqueue(ctx context.Context, p *pending) {
	r.mu.Lock()
	reason := ""
	switch {
	case r.closed && !p.must:
		reason = "the recorder is closed"
	case r.queued >= r.o.MaxQueue && !p.must:
		reason = "the record queue is full"
	default:
		r.push(p)
	}
	full := r.queued >= r.o.BatchSize
	r.mu.Unlock()
	if reason != "" {
		n := r.dropped.Add(1)
		r.log.ErrorContext(ctx, "record: an entry was dropped", "reason", reason, "tenant", p.entry.Tenant,
			"conversation", p.entry.Conversation, "kind", p.entry.Kind, "dropped", n)
		if r.o.OnAlarm != nil {
			r.o.OnAlarm(Alarm{Tenant: p.entry.Tenant, Kind: p.entry.Kind, Reason: reason})
		}
		return
	}
	if full {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// push adds p at the end of its chain's queue; r.mu is held.
func (r *Recorder) push(p *pending) {
	id := p.chain.ID
	r.queue[id] = append(r.queue[id], p)
	r.queued++
}

// Action writes an action's evidence before its backend is called, after the turns of its
// conversation still queued, and returns the function that writes its outcome. An error
// means that the evidence is not kept: the engine refuses the action. Implements
// [engine.Recorder].
func (r *Recorder) Action(ctx context.Context, a *engine.RecordedAction) (func(context.Context, *engine.ActionOutcome), error) {
	p := newPending(&a.RecordKey, KindAction, a.Time)
	ev, err := actionEvidence(a)
	if err != nil {
		return nil, fmt.Errorf("record: encoding an action: %w", err)
	}
	p.evidence = ev
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	actx, cancel := context.WithTimeout(ctx, r.o.ActionTimeout)
	defer cancel()
	if err := r.writeNow(actx, p); err != nil {
		return nil, fmt.Errorf("record: writing an action's evidence: %w", err)
	}
	key := a.RecordKey
	return func(ctx context.Context, o *engine.ActionOutcome) { r.outcome(ctx, &key, p.entry.ID, o) }, nil
}

// outcome writes an action's outcome now, or else queues it for the writer, which retries it
// until it is written: it is never dropped.
func (r *Recorder) outcome(ctx context.Context, k *engine.RecordKey, action string, o *engine.ActionOutcome) {
	p := newPending(k, KindOutcome, o.Time)
	p.must = true
	ev, err := json.Marshal(OutcomeEvidence{Action: action, Outcome: o.Outcome, Result: o.Result, Reply: o.Reply})
	if err != nil {
		r.log.ErrorContext(ctx, "record: encoding an outcome failed", "tenant", k.Tenant, "err", err)
		return
	}
	p.evidence = ev
	octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.o.ActionTimeout)
	defer cancel()
	if err := r.writeNow(octx, p); err != nil {
		r.log.WarnContext(ctx, "record: writing an outcome failed; it is queued and retried", "tenant", k.Tenant, "err", err)
		r.enqueue(ctx, p)
	}
}

// writeNow appends p after its chain's queued entries, holding the chain.
func (r *Recorder) writeNow(ctx context.Context, p *pending) error {
	id := p.chain.ID
	if err := r.lockChain(ctx, id); err != nil {
		return err
	}
	defer r.unlockChain(id)
	for {
		// p goes with the last batch of the chain's queued entries.
		more, err := r.writeChain(ctx, id, p)
		if err != nil || !more {
			return err
		}
	}
}

func (r *Recorder) lockChain(ctx context.Context, id string) error {
	r.mu.Lock()
	l := r.locks[id]
	if l == nil {
		l = &chainLock{ch: make(chan struct{}, 1)}
		r.locks[id] = l
	}
	l.refs++
	r.mu.Unlock()
	select {
	case l.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		r.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(r.locks, id)
		}
		r.mu.Unlock()
		return ctx.Err()
	}
}

func (r *Recorder) unlockChain(id string) {
	r.mu.Lock()
	l := r.locks[id]
	<-l.ch
	if l.refs--; l.refs == 0 {
		delete(r.locks, id)
	}
	r.mu.Unlock()
}

// writeChain appends up to a batch of a chain's queued entries, then extra (nil for none),
// the chain being held. On failure the queued entries go back to the front of the queue. more
// says that queued entries are left and extra was not written.
func (r *Recorder) writeChain(ctx context.Context, id string, extra *pending) (more bool, err error) {
	r.mu.Lock()
	q := r.queue[id]
	n := min(len(q), r.o.BatchSize)
	batch := q[:n:n]
	if n == len(q) {
		delete(r.queue, id)
	} else {
		r.queue[id] = q[n:]
	}
	r.queued -= n
	r.mu.Unlock()
	more = n < len(q)
	if !more && extra != nil {
		batch = append(batch, extra)
	}
	if len(batch) == 0 {
		return false, nil
	}
	err = r.appendBatch(ctx, batch)
	if err != nil {
		r.failures.Add(1)
		r.mu.Lock()
		back := batch[:n]
		if len(back) > 0 {
			r.queue[id] = append(back, r.queue[id]...)
			r.queued += len(back)
		}
		r.mu.Unlock()
		return more, err
	}
	return more, nil
}

func (r *Recorder) appendBatch(ctx context.Context, batch []*pending) error {
	es := make([]Entry, len(batch))
	for i, p := range batch {
		if err := r.sealPending(ctx, p); err != nil {
			return err
		}
		es[i] = p.entry
	}
	if _, err := r.store.Append(ctx, batch[0].chain, es, linkEntries); err != nil {
		return err
	}
	r.written.Add(int64(len(es)))
	return nil
}

// sealPending seals p's contents, once.
func (r *Recorder) sealPending(ctx context.Context, p *pending) error {
	if p.personal != nil {
		a, err := r.dataKey(ctx, p.entry.Tenant, p.entry.User)
		if err != nil {
			return err
		}
		p.entry.Personal = seal(a, p.entry.ID, p.personal)
		p.entry.PersonalHash = sum(p.entry.Personal)
		p.personal = nil
	}
	if p.evidence != nil {
		a, _ := r.keys.aead(0, infoEvidence, p.entry.Tenant)
		p.entry.Evidence = seal(a, p.entry.ID, p.evidence)
		p.entry.EvidenceHash = sum(p.entry.Evidence)
		p.evidence = nil
	}
	return nil
}

// run is the writer: batches, checkpoints, sweeps, and the flush at Close.
func (r *Recorder) run() {
	defer close(r.done)
	batch := time.NewTicker(r.o.BatchEvery)
	defer batch.Stop()
	cp := time.NewTicker(r.o.CheckpointEvery)
	defer cp.Stop()
	sweep := time.NewTicker(r.o.SweepEvery)
	defer sweep.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A write under way when Close is called ends when Close's context does.
	go func() {
		select {
		case <-r.stop:
			select {
			case <-r.closeCtx.Done():
				cancel()
			case <-ctx.Done():
			}
		case <-ctx.Done():
		}
	}()
	attempt := 0
	var retryAt time.Time
	for {
		select {
		case <-r.stop:
			r.final()
			return
		case <-r.wake:
		case <-batch.C:
		case <-cp.C:
			if _, err := r.Checkpoint(ctx); err != nil {
				r.log.Error("record: a checkpoint failed", "err", err)
			}
			continue
		case <-sweep.C:
			if r.o.Retention != nil {
				r.sweepAll(ctx)
			}
			continue
		}
		if time.Now().Before(retryAt) {
			continue // backing off: a tick or a wake does not shorten it
		}
		if err := r.writeAll(ctx); err != nil {
			attempt++
			if attempt == 1 {
				r.log.Warn("record: the store failed; entries are kept and retried", "err", err)
			}
			retryAt = time.Now().Add(backoff(attempt))
			continue
		}
		if attempt > 0 {
			r.log.Info("record: the store recovered", "attempts", attempt)
		}
		attempt = 0
	}
}

// backoff is the wait before retry n: exponential from 50 ms to 5 s, with jitter over its
// second half so that replicas do not retry in step.
func backoff(n int) time.Duration {
	d := min(50*time.Millisecond<<min(n-1, 10), 5*time.Second)
	return d/2 + mrand.N(d/2+1)
}

// writeAll writes what is queued, up to Options.Writers chains at once (each chain's entries
// in order, under its lock): one conversation is one transaction, and a writer that took them
// one after the other kept a PostgreSQL record to a round trip's worth of conversations a
// second, far behind a busy replica's turns. It goes on past a chain that fails and returns
// the first error.
func (r *Recorder) writeAll(ctx context.Context) error {
	r.mu.Lock()
	order := make([]string, 0, len(r.queue))
	for id := range r.queue {
		order = append(order, id)
	}
	r.mu.Unlock()
	var (
		mu    sync.Mutex
		first error
	)
	failed := func(err error) {
		mu.Lock()
		first = cmpErr(first, err)
		mu.Unlock()
	}
	var g errgroup.Group
	g.SetLimit(r.o.Writers)
	for _, id := range order {
		g.Go(func() error {
			if err := r.lockChain(ctx, id); err != nil {
				failed(err)
				return nil
			}
			defer r.unlockChain(id)
			for {
				more, err := r.writeChain(ctx, id, nil)
				if err != nil {
					failed(err)
					return nil
				}
				if !more {
					return nil
				}
			}
		})
	}
	g.Wait()
	return first
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// final flushes everything, retrying until Close's context ends, then writes a checkpoint.
func (r *Recorder) final() {
	ctx := r.closeCtx
	for attempt := 1; ; attempt++ {
		err := r.writeAll(ctx)
		r.mu.Lock()
		left := r.queued
		r.mu.Unlock()
		if err == nil && left == 0 {
			break
		}
		select {
		case <-ctx.Done():
			r.log.Error("record: entries were not written before the recorder closed", "entries", left, "err", err)
			return
		case <-time.After(backoff(attempt)):
		}
	}
	if _, err := r.Checkpoint(ctx); err != nil {
		r.log.Error("record: the final checkpoint failed", "err", err)
	}
}

// Flush writes every entry queued now, waiting for the store (it returns the store's error
// when ctx ends first).
func (r *Recorder) Flush(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		err := r.writeAll(ctx)
		r.mu.Lock()
		left := r.queued
		r.mu.Unlock()
		if err == nil && left == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("record: flushing, %d entries left: %w", left, errors.Join(ctx.Err(), err))
		case <-time.After(backoff(attempt)):
		}
	}
}

// Close flushes the queue, writes a final checkpoint (after a clean stop every entry is
// covered) and stops the writer. It waits until that is done or ctx ends; entries still queued
// then are lost, and Close says how many. Turns after Close are dropped; actions refused.
func (r *Recorder) Close(ctx context.Context) error {
	r.once.Do(func() {
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
		r.closeCtx = ctx
		close(r.stop)
	})
	select {
	case <-r.done:
	case <-ctx.Done():
		<-r.done // the writer's store calls end with ctx
	}
	if n := r.Stats().Queued; n > 0 {
		return fmt.Errorf("record: closed with %d entries not written: %w", n, cmpErr(ctx.Err(), ErrClosed))
	}
	return nil
}

// dataKey returns the user's data key, making it at the user's first record.
func (r *Recorder) dataKey(ctx context.Context, tenant, user string) (cipher.AEAD, error) {
	name := tenant + "\x00" + user
	now := time.Now()
	r.dkMu.Lock()
	c, ok := r.dk[name]
	r.dkMu.Unlock()
	if ok && now.Before(c.expires) {
		return c.aead, nil
	}
	k, err := r.store.Key(ctx, tenant, user)
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrErased) {
		raw := make([]byte, 32)
		_, _ = rand.Read(raw)
		wrap, id := r.keys.aead(0, infoTenant, tenant)
		k, err = r.store.PutKey(ctx, DataKey{Tenant: tenant, User: user, KeyID: id, Wrapped: seal(wrap, name, raw), CreatedAt: microseconds(r.now())})
	}
	if err != nil {
		return nil, fmt.Errorf("record: reading a data key: %w", err)
	}
	raw, err := r.unwrap(&k)
	if err != nil {
		return nil, err
	}
	a := newGCM(raw)
	r.dkMu.Lock()
	if len(r.dk) > 100_000 {
		clear(r.dk) // a bound, not a policy: keys are read again from the store
	}
	r.dk[name] = cachedKey{aead: a, expires: now.Add(r.o.KeyCacheTTL)}
	r.dkMu.Unlock()
	return a, nil
}

// unwrap opens a stored data key with the tenant wrapping key its KeyID names.
func (r *Recorder) unwrap(k *DataKey) ([]byte, error) {
	for i := range r.keys.sets {
		a, id := r.keys.aead(i, infoTenant, k.Tenant)
		if id != k.KeyID {
			continue
		}
		raw, err := open(a, k.Tenant+"\x00"+k.User, k.Wrapped)
		if err != nil || len(raw) != 32 {
			return nil, fmt.Errorf("record: a data key does not unwrap under its key %s", k.KeyID)
		}
		return raw, nil
	}
	return nil, fmt.Errorf("record: a data key is wrapped by key %s, which is not among the recorder's keys", k.KeyID)
}

// forget drops a user's data key from the cache.
func (r *Recorder) forget(tenant, user string) {
	r.dkMu.Lock()
	delete(r.dk, tenant+"\x00"+user)
	r.dkMu.Unlock()
}
