package fallback

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/breaker"
	"github.com/convengine/engine/internal/failover"
)

// Defaults of [Named].
const (
	DefaultFirstTokenTimeout = 15 * time.Second
	DefaultStallTimeout      = 20 * time.Second
)

// Named is a model of a chain.
type Named struct {
	// Name names the model in breakers, events and errors (required). Chains that share a
	// [breaker.Set] share the breaker of a name.
	Name  string
	Model engine.Model
	// FirstTokenTimeout bounds the wait for the first piece of the model's answer (a chunk of
	// its stream); past it the chain tries its next model (default 15 s).
	FirstTokenTimeout time.Duration
	// StallTimeout bounds the silence between two pieces of an answer once it started; past
	// it the chain tries its next model if nothing reached the user yet, and the turn fails
	// otherwise (default 20 s).
	StallTimeout time.Duration
	// Degraded marks a last resort whose answers are poorer, such as the offline intent model:
	// the Observer learns of each completion it answers (state "degraded").
	Degraded bool
}

// Options configure a [Chain]. A nil *Options means the defaults.
type Options struct {
	// Breakers holds the breakers of the chain's models, by name. Share one Set between every
	// chain of a process, so that every tenant using a model sees its state. nil: the chain
	// has a Set of its own, with breaker's defaults.
	Breakers *breaker.Set
	// Observer, when its Breaker hook is set, is told of completions that a Degraded model
	// answered. The breakers' own changes are reported by the Set (breaker.Options.OnChange).
	Observer *engine.Observer
}

// ErrOptions is wrapped by the errors of [New] for a chain that cannot work.
var ErrOptions = errors.New("fallback: invalid chain")

// Chain is an [engine.Model] that tries its models in order. It is safe for concurrent use.
type Chain struct {
	models   []Named
	breakers *breaker.Set
	obs      *engine.Observer
}

var (
	_ engine.Model  = (*Chain)(nil)
	_ engine.Warmer = (*Chain)(nil)
)

// New returns a chain of models, tried in the order given. opts may be nil.
func New(opts *Options, models ...Named) (*Chain, error) {
	if opts == nil {
		opts = &Options{}
	}
	if len(models) == 0 {
		return nil, fmt.Errorf("%w: no model", ErrOptions)
	}
	c := &Chain{models: make([]Named, len(models)), breakers: opts.Breakers, obs: opts.Observer}
	seen := map[string]bool{}
	for i, m := range models {
		switch {
		case m.Name == "":
			return nil, fmt.Errorf("%w: model %d has no name", ErrOptions, i)
		case m.Model == nil:
			return nil, fmt.Errorf("%w: %s: no model", ErrOptions, m.Name)
		case seen[m.Name]:
			return nil, fmt.Errorf("%w: %s is named twice", ErrOptions, m.Name)
		case m.FirstTokenTimeout < 0 || m.StallTimeout < 0:
			return nil, fmt.Errorf("%w: %s: negative timeout", ErrOptions, m.Name)
		}
		seen[m.Name] = true
		if m.FirstTokenTimeout == 0 {
			m.FirstTokenTimeout = DefaultFirstTokenTimeout
		}
		if m.StallTimeout == 0 {
			m.StallTimeout = DefaultStallTimeout
		}
		c.models[i] = m
	}
	if c.breakers == nil {
		c.breakers = breaker.New(nil)
	}
	return c, nil
}

// Models returns the names of the chain's models, in order.
func (c *Chain) Models() []string {
	names := make([]string, len(c.models))
	for i, m := range c.models {
		names[i] = m.Name
	}
	return names
}

// Available reports whether a model of the chain would be tried now; when none would, wait
// is the shortest time until one may.
func (c *Chain) Available() (wait time.Duration, ok bool) {
	for i, m := range c.models {
		w, ok := c.breakers.Ready(m.Name)
		if ok {
			return 0, true
		}
		if i == 0 || w < wait {
			wait = w
		}
	}
	return wait, false
}

// Stream implements [engine.Model]: the completion of the first model that answers. A model
// is skipped while its breaker is open or its server's Retry-After lasts, and abandoned for the
// next on a failure another model may not share (a connection error, a 5xx or 429 answer, a
// time-out, a first piece of the answer that does not come within FirstTokenTimeout, a stall
// longer than StallTimeout), as long as none of its events was yielded. Once one was, a
// failure is yielded as the sequence's last value, as the model gave it. When no model could
// answer, the error wraps [engine.ErrModelUnavailable] and is an [*UnavailableError].
//
// The finish event names the model that answered (its server's name for it, else the chain's)
// and counts in Retries the attempts that failed before it, the models' own and the chain's.
func (c *Chain) Stream(ctx context.Context, req *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	return func(yield func(engine.ModelEvent, error) bool) {
		var u *UnavailableError // made once a model did not answer
		failed := 0
		for i := range c.models {
			m := &c.models[i]
			done, err := c.breakers.Allow(m.Name)
			if err != nil {
				u = u.add(m.Name, err, breakerWait(err))
				continue
			}
			r := c.try(ctx, m, req, failed, yield)
			done(r.outcome)
			switch {
			case r.end:
				if r.err != nil {
					yield(engine.ModelEvent{}, r.err)
				}
				return
			case r.wait > 0:
				c.breakers.Hold(m.Name, r.wait)
			}
			u = u.add(m.Name, r.err, r.wait)
			failed++
		}
		yield(engine.ModelEvent{}, u)
	}
}

// result is how one model's try ended.
type result struct {
	end     bool // the sequence ends here: answered, or failed for good with err
	err     error
	outcome breaker.Outcome
	wait    time.Duration // the server's Retry-After
}

// Reasons a chain gives up on a model by itself.
var (
	// ErrNoFirstToken: the model's answer did not start within FirstTokenTimeout.
	ErrNoFirstToken = errors.New("fallback: the model did not start answering in time")
	// ErrStalled: the model's answer stopped for longer than StallTimeout.
	ErrStalled = errors.New("fallback: the model's answer stalled")
)

// try runs one model. prior counts the attempts that failed before it.
func (c *Chain) try(ctx context.Context, m *Named, req *engine.ModelRequest, prior int, yield func(engine.ModelEvent, error) bool) result {
	tctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := newWatch(m, cancel)
	defer w.stop()
	tctx = failover.With(tctx, w.beat)

	var (
		yielded, stopped bool
		failure          error
	)
	for ev, err := range m.Model.Stream(tctx, req) {
		if err != nil {
			failure = err
			break
		}
		if ev.Kind == engine.EventFinish {
			ev.Retries += prior
			if ev.Model == "" {
				ev.Model = m.Name
			}
			if m.Degraded && c.obs != nil && c.obs.Breaker != nil && req.Tenant != nil {
				c.obs.Breaker(ctx, engine.BreakerEvent{Name: m.Name, State: "degraded", Tenant: req.Tenant.Key})
			}
		}
		yielded = true
		w.hold()
		if !yield(ev, nil) {
			stopped = true
			break
		}
		w.release()
	}
	if cause := context.Cause(tctx); failure != nil && ctx.Err() == nil && (cause == ErrNoFirstToken || cause == ErrStalled) {
		failure = fmt.Errorf("%s: %w", m.Name, cause)
	}
	switch {
	case stopped:
		return result{end: true, outcome: breaker.Ignore}
	case failure == nil:
		return result{end: true, outcome: breaker.Success}
	case ctx.Err() != nil:
		// The turn ended (its client went away, its deadline passed): nobody's failure.
		return result{end: true, err: failure, outcome: breaker.Ignore}
	case !temporary(failure):
		// The request's own fault (a 400, a prompt too long) or a broken answer: another model
		// is not asked, and the model is not blamed.
		return result{end: true, err: failure, outcome: breaker.Ignore}
	case yielded:
		return result{end: true, err: failure, outcome: breaker.Failure}
	}
	return result{err: failure, outcome: breaker.Failure, wait: retryAfter(failure)}
}

// temporary reports whether another model may answer what err kept this one from answering: a
// failure the model says is temporary, a time-out of the chain's, a broken connection.
func temporary(err error) bool {
	if errors.Is(err, ErrNoFirstToken) || errors.Is(err, ErrStalled) {
		return true
	}
	var t interface{ Temporary() bool }
	if errors.As(err, &t) {
		return t.Temporary()
	}
	var (
		ue *url.Error
		ne net.Error
	)
	return errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF)
}

// retryAfter is the wait a server asked for in err, 0 for none.
func retryAfter(err error) time.Duration {
	var r interface{ RetryAfter() time.Duration }
	if errors.As(err, &r) {
		return r.RetryAfter()
	}
	return 0
}

func breakerWait(err error) time.Duration {
	var o *breaker.OpenError
	if errors.As(err, &o) {
		return o.RetryAfter
	}
	return 0
}

// watch cancels a try whose answer does not start, or stops, in time. A piece of the answer
// only counts: the timer, which wakes four times in a stall time-out once the answer started,
// looks whether the count moved, so that a chunk costs an atomic add rather than a clock read
// or a timer's reset. The count is odd while the chain's caller has the latest piece: a slow
// client is no stall of the model's.
type watch struct {
	timer  *time.Timer
	tick   time.Duration // a quarter of the stall time-out
	cancel context.CancelCauseFunc
	count  atomic.Int64

	mu    sync.Mutex // fire's
	seen  int64      // the count at the last wake
	quiet int        // wakes in a row without a piece
}

const ticksPerStall = 4

func newWatch(m *Named, cancel context.CancelCauseFunc) *watch {
	w := &watch{tick: max(m.StallTimeout/ticksPerStall, time.Millisecond), cancel: cancel}
	w.timer = time.AfterFunc(m.FirstTokenTimeout, w.fire)
	return w
}

// beat is called by the model for each piece of the answer it reads.
func (w *watch) beat() { w.add(2) }

// hold is called when the chain hands a piece to its caller, release when the caller is done.
func (w *watch) hold()    { w.add(1) }
func (w *watch) release() { w.add(1) }

func (w *watch) add(n int64) {
	if w.count.Add(n) == n {
		w.timer.Reset(w.tick) // the first piece: the stall watch starts
	}
}

func (w *watch) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.count.Load()
	switch {
	case n == 0:
		w.cancel(ErrNoFirstToken)
		return
	case n != w.seen || n%2 == 1:
		w.seen, w.quiet = n, 0
	default:
		w.quiet++
	}
	if w.quiet >= ticksPerStall {
		w.cancel(ErrStalled)
		return
	}
	w.timer.Reset(w.tick)
}

func (w *watch) stop() { w.timer.Stop() }

// Warm warms the first model of the chain that would be tried now, when it is a
// [engine.Warmer].
func (c *Chain) Warm(ctx context.Context, req *engine.ModelRequest) (engine.ModelEvent, error) {
	for _, m := range c.models {
		if _, ok := c.breakers.Ready(m.Name); !ok {
			continue
		}
		if w, ok := m.Model.(engine.Warmer); ok {
			return w.Warm(ctx, req)
		}
		return engine.ModelEvent{}, nil
	}
	return engine.ModelEvent{}, nil
}
