package engine

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/convengine/engine/internal/bound"
)

// Admission decides whether a caller may start a piece of work now, and what the work holds
// while it runs. Every transport admits its work here, once, before doing anything for it: the
// turn stream, in-process turns, the voice socket (its opening and each utterance), AG-UI runs,
// sessions, syntheses, transcriptions, and a host's own transports (a phone line) through
// [Engine.Admit]. The stages run in this order, from what can be given back to what cannot:
//
//  1. Slots, taken for as long as the work runs and given back when a later stage refuses:
//     a turn's place among Config.MaxConcurrentTurns (503 overloaded); a synthesis's or a
//     transcription's place among the user's (429 rate_limited) and the process's (503
//     overloaded); a transport's [Hold] (the process's, the tenant's, the user's: a socket, a
//     call). Retry-After is 1 second, 5 for a user's hold.
//  2. The work's claim, when it has one: a stream ticket's single use, spent only once a slot is
//     held, so that a refusal that says to try again leaves the ticket usable, and a replayed
//     ticket costs its user nothing.
//  3. Rate limits: the tenant's and the user's buckets (Limits.TenantPerMinute,
//     UserPerMinute), both or neither. 429 rate_limited, with Retry-After in whole seconds. A transcription and a synthesis
//     within a turn count none: their turn did.
//  4. The budget: what the work may spend reserved from the tenant's [Budget] (429
//     quota_exceeded with Retry-After; 503 store_unavailable when it cannot answer), settled
//     to what it spent. A turn reserves its place among the user's turns when it starts, and
//     each of its model calls its prompt and output bound just before it runs (budget.go). A
//     new session, once its input is checked, is taken from its user's bucket of sessions
//     when the tenant sets no limit per user (429 rate_limited).
//
// A refusal is reported to the Observer (RateLimit, Overload) and answered with its problem:
// the HTTP handlers write it, in-process calls return it, the voice socket sends it as an
// error message with its code.

// WorkKind is what an admission is for.
type WorkKind uint8

// Kinds of work.
const (
	// WorkRequest is a request that holds nothing: the rate limits.
	WorkRequest WorkKind = iota
	// WorkTurn is a turn: a turn slot, the rate limits. Its budget is reserved as it runs.
	WorkTurn
	// WorkRelay is a turn relayed to a person during a handoff: the rate limits, and neither a
	// turn slot nor the model's budget, since no model runs.
	WorkRelay
	// WorkSession is a new session: the rate limits and, once its input is checked, the
	// user's bucket of sessions when the tenant sets no limit per user.
	WorkSession
	// WorkConnection is a socket or a call a transport keeps open: its Hold, the rate limits.
	WorkConnection
	// WorkSynthesis is speech synthesized for the tts endpoint or [Engine.Synthesize]: the
	// user's and the process's synthesis slots, the rate limits, the speech seconds of the
	// text from the budget.
	WorkSynthesis
	// WorkTranscription is a turn's audio transcribed: the user's and the process's
	// transcription slots, and its seconds, one turn and one token from the budget (a tenant
	// out of tokens or a user out of turns has no audio transcribed for a turn that would be
	// refused).
	WorkTranscription
	// WorkListening is an utterance heard by a recogniser's stream ([StreamingTranscriber])
	// while it is spoken: its Hold, and no rate limit, since its turn counts one.
	WorkListening
)

// Work is what [Engine.Admit] admits.
type Work struct {
	Kind WorkKind
	// Hold is a transport's bound on what it keeps open, for WorkConnection and WorkListening.
	Hold *Hold
	// Claim, when not nil, runs once the slots are held and before the rate limits: an error
	// refuses the work, and the slots are given back. A stream ticket's single use.
	Claim func(context.Context) error
	// Unverified names a caller who has no user token yet, for WorkConnection and WorkRequest:
	// a phone caller before the bank names the user, by the calling number. The user's bounds
	// and buckets then apply to that name; such an admission admits no turn.
	Unverified string
	// spend is what a transcription may spend of the budget.
	spend Spend
}

// A Hold bounds what a transport keeps open, such as sockets or calls: at most Max at once in
// the process, PerTenant for one tenant and PerUser for one user (0 or less: no bound). Its
// refusals are reported to the Observer's Overload hook under Name, "tenant_"+Name and
// "user_"+Name. It is safe for concurrent use.
type Hold struct {
	Name string
	what string // what is held, in the problems' detail
	// userRetry is the Retry-After of a user's refusal: a connection (5 s) is held longer
	// than a synthesis or a transcription (1 s).
	userRetry int
	b         bound.Hold
}

// NewHold returns a Hold named name (BoundSockets, "calls" ...) of at most max at once (no
// bound when max < 1), perTenant for a tenant and perUser for a user; what names one in the
// problems' detail ("voice sockets", "calls").
func NewHold(name, what string, max, perTenant, perUser int) *Hold {
	var process bound.Slots // nil: no bound
	if max > 0 {
		process = bound.NewSlots(max, max)
	}
	return newHold(name, what, 5, process, perTenant, perUser)
}

func newHold(name, what string, userRetry int, process bound.Slots, perTenant, perUser int) *Hold {
	return &Hold{Name: name, what: what, userRetry: userRetry,
		b: bound.Hold{Process: process, PerTenant: bound.NewPerUser(perTenant, -1), PerUser: bound.NewPerUser(perUser, -1)}}
}

// Admit admits work w of c through the engine's admission (admission.go's stages, in order)
// for a transport that must refuse work before it does anything for it: a voice socket before
// it opens (WorkConnection) and before it answers an utterance (WorkTurn), a phone call, a
// message relayed to a person. The error is a *[Problem]: rate_limited, overloaded,
// quota_exceeded, or what the caller's check found. The admission's Release gives back what it
// holds once the work is over; an admission of WorkTurn is given to [Engine.Turn] in
// [TurnInput].Admission, and the turn then counts and takes nothing more.
func (e *Engine) Admit(ctx context.Context, c *Caller, w Work) (*Admission, error) {
	unverified := w.Unverified != "" && c != nil && c.UserToken == ""
	if unverified {
		if w.Kind != WorkConnection && w.Kind != WorkRequest {
			return nil, newProblem(http.StatusBadRequest, CodeInvalidRequest, "only a connection or a request is admitted for a caller not yet verified")
		}
		named := *c
		named.UserToken = "\x00unverified\x00" + w.Unverified // no header can carry a NUL
		c = &named
	}
	req, a, p := e.callerAdmitted(ctx, c, w.Kind != WorkSession, w)
	if p != nil {
		return nil, p.withID(req)
	}
	req.unverified = unverified
	return a, nil
}

// Admission is what an admitted piece of work holds: its slots, until Release. An admission of
// a turn, given to [Engine.Turn] in [TurnInput].Admission, admits that one turn.
type Admission struct {
	e       *Engine
	req     *request // the caller, checked once for the work
	kind    WorkKind
	once    sync.Once
	release func()
	budget  Reservation // what the work reserved of the budget, settled by settle
	used    atomic.Bool // a turn took it, or it was released
}

// Release gives the admission's slots back; it may be called more than once. A released
// admission admits no turn.
func (a *Admission) Release() {
	if a != nil {
		a.used.Store(true)
		a.once.Do(a.release)
	}
}

// reserve is the fourth stage, for work that knows what it may spend only once admitted (a
// synthesis, once its text is checked): s reserved from the budget, settled by settle.
func (a *Admission) reserve(ctx context.Context, s Spend) *Problem {
	var p *Problem
	a.budget, p = a.e.reserve(ctx, a.req.ID, s)
	return p
}

// takeSession is the last stage of a new session, once its input is checked (a request refused
// for its body costs nothing from it): when the tenant sets no limit per user, the session is
// taken from its user's bucket of sessions. Each session costs the store's memory for its
// lifetime, and this bucket keeps one user (one X-Token) from creating thousands a second.
func (a *Admission) takeSession(ctx context.Context) *Problem {
	req := a.req
	if a.kind != WorkSession || req.Tenant.Limits.UserPerMinute > 0 {
		return nil
	}
	// A bucket apart from the user's turns, named as a user's bucket is.
	return a.e.takeFromBuckets(ctx, req, []RateLimit{{Tenant: req.Tenant.Key, User: a.e.limits.userBucket(req.Tenant.Key+"\x00sessions", req.UserToken),
		PerMinute: defaultSessionsPerMinute, Burst: defaultSessionBurst}})
}

// settle settles the admission's reservation to spent.
func (a *Admission) settle(ctx context.Context, spent Spend) { a.e.settle(ctx, a.budget, spent) }

// admit runs the stages of admission for req's work w, in order, and returns what it holds;
// on a refusal nothing stays held.
func (e *Engine) admit(ctx context.Context, req *request, w Work) (*Admission, *Problem) {
	if req.user == "" && (w.Kind == WorkConnection || w.Kind == WorkListening || w.Kind == WorkSynthesis || w.Kind == WorkTranscription || req.Tenant.Limits.UserPerMinute > 0) {
		req.user = e.limits.userBucket(req.Tenant.Key, req.UserToken) // the user's slots and bucket
	}
	if e.shutdown.Draining().Err() != nil && (w.Kind == WorkTurn || w.Kind == WorkSession || w.Kind == WorkConnection) {
		// Readiness failed first (Engine.Shutdown): a client that still reaches this replica
		// tries again, and the balancer sends it to another.
		return nil, newProblem(http.StatusServiceUnavailable, CodeShuttingDown, "this server is shutting down; try again").WithRetryAfter(time.Second)
	}
	a := &Admission{e: e, req: req, kind: w.Kind, release: func() {}}
	p := e.takeSlots(ctx, req, w, a)
	if p == nil && w.Claim != nil {
		if err := w.Claim(ctx); err != nil {
			p = problemOf(err)
		}
	}
	if p == nil {
		if p = e.rateLimit(ctx, req, w.Kind); p != nil && w.Claim != nil {
			p.Detail += " (with a new ticket: this one is spent)"
		}
	}
	if p == nil && w.Kind == WorkTranscription {
		p = a.reserve(ctx, w.spend)
	}
	if p != nil {
		a.release()
		return nil, p
	}
	return a, nil
}

// takeSlots is the first stage: the slots of w, all or none, with a.release giving them back.
func (e *Engine) takeSlots(ctx context.Context, req *request, w Work, a *Admission) *Problem {
	h := w.Hold
	switch w.Kind {
	case WorkTurn:
		release, ok := e.turnSlots.TryAcquire()
		if !ok {
			return e.overloaded(ctx, BoundTurns, req, "the engine is running as many turns as it can; try again in a moment")
		}
		a.release = release
		return nil
	case WorkSynthesis:
		h = e.syntheses
	case WorkTranscription:
		h = e.transcriptions
	case WorkConnection, WorkListening:
		if h == nil {
			return newProblem(http.StatusInternalServerError, CodeInternal, "the connection's admission names no hold")
		}
	default:
		return nil
	}
	release, refused := h.b.Take(req.Tenant.Key, req.user)
	switch refused {
	case bound.HeldProcess:
		return e.refuse(ctx, h.Name, req, fmt.Sprintf("the engine has as many %s as it can at once; try again in a moment", h.what), 1)
	case bound.HeldTenant:
		return e.refuse(ctx, "tenant_"+h.Name, req, fmt.Sprintf("this assistant has as many %s as it may at once; try again in a moment", h.what), 1)
	case bound.HeldUser:
		return e.refuse(ctx, "user_"+h.Name, req, fmt.Sprintf("this user has %d %s at once; try again when one has ended", h.b.PerUser.Limit, h.what), h.userRetry)
	}
	a.release = release
	return nil
}

// overloaded reports the refusal to the observer and returns its problem: 503 overloaded, or
// 429 rate_limited for a bound of the user's own, both with Retry-After (5 s for a user's
// sockets, which are held longer).
func (e *Engine) overloaded(ctx context.Context, bound string, req *request, detail string) *Problem {
	retry := 1
	switch bound {
	case BoundUserSockets:
		retry = 5
	case BoundSessions: // room comes back as sessions expire or their users replace them
		retry = 60
	}
	return e.refuse(ctx, bound, req, detail, retry)
}

// refuse reports the refusal of bound to the observer and returns its problem with Retry-After
// retry: 429 rate_limited for a bound of the user's own (named user_…), 503 overloaded else.
func (e *Engine) refuse(ctx context.Context, bound string, req *request, detail string, retry int) *Problem {
	if e.obs.Overload != nil {
		e.obs.Overload(ctx, OverloadEvent{Bound: bound, RequestID: req.ID, Tenant: req.Tenant.Key})
	}
	status, code := http.StatusServiceUnavailable, CodeOverloaded
	if strings.HasPrefix(bound, "user_") {
		status, code = http.StatusTooManyRequests, CodeRateLimited
	}
	return newProblem(status, code, detail).WithRetryAfter(time.Duration(retry) * time.Second)
}

// WithRetryAfter sets p's Retry-After header to d in whole seconds, at least 1, and returns p.
func (p *Problem) WithRetryAfter(d time.Duration) *Problem {
	p.header = http.Header{"Retry-After": {strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))}}
	return p
}

// rateLimit is the third stage: the limits of the request's tenant and user for work of kind,
// taken from every bucket or from none, answered 429 with Retry-After in whole seconds when the
// request is one too many. When the shared limiter fails, the request is checked against this
// process's own buckets: rate limits protect capacity, and an outage of their store should not
// stop every request.
func (e *Engine) rateLimit(ctx context.Context, req *request, kind WorkKind) *Problem {
	if kind == WorkTranscription || kind == WorkListening {
		return nil
	}
	l := req.Tenant.Limits
	var buf [2]RateLimit
	limits := buf[:0]
	if l.UserPerMinute > 0 {
		limits = append(limits, RateLimit{Tenant: req.Tenant.Key, User: req.user,
			PerMinute: l.UserPerMinute, Burst: bound.Burst(l.UserPerMinute, l.UserBurst)})
	}
	if l.TenantPerMinute > 0 {
		limits = append(limits, RateLimit{Tenant: req.Tenant.Key, PerMinute: l.TenantPerMinute,
			Burst: bound.Burst(l.TenantPerMinute, l.TenantBurst)})
	}
	return e.takeFromBuckets(ctx, req, limits)
}

// takeFromBuckets takes a request from every bucket of limits, or answers 429.
func (e *Engine) takeFromBuckets(ctx context.Context, req *request, limits []RateLimit) *Problem {
	if len(limits) == 0 {
		return nil
	}
	ok, wait, unavailable := e.limits.allow(ctx, e, req, limits)
	if (unavailable || !ok) && e.obs.RateLimit != nil {
		e.obs.RateLimit(ctx, RateLimitEvent{RequestID: req.ID, Tenant: req.Tenant.Key,
			Environment: req.Environment.Name, Limited: !ok, Unavailable: unavailable, RetryAfter: wait})
	}
	if ok {
		return nil
	}
	secs := int(math.Ceil(wait.Seconds()))
	return newProblem(http.StatusTooManyRequests, CodeRateLimited, fmt.Sprintf("too many requests; try again in %d seconds", secs)).
		WithRetryAfter(time.Duration(secs) * time.Second)
}

// UserKey names c's user of its tenant for a transport's own bounds per user: the same for every
// request of the user, on every replica, and never the user's token (a keyed hash of it).
func (e *Engine) UserKey(c *Caller) string {
	return e.limits.userBucket(c.EngineKey, Secret(c.UserToken))
}

// Overloaded reports that bound (one of the Bound names) refused work of c to the Observer's
// Overload hook, and returns the problem its client gets: 503 overloaded, or 429 rate_limited
// for a bound of the user's own, with Retry-After, as the admission's own refusals are.
func (e *Engine) Overloaded(ctx context.Context, c *Caller, bound, detail string) *Problem {
	req := &request{ID: c.RequestID, Tenant: &Tenant{Key: c.EngineKey}}
	p := e.overloaded(ctx, bound, req, detail)
	p.RequestID = c.RequestID
	return p
}

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
