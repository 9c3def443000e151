package mcptools

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/singleflight"

	"github.com/convengine/engine"
)

// Options adjust a [Toolset]. A nil *Options means the defaults.
type Options struct {
	// HTTPClient sends the requests; its Transport is wrapped to add each call's headers. The
	// default does not follow redirects, so that a user token never reaches another host.
	HTTPClient *http.Client
	// ToolsTTL is how long a listed tool set is reused before it is listed again (default 5m).
	ToolsTTL time.Duration
	// ConnectTimeout bounds the MCP handshake (default 10s).
	ConnectTimeout time.Duration
	// ClientName and ClientVersion identify the engine to MCP servers.
	ClientName, ClientVersion string
	// MaxSessions bounds the MCP sessions kept open (default 1024): tenants without
	// credentials have one per user. Past it, the least recently used session is closed.
	MaxSessions int
}

// Errors of the Toolset.
var (
	// ErrUnavailable wraps failures to reach an MCP server; the engine reports them as the
	// tool being unavailable.
	ErrUnavailable = errors.New("mcptools: MCP server unavailable")
)

// Toolset is an [engine.Toolset] over MCP servers. It is safe for concurrent use; Close ends
// its sessions.
type Toolset struct {
	client   *mcp.Client
	http     *http.Client
	ttl      time.Duration
	connect  time.Duration
	group    singleflight.Group
	mu       sync.Mutex
	sessions map[string]*serverSession
	tenants  sync.Map // weak.Pointer[engine.Tenant] → *servers
	closed   bool
	max      int
	salt     [16]byte // keys the hash that names a user's session
}

var _ engine.UserToolset = (*Toolset)(nil)

// serverSession is the MCP session of a tenant environment, or of one of its users when the
// tenant has no credentials of its own.
type serverSession struct {
	cs       *mcp.ClientSession
	tools    []engine.Tool
	listed   time.Time
	lastUsed time.Time // guarded by Toolset.mu
}

// New returns a Toolset.
func New(opts *Options) *Toolset {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.ToolsTTL <= 0 {
		o.ToolsTTL = 5 * time.Minute
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	if o.ClientName == "" {
		o.ClientName, o.ClientVersion = "convengine", "1"
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 1024
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	wrapped := *hc
	wrapped.Transport = &transport{base: base}
	ts := &Toolset{
		client:   mcp.NewClient(&mcp.Implementation{Name: o.ClientName, Version: o.ClientVersion}, nil),
		http:     &wrapped,
		ttl:      o.ToolsTTL,
		connect:  o.ConnectTimeout,
		sessions: map[string]*serverSession{},
		max:      o.MaxSessions,
	}
	rand.Read(ts.salt[:])
	return ts
}

// ListsPerUser reports whether env's tool list is the user's own: when a server of the tenant
// has no MCP credentials, it lists tools with each user's token. The engine then never shares
// one user's list with another.
func (ts *Toolset) ListsPerUser(env *engine.ToolEnv) bool {
	s, err := ts.tenantServers(env.Tenant)
	return err == nil && s.listsPerUser()
}

// sessionKey names the session of env: the tenant environment's, or its user's when the tenant
// has no credentials.
func (ts *Toolset) sessionKey(env *engine.ToolEnv, cfg *Config, endpoint string) string {
	key := env.Tenant.Key + "\x00" + env.Environment.Name + "\x00" + endpoint
	if len(cfg.Credentials) == 0 {
		mac := hmac.New(sha256.New, ts.salt[:])
		mac.Write([]byte(env.UserToken.Reveal()))
		key += "\x00" + hex.EncodeToString(mac.Sum(nil)[:16])
	}
	return key
}

// sessionContext is what a session's handshake and tool list are sent with: the tenant's
// credentials and no user's, or env's user.
func sessionContext(ctx context.Context, env *engine.ToolEnv, cfg *Config) context.Context {
	if len(cfg.Credentials) == 0 {
		return withEnv(ctx, env)
	}
	anon := &engine.ToolEnv{Tenant: env.Tenant, Environment: env.Environment, RequestID: env.RequestID}
	return withCredentials(withEnv(ctx, anon), cfg.Credentials)
}

// tenantServers returns the servers of t's "mcp" section, parsing it once per tenant.
func (ts *Toolset) tenantServers(t *engine.Tenant) (*servers, error) {
	key := weak.Make(t)
	if s, ok := ts.tenants.Load(key); ok {
		return s.(*servers), nil
	}
	configs, err := ParseServers(t.MCP)
	if err != nil {
		return nil, err
	}
	s, _ := ts.tenants.LoadOrStore(key, ts.newServers(configs))
	return s.(*servers), nil
}

// Tools lists the tools of env's MCP servers, from each session's cache while it is fresh.
// The tools of several servers are combined as package toolsets combines toolsets: a name
// that two servers list fails the listing with an error wrapping [toolsets.ErrNameClash].
func (ts *Toolset) Tools(ctx context.Context, env *engine.ToolEnv) ([]engine.Tool, error) {
	s, err := ts.tenantServers(env.Tenant)
	if err != nil {
		return nil, err
	}
	if s.combined != nil {
		return s.combined.Tools(ctx, env)
	}
	return ts.serverTools(ctx, env, s.configs[0])
}

// serverTools lists the tools of one MCP server of env's tenant.
func (ts *Toolset) serverTools(ctx context.Context, env *engine.ToolEnv, cfg *Config) ([]engine.Tool, error) {
	endpoint, err := cfg.endpoint(env.Environment)
	if err != nil {
		return nil, err
	}
	key := ts.sessionKey(env, cfg, endpoint)
	ts.mu.Lock()
	s := ts.sessions[key]
	ts.mu.Unlock()
	if s != nil && s.tools != nil && time.Since(s.listed) < ts.ttl {
		return s.tools, nil
	}
	v, err, _ := ts.group.Do("list\x00"+key, func() (any, error) {
		return ts.list(ctx, env, cfg, endpoint, key)
	})
	if err != nil {
		return nil, err
	}
	return v.([]engine.Tool), nil
}

func (ts *Toolset) list(ctx context.Context, env *engine.ToolEnv, cfg *Config, endpoint, key string) ([]engine.Tool, error) {
	var tools []engine.Tool
	err := ts.withSession(ctx, env, cfg, endpoint, key, func(cs *mcp.ClientSession) error {
		tools = tools[:0]
		for tool, err := range cs.Tools(sessionContext(ctx, env, cfg), nil) {
			if err != nil {
				return err
			}
			tools = append(tools, convertTool(tool, env.Tenant, cfg))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	if tools == nil {
		tools = []engine.Tool{}
	}
	ts.mu.Lock()
	if s := ts.sessions[key]; s != nil {
		s.tools, s.listed = tools, time.Now()
	}
	ts.mu.Unlock()
	return tools, nil
}

func convertTool(t *mcp.Tool, tenant *engine.Tenant, cfg *Config) engine.Tool {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || string(schema) == "null" {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	destructive := t.Annotations != nil && !t.Annotations.ReadOnlyHint &&
		t.Annotations.DestructiveHint != nil && *t.Annotations.DestructiveHint
	return engine.Tool{
		Name: t.Name, Description: t.Description, Parameters: schema,
		Action: tenant.IsAction(t.Name) || destructive,
		Status: cfg.Status[t.Name], Timeout: time.Duration(cfg.Timeout),
	}
}

// Call runs one tool on the MCP server of env's tenant that lists it.
func (ts *Toolset) Call(ctx context.Context, env *engine.ToolEnv, call engine.ToolCall) (engine.ToolResult, error) {
	s, err := ts.tenantServers(env.Tenant)
	if err != nil {
		return engine.ToolResult{}, err
	}
	if s.combined != nil {
		return s.combined.Call(ctx, env, call)
	}
	return ts.serverCall(ctx, env, s.configs[0], call)
}

// serverCall runs one tool on one MCP server of env's tenant.
func (ts *Toolset) serverCall(ctx context.Context, env *engine.ToolEnv, cfg *Config, call engine.ToolCall) (engine.ToolResult, error) {
	endpoint, err := cfg.endpoint(env.Environment)
	if err != nil {
		return engine.ToolResult{}, err
	}
	args := call.Arguments
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	var res *mcp.CallToolResult
	err = ts.withSession(ctx, env, cfg, endpoint, ts.sessionKey(env, cfg, endpoint), func(cs *mcp.ClientSession) error {
		var err error
		res, err = cs.CallTool(withEnv(ctx, env), &mcp.CallToolParams{Name: call.Name, Arguments: args})
		return err
	})
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return errorResult("tool_error", rpcErr.Message), nil
	}
	if err != nil {
		return engine.ToolResult{}, err
	}
	return convertResult(res), nil
}

// withSession runs f with the environment's session, opening it when there is none, and once
// more with a new session when the server no longer knows the old one.
func (ts *Toolset) withSession(ctx context.Context, env *engine.ToolEnv, cfg *Config, endpoint, key string, f func(*mcp.ClientSession) error) error {
	for attempt := 0; ; attempt++ {
		s, err := ts.session(ctx, env, cfg, endpoint, key)
		if err != nil {
			return err
		}
		err = f(s.cs)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var rpcErr *jsonrpc.Error
		switch {
		case errors.As(err, &rpcErr):
			return rpcErr // the server answered: the session is fine
		case attempt == 0 && sessionGone(err):
			ts.drop(key, s)
			continue
		}
		ts.drop(key, s)
		return fmt.Errorf("%w: %v", ErrUnavailable, short(err))
	}
}

// session returns the session of key, opening one (once, for all concurrent callers).
func (ts *Toolset) session(ctx context.Context, env *engine.ToolEnv, cfg *Config, endpoint, key string) (*serverSession, error) {
	ts.mu.Lock()
	s, closed := ts.sessions[key], ts.closed
	if s != nil {
		s.lastUsed = time.Now()
	}
	ts.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("%w: the toolset is closed", ErrUnavailable)
	}
	if s != nil {
		return s, nil
	}
	v, err, _ := ts.group.Do("connect\x00"+key, func() (any, error) {
		// The handshake outlives the caller that started it: others are waiting on it too.
		cctx, cancel := context.WithTimeout(sessionContext(context.WithoutCancel(ctx), env, cfg), ts.connect)
		defer cancel()
		t := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: ts.http, MaxRetries: -1, DisableStandaloneSSE: true}
		cs, err := ts.client.Connect(cctx, t, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: %w: connecting: %v", ErrUnavailable, engine.ErrToolNotReached, short(err))
		}
		s := &serverSession{cs: cs, lastUsed: time.Now()}
		ts.mu.Lock()
		if ts.closed {
			ts.mu.Unlock()
			cs.Close()
			return nil, fmt.Errorf("%w: the toolset is closed", ErrUnavailable)
		}
		victim := ts.leastRecentlyUsed()
		ts.sessions[key] = s
		ts.mu.Unlock()
		if victim != nil {
			victim.cs.Close()
		}
		return s, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*serverSession), nil
}

// leastRecentlyUsed removes and returns the least recently used session when the sessions are
// at their bound, else nil. The caller holds ts.mu.
func (ts *Toolset) leastRecentlyUsed() *serverSession {
	if len(ts.sessions) < ts.max {
		return nil
	}
	var oldKey string
	var old *serverSession
	for k, s := range ts.sessions {
		if old == nil || s.lastUsed.Before(old.lastUsed) {
			oldKey, old = k, s
		}
	}
	delete(ts.sessions, oldKey)
	return old
}

func (ts *Toolset) drop(key string, s *serverSession) {
	ts.mu.Lock()
	if ts.sessions[key] == s {
		delete(ts.sessions, key)
	}
	ts.mu.Unlock()
	s.cs.Close()
}

// Close ends every session. Calls after Close fail with [ErrUnavailable].
func (ts *Toolset) Close() error {
	ts.mu.Lock()
	ts.closed = true
	sessions := ts.sessions
	ts.sessions = map[string]*serverSession{}
	ts.mu.Unlock()
	var errs []error
	for _, s := range sessions {
		errs = append(errs, s.cs.Close())
	}
	return errors.Join(errs...)
}

// sessionGone reports whether the session can no longer be used: the server forgot it, or
// its connection closed.
func sessionGone(err error) bool {
	return errors.Is(err, mcp.ErrSessionMissing) || errors.Is(err, mcp.ErrConnectionClosed)
}

// short keeps an error message to its first line and 200 bytes: what reaches logs and models.
func short(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
