package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/convengine/engine/internal/prompt"

	"golang.org/x/sync/singleflight"

	"github.com/convengine/engine/widgets"
)

// Bounds of background work.
const (
	defaultToolListTTL = 5 * time.Minute
	warmTimeout        = 30 * time.Second
	maxWarmEntries     = 1024 // entries kept before expired ones are swept
	maxToolLists       = 8192 // tool lists kept, with a Toolset that lists per user
)

// errClosed is returned by background work asked for after [Engine.Close].
var errClosed = errors.New("engine: closed")

// warmer holds the engine's background work: the warm-ups that create-session starts, and the
// tool lists of tenant environments, which warm-ups and turns share until they expire.
// Concurrent work for one tenant environment collapses into one call.
type warmer struct {
	ttl   time.Duration // negative: nothing is reused
	group singleflight.Group

	mu     sync.Mutex
	tools  map[string]toolsEntry
	warmed map[string]time.Time // until when a tenant environment counts as warm
	closed bool
	wg     sync.WaitGroup

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc

	// uiOnly describes no tools but the UI tools: the tool list of every turn of an engine
	// without a Toolset.
	uiOnly *toolIndex
}

type toolsEntry struct {
	tools []Tool
	until time.Time
	// index is tools described for the model, for the tenant it was made for; turns share it.
	index *toolIndex
}

// toolIndex is a tool list indexed by name and described for the model, with the UI tools.
// Turns share it: nothing changes it after it is made.
type toolIndex struct {
	tenant *Tenant
	byName map[string]Tool
	specs  []ToolSpec
}

func newWarmer(ttl time.Duration, hostUI []ToolSpec) *warmer {
	if ttl == 0 {
		ttl = defaultToolListTTL
	}
	ctx, cancel := context.WithCancel(context.Background())
	uiOnly := &toolIndex{}
	uiOnly.byName, uiOnly.specs = describeTools(nil, nil, hostUI)
	return &warmer{ttl: ttl, tools: map[string]toolsEntry{}, warmed: map[string]time.Time{}, ctx: ctx, cancel: cancel, uiOnly: uiOnly}
}

// enter registers one piece of background work, or reports false after Close.
func (w *warmer) enter() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	w.wg.Add(1)
	return true
}

func (w *warmer) exit() { w.wg.Done() }

// detach returns a context with parent's values that outlives parent's cancellation: it ends
// after d, or when the engine is closed.
func (w *warmer) detach(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), d)
	stop := context.AfterFunc(w.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

func (w *warmer) cachedTools(key string, now time.Time) ([]Tool, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.tools[key]
	return e.tools, ok && now.Before(e.until)
}

// cachedIndex returns the description of the fresh tool list of key, when it was made for
// tenant (a tenant store may hand out a changed tenant under the same key).
func (w *warmer) cachedIndex(key string, tenant *Tenant, now time.Time) (*toolIndex, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.tools[key]
	if !ok || !now.Before(e.until) || e.index == nil || e.index.tenant != tenant {
		return nil, false
	}
	return e.index, true
}

// putIndex keeps idx with the tool list of key it describes, if that list is still the
// cached one.
func (w *warmer) putIndex(key string, tools []Tool, idx *toolIndex) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.tools[key]
	if !ok || len(e.tools) != len(tools) || (len(tools) > 0 && &e.tools[0] != &tools[0]) {
		return
	}
	e.index = idx
	w.tools[key] = e
}

func (w *warmer) putTools(key string, tools []Tool, now time.Time) {
	if w.ttl < 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.tools) >= maxWarmEntries {
		sweep(w.tools, -1, func(e toolsEntry) time.Time { return e.until }, now)
	}
	for k := range w.tools { // lists of many users, none expired: one goes
		if len(w.tools) < maxToolLists {
			break
		}
		delete(w.tools, k)
	}
	w.tools[key] = toolsEntry{tools: tools, until: now.Add(w.ttl)}
}

func (w *warmer) isWarm(key string, now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	until, ok := w.warmed[key]
	return ok && now.Before(until)
}

func (w *warmer) markWarm(key string, now time.Time) {
	if w.ttl < 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.warmed) >= maxWarmEntries {
		sweep(w.warmed, -1, func(until time.Time) time.Time { return until }, now)
	}
	w.warmed[key] = now.Add(w.ttl)
}

func warmKey(env *ToolEnv) string { return env.Tenant.Key + "\x00" + env.Environment.Name }

// toolKey names the tool list of env: its tenant environment's, or its user's when the Toolset
// lists tools per user.
func (e *Engine) toolKey(env *ToolEnv) string {
	if e.listsPerUser(env) {
		return warmKey(env) + "\x00" + e.limits.userBucket(env.Tenant.Key, env.UserToken)
	}
	return warmKey(env)
}

func (e *Engine) listsPerUser(env *ToolEnv) bool {
	ut, ok := e.toolset.(UserToolset)
	return ok && ut.ListsPerUser(env)
}

// toolList returns the tools of env's tenant environment: the cached list while it is fresh,
// else the Toolset's, listed once for all the callers that ask at the same time. The listing
// runs in the background, bounded by the tenant's tool time-out, so that a caller that gives up
// does not fail the others; a failed listing is not cached.
func (e *Engine) toolList(ctx context.Context, env *ToolEnv) ([]Tool, error) {
	if e.toolset == nil {
		return nil, nil
	}
	key := e.toolKey(env)
	if tools, ok := e.warm.cachedTools(key, e.now()); ok {
		return tools, nil
	}
	ch := e.warm.group.DoChan("tools\x00"+key, func() (any, error) {
		if !e.warm.enter() {
			return nil, errClosed
		}
		defer e.warm.exit()
		lctx, cancel := e.warm.detach(ctx, env.Tenant.Limits.ToolTimeout.or(defaultToolLimit))
		defer cancel()
		tools, err := e.listTools(lctx, env)
		if err != nil {
			return nil, err
		}
		e.warm.putTools(key, tools, e.now())
		return tools, nil
	})
	select {
	case res := <-ch:
		if errors.Is(res.Err, errClosed) {
			return e.listTools(ctx, env)
		}
		tools, _ := res.Val.([]Tool)
		return tools, res.Err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// listTools calls the Toolset, turning a panic into an error: it may run on a goroutine of its
// own, where a panic would end the process.
func (e *Engine) listTools(ctx context.Context, env *ToolEnv) (tools []Tool, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("listing tools panicked: %T", v)
		}
	}()
	return e.toolset.Tools(ctx, env)
}

// describedTools returns the tools of env's tenant environment, indexed and described for the
// model: made once per tool list, and shared by the turns that use it.
func (e *Engine) describedTools(ctx context.Context, env *ToolEnv) (*toolIndex, error) {
	if e.toolset == nil {
		return e.warm.uiOnly, nil
	}
	key := e.toolKey(env)
	if idx, ok := e.warm.cachedIndex(key, env.Tenant, e.now()); ok {
		return idx, nil
	}
	tools, err := e.toolList(ctx, env)
	if err != nil {
		return nil, err
	}
	idx := &toolIndex{tenant: env.Tenant}
	idx.byName, idx.specs = describeTools(env.Tenant, tools, e.hostWidgetSpecs)
	e.warm.putIndex(key, tools, idx)
	return idx, nil
}

// describeTools indexes a tenant's tools by name and describes them, then the UI tools and the
// host's widget tools (hostUI), to the model.
func describeTools(t *Tenant, tools []Tool, hostUI []ToolSpec) (map[string]Tool, []ToolSpec) {
	byName := make(map[string]Tool, len(tools))
	specs := make([]ToolSpec, 0, len(tools)+5)
	for _, tool := range tools {
		kind := ToolData
		if tool.Action || t.IsAction(tool.Name) {
			kind = ToolAction
		}
		byName[tool.Name] = tool
		specs = append(specs, ToolSpec{Name: tool.Name, Description: tool.Description, Parameters: tool.Parameters, Kind: kind})
	}
	for _, ui := range widgets.UITools() {
		specs = append(specs, ToolSpec{Name: ui.Name, Description: ui.Description, Parameters: ui.Parameters, Kind: ToolUI})
	}
	return byName, append(specs, hostUI...)
}

// startWarmUp prepares req's tenant environment in the background, without delaying the
// caller: it lists the tools and lets a [Warmer] model prepare the prompt a turn will send.
// Warm-ups of one tenant environment collapse into one, and a finished warm-up is reused until
// the tool list expires.
func (e *Engine) startWarmUp(ctx context.Context, req *request) {
	env := req.toolEnv()
	key := warmKey(env)
	e.startPreconnect(ctx, env)
	if e.warm.isWarm(key, e.now()) && e.listsPerUser(env) && e.warm.enter() {
		// The environment is warm, but this user's tools are not listed yet.
		go func() {
			defer e.warm.exit()
			lctx, cancel := e.warm.detach(ctx, warmTimeout)
			defer cancel()
			e.toolList(lctx, env)
		}()
		return
	}
	if e.warm.isWarm(key, e.now()) || !e.warm.enter() {
		return
	}
	go func() {
		defer e.warm.exit()
		wctx, cancel := e.warm.detach(ctx, warmTimeout)
		defer cancel()
		_, err, _ := e.warm.group.Do("warm\x00"+key, func() (any, error) { return nil, e.warmUp(wctx, key, env) })
		if err != nil && !errors.Is(err, errClosed) {
			e.log.WarnContext(wctx, "warm-up failed", "requestId", env.RequestID, "tenant", env.Tenant.Key,
				"env", env.Environment.Name, "err", err)
		}
	}()
}

// startPreconnect lets a [Preconnector] open the connections of env's tools in the background.
// The user's token is not given to it: a connection needs none.
func (e *Engine) startPreconnect(ctx context.Context, env *ToolEnv) {
	pc, ok := e.toolset.(Preconnector)
	if !ok || !e.warm.enter() {
		return
	}
	go func() {
		defer e.warm.exit()
		pctx, cancel := e.warm.detach(ctx, env.Tenant.Limits.ToolTimeout.or(defaultToolLimit))
		defer cancel()
		anon := &ToolEnv{Tenant: env.Tenant, Environment: env.Environment, RequestID: env.RequestID}
		if err := preconnect(pctx, pc, anon); err != nil && pctx.Err() == nil {
			e.log.DebugContext(pctx, "preconnecting the tools failed", "requestId", env.RequestID, "tenant", env.Tenant.Key,
				"env", env.Environment.Name, "err", err)
		}
	}()
}

func preconnect(ctx context.Context, pc Preconnector, env *ToolEnv) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("preconnecting panicked: %T", v)
		}
	}()
	return pc.Preconnect(ctx, env)
}

func (e *Engine) warmUp(ctx context.Context, key string, env *ToolEnv) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("warm-up panicked: %T", v)
		}
	}()
	if e.warm.isWarm(key, e.now()) {
		return nil
	}
	tools, err := e.toolList(ctx, env)
	if err != nil {
		return fmt.Errorf("listing tools: %w", err)
	}
	if w, ok := e.model.(Warmer); ok {
		_, specs := describeTools(env.Tenant, tools, e.hostWidgetSpecs)
		start := e.now()
		finish, err := w.Warm(ctx, e.warmRequest(env, specs))
		if finish.Kind == EventFinish && e.obs.ModelCall != nil {
			e.obs.ModelCall(ctx, ModelCallEvent{Tenant: env.Tenant.Key, Environment: env.Environment.Name, Warmup: true,
				Outcome: "ok", Finish: finish.Finish, Usage: finish.Usage, Model: finish.Model, Retries: finish.Retries,
				Duration: e.now().Sub(start)})
		}
		if err != nil {
			return fmt.Errorf("warming the model: %w", err)
		}
	}
	e.warm.markWarm(key, e.now())
	return nil
}

// warmRequest is the prefix every turn's request of the tenant shares: the stable system
// prompt and the tools, with no Context and no messages.
func (e *Engine) warmRequest(env *ToolEnv, specs []ToolSpec) *ModelRequest {
	return &ModelRequest{Tenant: env.Tenant, Environment: env.Environment.Name, System: prompt.Stable(env.Tenant.Prompt),
		Tools: specs, Mode: ModeText, Locale: env.Tenant.Locale}
}
