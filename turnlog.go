package engine

import (
	"context"
	"errors"
	"time"

	"github.com/convengine/engine/internal/batchwriter"
	"github.com/convengine/engine/internal/turnbuf"
)

// A TurnLog keeps the events of the turns of the turn stream while they run and for a while
// after, so that a client whose stream broke (a phone that moved from Wi-Fi to cellular) can
// resume it on any replica with GET /engine/turns/{turnId} and Last-Event-ID, instead of
// running the turn again. With a TurnLog, a turn whose client went away runs to its end
// (bounded by its deadline); without one, it stops. Its methods are called from many
// goroutines at once; with several replicas it must be shared by all of them.
type TurnLog interface {
	// AppendEvents adds evs to the log of turn, in order, after those already there; the first
	// call creates the log, with owner. done marks the turn over. The log is kept until keep.
	// A call that failed with an error wrapping [ErrStoreUnavailable] is made again with the
	// same events: a log that holds them already (the answer was lost) returns nil.
	// While the turn runs, its replica calls it at least every 4 s (two thirds of
	// [TurnLease]), with no events when it has none: a log that keeps this lease reports a turn
	// not written for longer as Lost, its replica gone.
	// A log may refuse later calls (owner nil) for a turn it no longer holds with
	// [ErrTurnNotFound]; the engine then stops writing the turn. evs, and the Data of each, are
	// the engine's again once the call returns: a log that keeps them copies them.
	AppendEvents(ctx context.Context, turn string, owner *TurnOwner, evs []LoggedEvent, done bool, keep time.Time) error
	// ReadEvents returns the turn's owner, at most max of its events numbered after after,
	// and whether it is over. When it has no such events and is not over, it waits up to wait
	// for some. An unknown or expired turn is [ErrTurnNotFound].
	ReadEvents(ctx context.Context, turn string, after, max int, wait time.Duration) (*TurnRecord, error)
}

// A TurnReserver is a [TurnLog] that says, before a turn starts, whether it will keep it: the
// engine calls ReserveTurn before the turn's start event, whose resumable member tells the
// client the answer. It is called from many goroutines at once.
type TurnReserver interface {
	// ReserveTurn makes room for turn, of owner, to be kept until keep, as the first
	// AppendEvents of the turn would. It returns [ErrStoreFull] when the log will not keep the
	// turn; the engine then runs the turn without writing it to the log.
	ReserveTurn(ctx context.Context, turn string, owner *TurnOwner, keep time.Time) error
}

// ErrTurnNotFound is returned by a [TurnLog] for a turn it does not hold.
var ErrTurnNotFound = errors.New("engine: turn not found")

// TurnOwner is who may resume a turn: the same tenant, user, session and environment.
type TurnOwner struct {
	Tenant string `json:"tenant"`
	// User is a keyed hash of the tenant and the user's token, never the token.
	User    string `json:"user"`
	Session string `json:"session,omitempty"`
	// Environment is the environment the turn ran in: a staging request does not read a
	// production turn, nor the other way round.
	Environment string `json:"environment,omitempty"`
}

// LoggedEvent is one event of a turn stream as it was sent: its id (from 1), its name and its
// data line.
type LoggedEvent struct {
	ID   int
	Name string
	Data []byte
}

// TurnRecord is what [TurnLog.ReadEvents] found of a turn.
type TurnRecord struct {
	Owner  TurnOwner
	Events []LoggedEvent
	Done   bool
	// Lost: the turn is not over and its replica has not written it for [TurnLease]: it died
	// with the turn, which will never be done. The engine ends it for whoever follows it with
	// a retryable turn_lost error. A log that keeps no lease leaves it false.
	Lost bool
}

// TurnLease is how long a write to the [TurnLog] holds a running turn for its replica.
const TurnLease = 6 * time.Second

// turnOwner returns who req is, as a turn's owner: the turn it runs, or the one it resumes.
func (e *Engine) turnOwner(req *request) TurnOwner {
	return TurnOwner{Tenant: req.Tenant.Key, User: e.userOf(req),
		Session: req.sessionID(), Environment: req.Environment.Name}
}

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

	log turnbuf.Log[TurnOwner]
}

func (m *MemoryTurnLog) bounds() turnbuf.Bounds {
	return turnbuf.Bounds{MaxBytes: m.MaxBytes, MaxBytesPerUser: m.MaxBytesPerUser, Lease: TurnLease}
}

// ReserveTurn makes room for a turn about to start, or returns [ErrStoreFull].
func (m *MemoryTurnLog) ReserveTurn(_ context.Context, turn string, owner *TurnOwner, keep time.Time) error {
	return memTurnLogErr(m.log.Reserve(turn, *owner, turnbuf.User{Tenant: owner.Tenant, User: owner.User}, keep, clock(m.Now), m.bounds()))
}

// AppendEvents adds evs to the turn's log.
func (m *MemoryTurnLog) AppendEvents(_ context.Context, turn string, owner *TurnOwner, evs []LoggedEvent, done bool, keep time.Time) error {
	var u turnbuf.User
	if owner != nil {
		u = turnbuf.User{Tenant: owner.Tenant, User: owner.User}
	}
	events := make([]turnbuf.Event, len(evs))
	for i, ev := range evs {
		events[i] = turnbuf.Event(ev)
	}
	return memTurnLogErr(m.log.Append(turn, owner, u, events, done, keep, clock(m.Now), m.bounds()))
}

// ReadEvents returns the turn's events after after, waiting up to wait for some.
func (m *MemoryTurnLog) ReadEvents(ctx context.Context, turn string, after, max int, wait time.Duration) (*TurnRecord, error) {
	rec, err := m.log.Read(ctx, turn, after, max, wait, func() time.Time { return clock(m.Now) })
	if err != nil {
		return nil, memTurnLogErr(err)
	}
	out := &TurnRecord{Owner: rec.Owner, Done: rec.Done, Lost: rec.Lost}
	for _, ev := range rec.Events {
		out.Events = append(out.Events, LoggedEvent(ev))
	}
	return out, nil
}

// memTurnLogErr returns the error of a TurnLog for one of turnbuf's.
func memTurnLogErr(err error) error {
	switch err {
	case turnbuf.ErrFull:
		return ErrStoreFull
	case turnbuf.ErrNotFound:
		return ErrTurnNotFound
	}
	return err
}

// Bounds of the turn log's writer.
const (
	recordTimeout    = 5 * time.Second
	defaultResumeFor = 5 * time.Minute
)

// startRecorder starts writing the turn's events to the TurnLog, in order and in batches, from
// a goroutine of its own, so that the turn never waits for the store: events wait in memory,
// which holds them already (a turn's events are bounded by its deadline and its model's
// output). It writes every TurnLease/3 without events too, renewing the turn's lease. When a
// write fails, the recorder stops writing: a log with a hole in it would replay as a whole
// answer. Resumes of the turn then end when its lease lapses. It returns nil when the
// log, a [TurnReserver], will not keep the turn: the turn then runs as it would without a log,
// its start event saying it cannot be resumed.
func (e *Engine) startRecorder(t *turn, deadline time.Time) *batchwriter.Writer[LoggedEvent] {
	turn, owner := t.turnID, e.turnOwner(t.req)
	if res, ok := e.turnLog.(TurnReserver); ok {
		ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
		err := res.ReserveTurn(ctx, turn, &owner, deadline.Add(e.resumeFor))
		cancel()
		if err != nil {
			if errors.Is(err, ErrStoreFull) {
				if e.obs.Overload != nil {
					e.obs.Overload(context.Background(), OverloadEvent{Bound: BoundTurnLog, RequestID: t.req.ID, Tenant: owner.Tenant})
				}
			} else {
				e.log.Warn("reserving a turn in its log failed; it cannot be resumed", "turnId", turn, "tenant", owner.Tenant, "err", err)
			}
			return nil
		}
	}
	first := &owner // the first write creates the turn's log
	return batchwriter.StartBeating(func(batch []LoggedEvent, last bool) error {
		keep := deadline.Add(e.resumeFor)
		if last {
			keep = e.now().Add(e.resumeFor)
		}
		var err error
		// A store that fails for a while (Redis failing over) is tried again, within the
		// turn's lease: followers then resume the turn rather than find it lost.
		var failed time.Time
		for wait := 250 * time.Millisecond; ; wait *= 2 {
			ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
			err = e.turnLog.AppendEvents(ctx, turn, first, batch, last, keep)
			cancel()
			if failed.IsZero() {
				failed = time.Now() // real time, as the sleeps: Config.Now may be a test's clock
			}
			if err == nil || !errors.Is(err, ErrStoreUnavailable) || time.Since(failed)+wait > TurnLease {
				break
			}
			time.Sleep(wait)
		}
		if err != nil {
			e.log.Warn("keeping a turn's events failed; it cannot be resumed", "turnId", turn, "tenant", owner.Tenant, "err", err)
		}
		first = nil
		return err
	}, TurnLease/3)
}
