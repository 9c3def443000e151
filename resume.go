package engine

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/convengine/engine/internal/headers"
	"github.com/convengine/engine/internal/locale"
	"github.com/convengine/engine/internal/sse"
	"github.com/convengine/engine/internal/verbalize"
)

// PathTurns is where a turn of the turn stream is resumed: GET /engine/turns/{turnId}.
const PathTurns = "/engine/turns/"

// Bounds of resumes: the streams that follow turns at once, in the process and per turn, and
// how long one follows a turn that goes on.
const (
	defaultMaxResumes = 256
	maxResumesPerTurn = 8
	resumeBatch       = 256
	resumeWait        = 2 * time.Second
	maxResumeFollow   = 5 * time.Minute
	resumeNotYet      = 250 * time.Millisecond // how long a turn may take to reach its log
)

// ResumeHandler returns the handler of GET /engine/turns/{turnId}: the events of a turn kept
// in the TurnLog after the client's Last-Event-ID, then the turn live until done, for the
// tenant, user and session that ran it (docs/protocol.md).
func (e *Engine) ResumeHandler() http.Handler {
	return e.route(http.MethodGet, PathTurns, http.HandlerFunc(e.serveResume))
}

func (e *Engine) serveResume(w http.ResponseWriter, r *http.Request) {
	req, _, p := e.readAdmitted(r, true, WorkRequest)
	if p == nil && e.shutdown.Draining().Err() != nil {
		p = newProblem(http.StatusServiceUnavailable, CodeShuttingDown, "this server is shutting down; resume the turn again").WithRetryAfter(time.Second)
	}
	if p != nil {
		writeProblem(w, p, req.idOrEmpty())
		return
	}
	id := strings.TrimPrefix(r.URL.Path, PathTurns)
	notFound := newProblem(http.StatusNotFound, CodeNotFound, "no turn of yours has this id, or it is over for too long")
	if e.turnLog == nil || !headers.ValidTurnID(id) {
		writeProblem(w, notFound, req.ID)
		return
	}
	after, bad := sse.LastEventID(r.Header)
	if bad != "" {
		writeProblem(w, invalidField("Last-Event-ID", bad), req.ID)
		return
	}
	// The turn is looked up before a slot is taken: a stranger's resumes of ids that are none
	// of theirs wait for no slot, and hold none that the turns' owners need.
	ctx := r.Context()
	owner := e.turnOwner(req)
	rec, err := e.readOwnTurn(ctx, id, after, owner, 0)
	if errors.Is(err, ErrTurnNotFound) {
		// A turn reaches its log a store round trip after its start event reached the client,
		// which may have resumed already: look once more before saying it is none. Another
		// user's turn takes the same path, so that the answer's delay does not tell which ids
		// exist.
		select {
		case <-time.After(resumeNotYet):
			rec, err = e.readOwnTurn(ctx, id, after, owner, 0)
		case <-ctx.Done():
			return
		}
	}
	var last *TurnRecord
	if err == nil && len(rec.Events) == 0 && after > 0 {
		// Nothing after after: in a turn that is over, after must be its last event; a turn
		// whose last event is its done is over too, though the log may not say so yet. (A
		// running turn's log may be behind what its client read: that one is followed.)
		if last, err = e.turnLog.ReadEvents(ctx, id, after-1, 1, 0); errors.Is(err, ErrTurnNotFound) {
			last, err = &TurnRecord{}, nil
		}
	}
	// The client has the whole turn: after is its done, or past the end the engine made of a
	// lost turn.
	whole := last != nil && len(last.Events) == 1 && last.Events[0].ID == after && (rec.Done || last.Events[0].Name == EventDone)
	if last != nil && !whole && rec.Lost {
		var end []sse.Logged
		if end, err = e.lostEnd(ctx, id, req); err == nil {
			whole = after >= end[len(end)-1].ID
		}
	}
	switch {
	case errors.Is(err, ErrTurnNotFound):
		writeProblem(w, notFound, req.ID)
	case err != nil:
		e.log.ErrorContext(ctx, "reading a turn's events failed", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		writeProblem(w, newProblem(http.StatusServiceUnavailable, CodeStoreUnavailable, "the turn could not be read; try again"), req.ID)
	case whole:
		// 204 is what tells an EventSource, which reconnects whenever a stream ends, to stop.
		w.WriteHeader(http.StatusNoContent)
	case last != nil && rec.Done:
		writeProblem(w, invalidField("Last-Event-ID", "is past the turn's last event"), req.ID)
	case !e.resumesOfTurn.Take(id):
		// Counted once the turn is known to be the caller's: a stranger who knows a turn's id
		// cannot hold its owner's resumes back.
		writeProblem(w, newProblem(http.StatusTooManyRequests, CodeRateLimited, "this turn is being resumed too many times at once").WithRetryAfter(time.Second), req.ID)
	default:
		e.followTurn(ctx, w, req, id, after, owner, rec)
	}
}

// followTurn streams the turn's events after after, from rec on, until done or the time runs
// out, holding one of the turn's resumes and one of the process's.
func (e *Engine) followTurn(ctx context.Context, w http.ResponseWriter, req *request, id string, after int, owner TurnOwner, rec *TurnRecord) {
	defer e.resumesOfTurn.Give(id)
	release, ok := e.resumes.TryAcquire()
	if !ok {
		writeProblem(w, e.overloaded(ctx, BoundResumes, req, "the engine is resuming as many turns as it can; try again in a moment"), req.ID)
		return
	}
	defer release()

	stream := sse.NewWriter(w, e.now, e.writeTimeout, nil)
	defer stream.Close()
	stream.KeepAlive(e.ping)
	// A replica shutting down does not wait for the turns of others: the client resumes them
	// from another.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(e.shutdown.Draining(), stop)()
	f := stream.Follow(after, batchOf(rec), e.now().Add(maxResumeFollow), resumeWait, func(after int, wait time.Duration) (sse.Batch, error) {
		rctx, cancel := context.WithTimeout(ctx, resumeWait+time.Second)
		defer cancel()
		rec, err := e.readOwnTurn(rctx, id, after, owner, wait) // dropped, and written again by someone else: not found
		if err != nil {
			return sse.Batch{}, err
		}
		return batchOf(rec), nil
	})
	switch f.End {
	case sse.EndLost:
		end, err := e.lostEnd(ctx, id, req)
		for _, ev := range end {
			if ev.ID > f.After && stream.Replay(ev.ID, ev.Name, ev.Data) != nil {
				break
			}
		}
		if err != nil {
			e.log.WarnContext(ctx, "ending a lost turn failed", "requestId", req.ID, "tenant", req.Tenant.Key, "turnId", id, "err", err)
		} else {
			e.log.InfoContext(ctx, "a resumed turn was lost with its replica", "requestId", req.ID, "tenant", req.Tenant.Key, "turnId", id)
		}
	case sse.EndDone, sse.EndOver:
		e.log.InfoContext(ctx, "turn resumed", "requestId", req.ID, "tenant", req.Tenant.Key, "turnId", id, "events", f.Sent)
	case sse.EndGap:
		e.log.WarnContext(ctx, "a resumed turn's log has a gap", "requestId", req.ID, "tenant", req.Tenant.Key, "turnId", id, "after", f.After, "next", f.Next)
	case sse.EndRead:
		if ctx.Err() == nil {
			e.log.WarnContext(ctx, "following a turn failed", "requestId", req.ID, "tenant", req.Tenant.Key, "err", f.Err)
		} // the client resumes again from its last event
	}
}

// readOwnTurn reads the turn's first events after after, waiting up to wait for one, or returns
// ErrTurnNotFound when it is not owner's.
func (e *Engine) readOwnTurn(ctx context.Context, id string, after int, owner TurnOwner, wait time.Duration) (*TurnRecord, error) {
	rec, err := e.turnLog.ReadEvents(ctx, id, after, resumeBatch, wait)
	if err == nil && rec.Owner != owner {
		return nil, ErrTurnNotFound
	}
	return rec, err
}

// lostEnd reads the whole of turn id, which its replica did not finish (TurnRecord.Lost), and
// returns the end the engine makes of it: turn_lost, retryable, the apology in the tenant's
// language, done.
func (e *Engine) lostEnd(ctx context.Context, id string, req *request) ([]sse.Logged, error) {
	var evs []sse.Logged
	for after := 0; ; {
		rec, err := e.turnLog.ReadEvents(ctx, id, after, resumeBatch, 0)
		if err != nil {
			return nil, err
		}
		for _, ev := range rec.Events {
			evs = append(evs, sse.Logged(ev))
		}
		if len(rec.Events) < resumeBatch {
			break
		}
		after = rec.Events[len(rec.Events)-1].ID
	}
	loc := req.Tenant.Locale
	return sse.LostEnd(evs, CodeTurnLost, "The server running this turn stopped; ask again.",
		func(said string) string { return verbalize.ApologyAfter(said, locale.Apology(loc)) }, loc, Direction(loc))
}

// batchOf is rec as the stream replays it.
func batchOf(rec *TurnRecord) sse.Batch {
	b := sse.Batch{Events: make([]sse.Logged, len(rec.Events)), Done: rec.Done, Lost: rec.Lost}
	for i, ev := range rec.Events {
		b.Events[i] = sse.Logged(ev)
	}
	return b
}
