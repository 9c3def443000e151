package httptools

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"time"
	"weak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/breaker"
)

// DefaultMaxResponseBytes bounds a backend's answer when [Options] set no bound.
const DefaultMaxResponseBytes = 1 << 20

// Options configure a [Toolset]. The zero value, like a nil *Options, means the defaults.
type Options struct {
	// Client sends the requests. Default: a client of the Toolset's own, which keeps
	// connections alive (up to 64 idle ones per backend), uses no proxy and follows no
	// redirects, so that the user's token never reaches another host. A client given here
	// should not follow redirects either: Go's clients carry custom headers such as X-Token
	// to wherever a backend redirects them.
	Client *http.Client
	// MaxResponseBytes bounds the body of an answer (default DefaultMaxResponseBytes); a
	// larger one is an error wrapping [ErrBadResponse].
	MaxResponseBytes int64
	// Breakers holds a breaker per backend, keyed by its scheme and host: a backend that fails five
	// calls in a row (no answer, a time-out, a 5xx) is not called for a cool-down, and its
	// tools fail at once with [ErrUnavailable]. Share one Set in a process, so that every
	// tenant of a backend sees its state. nil: the Toolset has a Set of its own.
	Breakers *breaker.Set
}

// Toolset is an [engine.Toolset] that calls tenants' HTTP endpoints as their tool
// configuration describes them. It is safe for concurrent use.
type Toolset struct {
	client      *http.Client
	maxResponse int64
	preconnects preconnects
	breakers    *breaker.Set

	// catalogs holds the parsed tools of each tenant, keyed by weak pointers so that a tenant
	// store handing out new *engine.Tenant values does not grow it without bound: the entry
	// goes when its tenant is collected.
	catalogs sync.Map // weak.Pointer[engine.Tenant] → *catalog
}

var _ engine.Toolset = (*Toolset)(nil)

// catalog is the parsed tool configuration of one tenant.
type catalog struct {
	tools  []engine.Tool
	byName map[string]*Definition
	err    error
}

// New returns a Toolset. opts may be nil.
func New(opts *Options) *Toolset {
	if opts == nil {
		opts = &Options{}
	}
	ts := &Toolset{client: opts.Client, maxResponse: opts.MaxResponseBytes, breakers: opts.Breakers}
	if ts.breakers == nil {
		ts.breakers = breaker.New(nil)
	}
	if ts.client == nil {
		ts.client = newClient()
	}
	if ts.maxResponse <= 0 {
		ts.maxResponse = DefaultMaxResponseBytes
	}
	return ts
}

func newClient() *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{
		Transport: &http.Transport{
			DialContext:           dialer.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          512,
			MaxIdleConnsPerHost:   64,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   5 * time.Second,
			ExpectContinueTimeout: time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Tools returns the tools of env's tenant. A tenant whose tool configuration does not parse
// gets the error of [Parse] on every call.
func (ts *Toolset) Tools(_ context.Context, env *engine.ToolEnv) ([]engine.Tool, error) {
	c, err := ts.catalog(env)
	if err != nil {
		return nil, err
	}
	return slices.Clone(c.tools), nil
}

// catalog returns the parsed tools of env's tenant, parsing them on first use.
func (ts *Toolset) catalog(env *engine.ToolEnv) (*catalog, error) {
	if env == nil || env.Tenant == nil {
		return nil, errors.New("httptools: the tool environment names no tenant")
	}
	t := env.Tenant
	key := weak.Make(t)
	if c, ok := ts.catalogs.Load(key); ok {
		return c.(*catalog).result()
	}
	c := newCatalog(t)
	if prev, loaded := ts.catalogs.LoadOrStore(key, c); loaded {
		return prev.(*catalog).result()
	}
	runtime.AddCleanup(t, func(key weak.Pointer[engine.Tenant]) { ts.catalogs.Delete(key) }, key)
	return c.result()
}

func newCatalog(t *engine.Tenant) *catalog {
	defs, err := Parse(t.Tools)
	if err != nil {
		return &catalog{err: fmt.Errorf("httptools: tenant %q: %w", t.Key, err)}
	}
	c := &catalog{tools: make([]engine.Tool, len(defs)), byName: make(map[string]*Definition, len(defs))}
	for i := range defs {
		c.tools[i] = defs[i].tool()
		c.byName[defs[i].Name] = &defs[i]
	}
	return c
}

func (c *catalog) result() (*catalog, error) {
	if c.err != nil {
		return nil, c.err
	}
	return c, nil
}
