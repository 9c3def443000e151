package intent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/convengine/engine"
)

// Options configure a [Model]. The zero value, or nil, is the defaults.
type Options struct {
	// Now returns the current time, against which dates such as "yesterday" and "monday" are
	// resolved. Nil means time.Now.
	Now func() time.Time
}

// Model is the offline, rule-based [engine.Model]. It answers from each tenant's
// Intents configuration (see the package documentation): it classifies the last user
// message, calls the intent's data tools, then speaks the intent's copy with the results and
// calls the UI tools for its widgets, follow-up line and suggestions.
//
// A Model is safe for concurrent use. It keeps no state between calls to Stream apart from
// the compiled configuration of each tenant, which it compiles on first use and keeps for as
// long as the *engine.Tenant is reachable; tenants must not be modified once used.
type Model struct {
	now   func() time.Time
	cache sync.Map // weak.Pointer[engine.Tenant] → *compiled
}

// compiled is the configuration of one tenant, compiled once.
type compiled struct {
	once sync.Once
	cfg  *Config
	err  error
}

var (
	_ engine.Model  = (*Model)(nil)
	_ engine.Warmer = (*Model)(nil)
)

// New returns a Model. opts may be nil.
func New(opts *Options) *Model {
	m := &Model{now: time.Now}
	if opts != nil && opts.Now != nil {
		m.now = opts.Now
	}
	return m
}

// Stream produces one completion for req: either the calls of the data tools the matched
// intent needs, ending with [engine.FinishToolCalls], or the answer (text deltas, then any
// action and UI tool calls) ending with [engine.FinishStop]. Once the messages show that the
// turn was answered, it yields only the finish event.
//
// It yields an error when req has no tenant or the tenant's configuration is missing or
// invalid, and ctx.Err() as soon as ctx is done. It starts no goroutines.
func (m *Model) Stream(ctx context.Context, req *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	return func(yield func(engine.ModelEvent, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(engine.ModelEvent{}, err)
			return
		}
		var cfg *Config
		var err error
		if req == nil {
			err = errors.New("intent: nil request")
		} else {
			cfg, err = m.config(req.Tenant)
		}
		if err != nil {
			yield(engine.ModelEvent{}, err)
			return
		}
		for _, ev := range cfg.answer(req, m.now()) {
			if err := ctx.Err(); err != nil {
				yield(engine.ModelEvent{}, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// Warm compiles the configuration of req.Tenant ahead of its first turn. It calls no model, so
// it returns the zero event: a warm-up that cost nothing.
func (m *Model) Warm(_ context.Context, req *engine.ModelRequest) (engine.ModelEvent, error) {
	if req == nil {
		return engine.ModelEvent{}, errors.New("intent: nil request")
	}
	_, err := m.config(req.Tenant)
	return engine.ModelEvent{}, err
}

// Check validates t's configuration at load time: it must compile, give copy for the tenant's
// own locale in every intent, and only use action tools on the tenant's action allow-list. The
// configuration is then cached for Stream. Errors wrap [ErrNoConfig] or [ErrInvalidConfig];
// they do not name the tenant, which the caller knows.
func (m *Model) Check(t *engine.Tenant) error {
	cfg, err := m.config(t)
	if err != nil {
		return err
	}
	def := t.Locale
	if def == "" {
		def = "en"
	}
	var p problems
	for i, in := range cfg.intents {
		path := fmt.Sprintf("intents[%d]", i)
		if _, ok := in.responses.lookup(def, def); !ok {
			p.addf(path+".responses", "has no copy for the tenant's locale %q", def)
		}
		if in.action != nil && !t.IsAction(in.action.name) {
			p.addf(path+".action.name", "%q is not in the tenant's actions", in.action.name)
		}
	}
	return p.err()
}

// config returns the compiled configuration of t, compiling it on first use. Entries are
// keyed by a weak pointer and dropped when the tenant is collected, so that a store that
// reloads its tenants does not grow the cache forever.
func (m *Model) config(t *engine.Tenant) (*Config, error) {
	if t == nil {
		return nil, errors.New("intent: request has no tenant")
	}
	key := weak.Make(t)
	v, ok := m.cache.Load(key)
	if !ok {
		var loaded bool
		v, loaded = m.cache.LoadOrStore(key, &compiled{})
		if !loaded {
			runtime.AddCleanup(t, func(k weak.Pointer[engine.Tenant]) { m.cache.Delete(k) }, key)
		}
	}
	c := v.(*compiled)
	c.once.Do(func() {
		if len(t.Intents) == 0 {
			c.err = ErrNoConfig
			return
		}
		c.cfg, c.err = Compile(t.Intents)
	})
	return c.cfg, c.err
}
