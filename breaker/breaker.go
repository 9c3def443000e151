// Package breaker keeps circuit breakers by name for the things a process calls that may go
// down: the models of fallback chains (package fallback) and tenant backends (package
// httptools). A name that fails MaxFailures times in a row is skipped for CoolDown; then one
// call probes it (half-open), and its success closes the breaker again. A name can also be held
// for a time a server asked for (Retry-After) without counting a failure twice.
//
// One [Set] is meant to be shared by everything of a process that calls the same names, so that
// every tenant that uses a model or a backend sees the same state. The breakers themselves are
// github.com/sony/gobreaker's.
package breaker

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sony/gobreaker/v2"
)

// Defaults of [Options].
const (
	DefaultMaxFailures = 5
	DefaultCoolDown    = 30 * time.Second
	// MaxHold bounds how long a server's Retry-After can keep a name out: a hostile or broken
	// server cannot take itself out of a chain for hours.
	MaxHold = 5 * time.Minute
)

// State is a breaker's state.
type State string

// The states of a breaker.
const (
	Closed   State = "closed"    // calls go through
	Open     State = "open"      // calls are refused until the cool-down is over
	HalfOpen State = "half-open" // one call probes the name
)

// Outcome is how a call that [Set.Allow] let through ended.
type Outcome int

// The outcomes of a call.
const (
	// Success closes a half-open breaker and ends a run of failures.
	Success Outcome = iota
	// Failure counts toward MaxFailures, and opens a half-open breaker again.
	Failure
	// Ignore is for a call that ended for a reason that says nothing of the callee, such as
	// its caller going away.
	Ignore
)

// ErrOpen is wrapped by the error of [Set.Allow] for a name that is not called now.
var ErrOpen = errors.New("breaker: open")

// OpenError is the error of [Set.Allow] for a name whose breaker is open, held, or busy
// probing.
type OpenError struct {
	Name string
	// RetryAfter is the time until the name may be called again, at least a second.
	RetryAfter time.Duration
}

// Error names the breaker and the wait.
func (e *OpenError) Error() string {
	return fmt.Sprintf("breaker: %s is open for %s", e.Name, e.RetryAfter.Round(time.Second))
}

// Unwrap returns [ErrOpen].
func (e *OpenError) Unwrap() error { return ErrOpen }

// Options configure a [Set]. A nil *Options means the defaults.
type Options struct {
	// MaxFailures is how many failed calls in a row open a breaker (default 5).
	MaxFailures int
	// CoolDown is how long an open breaker refuses calls before it lets a probe through
	// (default 30 s).
	CoolDown time.Duration
	// OnChange, when set, is called when a breaker changes state. It runs while the breaker is
	// locked, on the goroutine of the call that changed it, and must return quickly without
	// calling the Set.
	OnChange func(name string, from, to State)
}

// Set holds one breaker per name. It is safe for concurrent use. Names are kept for the life
// of the Set: use names from configuration (model names, backend URLs), not from requests.
type Set struct {
	maxFailures uint32
	coolDown    time.Duration
	onChange    func(name string, from, to State)

	mu       sync.Mutex
	breakers map[string]*entry
}

// entry is one name's breaker, the time it opened, and a server's hold.
type entry struct {
	cb     *gobreaker.TwoStepCircuitBreaker[struct{}]
	opened time.Time // guarded by Set.mu
	until  time.Time // held until then (Retry-After); guarded by Set.mu
}

// New returns a Set configured by opts.
func New(opts *Options) *Set {
	s := &Set{maxFailures: DefaultMaxFailures, coolDown: DefaultCoolDown, breakers: map[string]*entry{}}
	if opts != nil {
		if opts.MaxFailures > 0 {
			s.maxFailures = uint32(min(opts.MaxFailures, 1<<20))
		}
		if opts.CoolDown > 0 {
			s.coolDown = opts.CoolDown
		}
		s.onChange = opts.OnChange
	}
	return s
}

func (s *Set) entry(name string) *entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.breakers[name]; ok {
		return e
	}
	e := &entry{}
	e.cb = gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        name,
		MaxRequests: 1, // one probe at a time when half-open
		Timeout:     s.coolDown,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= s.maxFailures },
		OnStateChange: func(name string, from, to gobreaker.State) {
			if to == gobreaker.StateOpen {
				s.mu.Lock()
				e.opened = time.Now()
				s.mu.Unlock()
			}
			if s.onChange != nil {
				s.onChange(name, state(from), state(to))
			}
		},
		IsExcluded: func(err error) bool { return errors.Is(err, errIgnored) },
	})
	s.breakers[name] = e
	return e
}

// errIgnored and errFailed are the outcomes as gobreaker takes them.
var (
	errIgnored = errors.New("ignored")
	errFailed  = errors.New("failed")
)

// Allow reports whether name may be called now. When it may, done must be called exactly
// once with the call's outcome; otherwise the error is an [*OpenError] with the wait.
func (s *Set) Allow(name string) (done func(Outcome), err error) {
	e := s.entry(name)
	if wait := s.held(e); wait > 0 {
		return nil, &OpenError{Name: name, RetryAfter: wait}
	}
	report, err := e.cb.Allow()
	if err != nil {
		return nil, &OpenError{Name: name, RetryAfter: s.openFor(e)}
	}
	return func(o Outcome) {
		switch o {
		case Success:
			report(nil)
		case Failure:
			report(errFailed)
		default:
			report(errIgnored)
		}
	}, nil
}

// Hold keeps name out for d, as a server's Retry-After asks, up to [MaxHold]. The call that
// read it still reports its own outcome.
func (s *Set) Hold(name string, d time.Duration) {
	if d <= 0 {
		return
	}
	e := s.entry(name)
	until := time.Now().Add(min(d, MaxHold))
	s.mu.Lock()
	if until.After(e.until) {
		e.until = until
	}
	s.mu.Unlock()
}

// Ready reports whether a call of name would be let through now, without taking a probe's
// place; when it would not, wait is how long until it may.
func (s *Set) Ready(name string) (wait time.Duration, ok bool) {
	e := s.entry(name)
	if wait := s.held(e); wait > 0 {
		return wait, false
	}
	if e.cb.State() == gobreaker.StateOpen {
		return s.openFor(e), false
	}
	return 0, true
}

// State returns name's breaker's state.
func (s *Set) State(name string) State { return state(s.entry(name).cb.State()) }

// held returns how long e is still held by a Retry-After.
func (s *Set) held(e *entry) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Until(e.until)
}

// openFor is the rest of e's cool-down, at least a second: a half-open breaker busy with its
// probe is asked again a little later.
func (s *Set) openFor(e *entry) time.Duration {
	s.mu.Lock()
	opened := e.opened
	s.mu.Unlock()
	return max(s.coolDown-time.Since(opened), time.Second)
}

func state(s gobreaker.State) State {
	switch s {
	case gobreaker.StateOpen:
		return Open
	case gobreaker.StateHalfOpen:
		return HalfOpen
	}
	return Closed
}
