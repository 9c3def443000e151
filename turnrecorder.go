package engine

import (
	"context"
	"time"
)

// Bounds of the turn log's writer.
const (
	recordQueue      = 64 // events waiting to be written; a slower store holds the turn back
	recordBatch      = 64
	recordTimeout    = 5 * time.Second
	defaultResumeFor = 5 * time.Minute
)

// turnRecorder writes a turn's events to the TurnLog, in order and in batches, from a
// goroutine of its own, so that the turn does not wait for the store's round trips.
type turnRecorder struct {
	e      *Engine
	turn   string
	owner  TurnOwner
	until  time.Time // the turn's deadline
	queue  chan LoggedEvent
	ended  chan struct{}
	failed bool
}

func (e *Engine) startRecorder(t *turn, deadline time.Time) *turnRecorder {
	r := &turnRecorder{e: e, turn: t.turnID, until: deadline, queue: make(chan LoggedEvent, recordQueue),
		ended: make(chan struct{}),
		owner: TurnOwner{Tenant: t.req.Tenant.Key, User: e.limits.userBucket(t.req.Tenant.Key, t.req.UserToken), Session: t.sessionID}}
	go r.run()
	return r
}

// add queues one event.
func (r *turnRecorder) add(ev LoggedEvent) { r.queue <- ev }

// finish writes what is queued, marks the turn over and waits until the log has it.
func (r *turnRecorder) finish() {
	close(r.queue)
	<-r.ended
}

func (r *turnRecorder) run() {
	defer close(r.ended)
	owner := &r.owner
	batch := make([]LoggedEvent, 0, recordBatch)
	for {
		ev, open := <-r.queue
		if open {
			batch = append(batch[:0], ev)
		drain:
			for len(batch) < recordBatch {
				select {
				case ev, ok := <-r.queue:
					if !ok {
						open = false
						break drain
					}
					batch = append(batch, ev)
				default:
					break drain
				}
			}
		} else {
			batch = batch[:0]
		}
		keep := r.until.Add(r.e.resumeFor)
		if !open {
			keep = r.e.now().Add(r.e.resumeFor)
		}
		ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
		err := r.e.turnLog.AppendEvents(ctx, r.turn, owner, batch, !open, keep)
		cancel()
		if err != nil && !r.failed {
			r.failed = true // once per turn: a store that is down would fill the log
			r.e.log.Warn("keeping a turn's events failed; it cannot be resumed", "turnId", r.turn, "tenant", r.owner.Tenant, "err", err)
		}
		owner = nil
		if !open {
			return
		}
	}
}
