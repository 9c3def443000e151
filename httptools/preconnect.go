package httptools

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/convengine/engine"
)

// preconnectEvery is how often a backend is preconnected at most: well within the idle time of
// the default client's connections (90 s), so that one opened stays in the pool between
// sessions without a request to the backend for every session.
const preconnectEvery = 30 * time.Second

var _ engine.Preconnector = (*Toolset)(nil)

// preconnects remembers when each backend was last preconnected.
type preconnects struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// due reports whether origin is to be preconnected now, and notes that it is.
func (p *preconnects) due(origin string, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Sub(p.last[origin]) < preconnectEvery {
		return false
	}
	if p.last == nil || len(p.last) >= 4096 {
		p.last = make(map[string]time.Time)
	}
	p.last[origin] = now
	return true
}

// Preconnect opens a connection to the backend of env's tools and leaves it in the client's
// pool for the first call: a HEAD request to the environment's backend_url, carrying only
// X-Request-ID and the User-Agent "convengine-preconnect", never the user's token. Whatever
// the backend answers, the connection is open. A backend preconnected less than 30 seconds ago
// is not asked again.
func (ts *Toolset) Preconnect(ctx context.Context, env *engine.ToolEnv) error {
	c, err := ts.catalog(env)
	if err != nil || len(c.tools) == 0 || env.Environment == nil || env.Environment.BackendURL == "" {
		return err
	}
	u, err := url.Parse(env.Environment.BackendURL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("httptools: tenant %q: the environment's backend_url is not an absolute URL", env.Tenant.Key)
	}
	if !ts.preconnects.due(u.Scheme+"://"+u.Host, time.Now()) {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "convengine-preconnect")
	if env.RequestID != "" {
		req.Header.Set(engine.HeaderRequestID, env.RequestID)
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		return fmt.Errorf("httptools: preconnecting %s: %w", u.Host, err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10)) // so that the connection goes back to the pool
	return resp.Body.Close()
}
