package engine

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/convengine/engine/internal/bound"
)

// The engine key is public and any X-Token is accepted, so whatever a stranger can start is
// bounded: these are the bounds a request can meet besides the rate limits, and their defaults.
const (
	defaultMaxConcurrentTurns             = 1024
	defaultMaxConcurrentSyntheses         = 32
	defaultMaxSynthesesPerUser            = 4
	defaultMaxTranscriptions              = 8
	defaultMaxTranscriptionsPerUser       = 2
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
	BoundSockets            = "sockets"             // voice.Options.MaxSockets
	BoundUserSockets        = "user_sockets"        // voice.Options.MaxSocketsPerUser
	BoundAudioMemory        = "audio_memory"        // voice.Options.AudioMemory
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

// acquireTurn takes one of the slots of Config.MaxConcurrentTurns.
func (e *Engine) acquireTurn(ctx context.Context, req *request) (release func(), p *Problem) {
	release, ok := e.turnSlots.TryAcquire()
	if !ok {
		return nil, e.overloaded(ctx, BoundTurns, req, "the engine is running as many turns as it can; try again in a moment")
	}
	return release, nil
}

// acquireUser takes one of the slots of req's user in u (the user of the keyed bucket of the
// rate limits), or answers 429 rate_limited, reported as name, when the user holds them all.
// what names a slot in the problem's detail.
func (e *Engine) acquireUser(ctx context.Context, u *bound.PerUser, name string, req *request, what string) (release func(), p *Problem) {
	user := e.limits.userBucket(req.Tenant.Key, req.UserToken)
	if !u.Take(user) {
		return nil, e.overloaded(ctx, name, req, fmt.Sprintf("this user has %d %s at once; try again when one has ended", u.Limit, what))
	}
	return func() { u.Give(user) }, nil
}
