package engine

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The engine key is public and any X-Token is accepted, so whatever a stranger can start is
// bounded: these are the bounds a request can meet besides the rate limits, and their defaults.
const (
	defaultMaxConcurrentTurns             = 1024
	defaultMaxConcurrentSyntheses         = 32
	defaultMaxSynthesesPerUser            = 4
	defaultMaxTranscriptions              = 8
	defaultMaxTranscriptionsPerUser       = 2
	defaultMaxSockets                     = 1024
	defaultMaxSocketsPerUser              = 4
	defaultAudioMemory              int64 = 64 << 20
	defaultHeaderMemory             int64 = 16 << 20
	defaultWriteTimeout                   = 10 * time.Second
)

// Names of the bounds, in [OverloadEvent].
const (
	BoundTurns              = "turns"               // Config.MaxConcurrentTurns
	BoundSyntheses          = "syntheses"           // Config.MaxConcurrentSyntheses
	BoundUserSyntheses      = "user_syntheses"      // Config.MaxSynthesesPerUser
	BoundTranscriptions     = "transcriptions"      // Config.MaxConcurrentTranscriptions
	BoundUserTranscriptions = "user_transcriptions" // Config.MaxTranscriptionsPerUser
	BoundSockets            = "sockets"             // StreamOptions.MaxSockets
	BoundUserSockets        = "user_sockets"        // StreamOptions.MaxSocketsPerUser
	BoundAudioMemory        = "audio_memory"        // StreamOptions.AudioMemory
	BoundResumes            = "resumes"             // turns resumed at once (GET /engine/turns/{id})
	BoundSessions           = "sessions"            // the SessionStore is full (ErrStoreFull): create-session is refused
	BoundTurnLog            = "turn_log"            // the TurnLog is full (ErrStoreFull): a turn runs without being kept
	BoundHeaders            = "header_memory"       // header bytes of connections still sending them (Engine.Listener)
)

// OverloadEvent describes work a bound refused.
type OverloadEvent struct {
	Bound     string // BoundTurns, BoundSyntheses, ...
	RequestID string
	Tenant    string
}

// overloaded reports the refusal to the observer and returns its problem: 503 overloaded, or
// 429 rate_limited for a bound of the user's own, both with Retry-After.
func (e *Engine) overloaded(ctx context.Context, bound string, req *request, detail string) *Problem {
	if e.obs.Overload != nil {
		e.obs.Overload(ctx, OverloadEvent{Bound: bound, RequestID: req.ID, Tenant: req.Tenant.Key})
	}
	status, code, retry := http.StatusServiceUnavailable, CodeOverloaded, 1
	switch bound {
	case BoundUserSockets:
		status, code, retry = http.StatusTooManyRequests, CodeRateLimited, 5
	case BoundSessions: // room comes back as sessions expire or their users replace them
		retry = 60
	case BoundUserSyntheses, BoundUserTranscriptions:
		status, code = http.StatusTooManyRequests, CodeRateLimited
	}
	p := newProblem(status, code, detail)
	p.header = http.Header{"Retry-After": {strconv.Itoa(retry)}}
	return p
}

// slots bounds work that runs at once; a nil channel means no bound.
type slots chan struct{}

// newSlots makes room for n at once: def when n is 0, no bound when it is negative.
func newSlots(n, def int) slots {
	switch {
	case n < 0:
		return nil
	case n == 0:
		n = def
	}
	return make(slots, n)
}

// tryAcquire takes a slot at once, or reports false when none is free: a full process refuses
// new work quickly rather than slowing everything down.
func (s slots) tryAcquire() (release func(), ok bool) {
	if s == nil {
		return func() {}, true
	}
	select {
	case s <- struct{}{}:
		return func() { <-s }, true
	default:
		return nil, false
	}
}

// acquireTurn takes one of the slots of Config.MaxConcurrentTurns.
func (e *Engine) acquireTurn(ctx context.Context, req *request) (release func(), p *Problem) {
	release, ok := e.turnSlots.tryAcquire()
	if !ok {
		return nil, e.overloaded(ctx, BoundTurns, req, "the engine is running as many turns as it can; try again in a moment")
	}
	return release, nil
}

// budget is an amount of memory shared by many holders; a negative limit means no bound.
type budget struct {
	limit int64
	used  atomic.Int64
}

// take reserves n bytes, or reports false when they would pass the limit.
func (b *budget) take(n int64) bool {
	if b.limit < 0 {
		b.used.Add(n)
		return true
	}
	for {
		used := b.used.Load()
		if used+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

func (b *budget) give(n int64) { b.used.Add(-n) }

// perUser counts what each user holds open; a limit below 1 means no bound.
type perUser struct {
	limit int
	mu    sync.Mutex
	held  map[string]int
}

// newPerUser bounds each user to n at once: def when n is 0, no bound when it is negative.
func newPerUser(n, def int) *perUser {
	if n == 0 {
		n = def
	}
	return &perUser{limit: n}
}

// acquireUser takes one of the slots of req's user in u (the user of the keyed bucket of the
// rate limits), or answers 429 rate_limited, reported as bound, when the user holds them all.
// what names a slot in the problem's detail.
func (e *Engine) acquireUser(ctx context.Context, u *perUser, bound string, req *request, what string) (release func(), p *Problem) {
	user := e.limits.userBucket(req.Tenant.Key, req.UserToken)
	if !u.take(user) {
		return nil, e.overloaded(ctx, bound, req, fmt.Sprintf("this user has %d %s at once; try again when one has ended", u.limit, what))
	}
	return func() { u.give(user) }, nil
}

// take counts one more for user, or reports false when the user holds the limit already.
func (u *perUser) take(user string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.limit > 0 && u.held[user] >= u.limit {
		return false
	}
	if u.held == nil {
		u.held = make(map[string]int)
	}
	u.held[user]++
	return true
}

func (u *perUser) give(user string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.held[user] <= 1 {
		delete(u.held, user)
	} else {
		u.held[user]--
	}
}
