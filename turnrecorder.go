package engine

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Bounds of the turn log's writer.
const (
	recordBatch      = 64
	recordTimeout    = 5 * time.Second
	defaultResumeFor = 5 * time.Minute
)

// turnRecorder writes a turn's events to the TurnLog, in order and in batches, from a
// goroutine of its own, so that the turn never waits for the store: events wait in memory,
// which holds them already (a turn's events are bounded by its deadline and its model's
// output). When a write fails, the recorder stops writing: a log with a hole in it would
// replay as a whole answer. Resumes of the turn then end without done.
type turnRecorder struct {
	e     *Engine
	turn  string
	owner TurnOwner
	until time.Time // the turn's deadline
	wake  chan struct{}
	ended chan struct{}

	mu      sync.Mutex
	pending []LoggedEvent
	over    bool // the turn has ended: what is pending is the last
}

// startRecorder starts writing the turn to the log, or returns nil when the log, a
// [TurnReserver], will not keep it: the turn then runs as it would without a log, its start
// event saying it cannot be resumed.
func (e *Engine) startRecorder(t *turn, deadline time.Time) *turnRecorder {
	r := &turnRecorder{e: e, turn: t.turnID, until: deadline, wake: make(chan struct{}, 1),
		ended: make(chan struct{}), owner: e.turnOwner(t.req)}
	if res, ok := e.turnLog.(TurnReserver); ok {
		ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
		err := res.ReserveTurn(ctx, r.turn, &r.owner, deadline.Add(e.resumeFor))
		cancel()
		if err != nil {
			if errors.Is(err, ErrStoreFull) {
				if e.obs.Overload != nil {
					e.obs.Overload(context.Background(), OverloadEvent{Bound: BoundTurnLog, RequestID: t.req.ID, Tenant: r.owner.Tenant})
				}
			} else {
				e.log.Warn("reserving a turn in its log failed; it cannot be resumed", "turnId", r.turn, "tenant", r.owner.Tenant, "err", err)
			}
			return nil
		}
	}
	go r.run()
	return r
}

// add queues one event; it never blocks.
func (r *turnRecorder) add(ev LoggedEvent) {
	r.mu.Lock()
	r.pending = append(r.pending, ev)
	r.mu.Unlock()
	r.signal()
}

func (r *turnRecorder) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// finish writes what is queued, marks the turn over and waits until the log has it, or the
// writing failed.
func (r *turnRecorder) finish() {
	r.mu.Lock()
	r.over = true
	r.mu.Unlock()
	r.signal()
	<-r.ended
}

// take returns up to recordBatch pending events, and whether they are the turn's last.
func (r *turnRecorder) take(batch []LoggedEvent) ([]LoggedEvent, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := min(len(r.pending), recordBatch)
	batch = append(batch[:0], r.pending[:n]...)
	r.pending = r.pending[n:]
	if len(r.pending) == 0 {
		r.pending = nil // lets the backing array go
	}
	return batch, r.over && len(r.pending) == 0
}

func (r *turnRecorder) run() {
	defer close(r.ended)
	owner := &r.owner
	batch := make([]LoggedEvent, 0, recordBatch)
	for {
		<-r.wake
		for {
			var last bool
			batch, last = r.take(batch)
			if len(batch) == 0 && !last {
				break // nothing more yet
			}
			keep := r.until.Add(r.e.resumeFor)
			if last {
				keep = r.e.now().Add(r.e.resumeFor)
			}
			ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
			err := r.e.turnLog.AppendEvents(ctx, r.turn, owner, batch, last, keep)
			cancel()
			if err != nil {
				r.e.log.Warn("keeping a turn's events failed; it cannot be resumed", "turnId", r.turn, "tenant", r.owner.Tenant, "err", err)
				r.drain()
				return
			}
			owner = nil
			if last {
				return
			}
		}
	}
}

// drain drops what the turn adds from now on, until it ends.
func (r *turnRecorder) drain() {
	for {
		r.mu.Lock()
		r.pending = nil
		over := r.over
		r.mu.Unlock()
		if over {
			return
		}
		<-r.wake
	}
}
