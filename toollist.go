package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/convengine/engine/internal/prompt"
	"github.com/convengine/engine/internal/toolcache"

	"github.com/convengine/engine/widgets"
)

// warmTimeout bounds a warm-up.
const warmTimeout = 30 * time.Second

// warmer holds the engine's background work: the warm-ups that create-session starts, and the
// tool lists of tenant environments, which warm-ups and turns share until they expire (package
// toolcache). Concurrent work for one tenant environment collapses into one call.
type warmer struct {
	*toolcache.Cache[Tool, *Tenant, *toolIndex]
	// uiOnly describes no tools but the UI tools: the tool list of every turn of an engine
	// without a Toolset.
	uiOnly *toolIndex
}

// toolIndex is a tool list indexed by name and described for the model, with the UI tools.
// Turns share it: nothing changes it after it is made.
type toolIndex struct {
	byName map[string]Tool
	specs  []ToolSpec
}

func newWarmer(ttl time.Duration, hostUI []ToolSpec) *warmer {
	w := &warmer{Cache: toolcache.New[Tool, *Tenant, *toolIndex](ttl), uiOnly: &toolIndex{}}
	w.uiOnly.byName, w.uiOnly.specs = describeTools(nil, nil, hostUI)
	return w
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
	return e.warm.Fetch(ctx, e.toolKey(env), e.now, env.Tenant.Limits.ToolTimeout.or(defaultToolLimit),
		func(ctx context.Context) ([]Tool, error) { return e.listTools(ctx, env) })
}

// listTools calls the Toolset, turning a panic into an error: it may run on a goroutine of its
// own, where a panic would end the process.
func (e *Engine) listTools(ctx context.Context, env *ToolEnv) (tools []Tool, err error) {
	defer toolcache.Recover(&err, "listing tools")
	return e.toolset.Tools(ctx, env)
}

// describedTools returns the tools of env's tenant environment, indexed and described for the
// model: made once per tool list, and shared by the turns that use it.
func (e *Engine) describedTools(ctx context.Context, env *ToolEnv) (*toolIndex, error) {
	if e.toolset == nil {
		return e.warm.uiOnly, nil
	}
	key := e.toolKey(env)
	if idx, ok := e.warm.Index(key, env.Tenant, e.now()); ok {
		return idx, nil
	}
	tools, err := e.toolList(ctx, env)
	if err != nil {
		return nil, err
	}
	idx := &toolIndex{}
	idx.byName, idx.specs = describeTools(env.Tenant, tools, e.hostWidgetSpecs)
	e.warm.PutIndex(key, tools, env.Tenant, idx)
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
	if e.warm.IsWarm(key, e.now()) {
		if e.listsPerUser(env) { // the environment is warm, but this user's tools may not be listed
			e.warm.Go(ctx, warmTimeout, func(lctx context.Context) { e.toolList(lctx, env) })
		}
		return
	}
	e.warm.Warm(ctx, key, warmTimeout, func(wctx context.Context) error { return e.warmUp(wctx, key, env) }, func(wctx context.Context, err error) {
		e.log.WarnContext(wctx, "warm-up failed", "requestId", env.RequestID, "tenant", env.Tenant.Key,
			"env", env.Environment.Name, "err", err)
	})
}

// startPreconnect lets a [Preconnector] open the connections of env's tools in the background.
// The user's token is not given to it: a connection needs none.
func (e *Engine) startPreconnect(ctx context.Context, env *ToolEnv) {
	pc, ok := e.toolset.(Preconnector)
	if !ok {
		return
	}
	e.warm.Go(ctx, env.Tenant.Limits.ToolTimeout.or(defaultToolLimit), func(pctx context.Context) {
		anon := &ToolEnv{Tenant: env.Tenant, Environment: env.Environment, RequestID: env.RequestID}
		if err := preconnect(pctx, pc, anon); err != nil && pctx.Err() == nil {
			e.log.DebugContext(pctx, "preconnecting the tools failed", "requestId", env.RequestID, "tenant", env.Tenant.Key,
				"env", env.Environment.Name, "err", err)
		}
	})
}

func preconnect(ctx context.Context, pc Preconnector, env *ToolEnv) (err error) {
	defer toolcache.Recover(&err, "preconnecting")
	return pc.Preconnect(ctx, env)
}

func (e *Engine) warmUp(ctx context.Context, key string, env *ToolEnv) (err error) {
	defer toolcache.Recover(&err, "warm-up")
	if e.warm.IsWarm(key, e.now()) {
		return nil
	}
	tools, err := e.toolList(ctx, env)
	if err != nil {
		return fmt.Errorf("listing tools: %w", err)
	}
	if w, ok := e.model.(Warmer); ok {
		_, specs := describeTools(env.Tenant, tools, e.hostWidgetSpecs)
		wreq := e.warmRequest(env, specs)
		// The provider bills a warm-up as any call: under a token budget it is reserved first,
		// and skipped (unmarked, for a later session to try) when the budget has no room.
		estimate, spent := Usage{InputTokens: (promptBytes(wreq) + 3) / 4, OutputTokens: 1}, Usage{}
		var r Reservation
		if l := &env.Tenant.Limits; l.TokensPerDay > 0 || l.TokensPerMonth > 0 {
			var p *Problem
			if r, p = e.reserve(ctx, env.RequestID, Spend{Tenant: env.Tenant, Tokens: int64(estimate.InputTokens + 1)}); p != nil {
				return nil
			}
		}
		start := e.now()
		finish, err := w.Warm(ctx, wreq)
		if finish.Kind == EventFinish {
			ev := ModelCallEvent{Tenant: env.Tenant.Key, Environment: env.Environment.Name, Warmup: true, Outcome: "ok",
				Finish: finish.Finish, Usage: finish.Usage, Model: finish.Model, Retries: finish.Retries, Duration: e.now().Sub(start)}
			if spent = finish.Usage; !spent.Reported {
				ev.Estimated, spent = estimate, estimate
			}
			if e.obs.ModelCall != nil {
				e.obs.ModelCall(ctx, ev)
			}
		}
		e.settle(ctx, r, Spend{Tenant: env.Tenant, Tokens: int64(spent.InputTokens + spent.OutputTokens)})
		if err != nil {
			return fmt.Errorf("warming the model: %w", err)
		}
	}
	e.warm.MarkWarm(key, e.now())
	return nil
}

// warmRequest is the prefix every turn's request of the tenant shares: the stable system
// prompt and the tools, with no Context and no messages.
func (e *Engine) warmRequest(env *ToolEnv, specs []ToolSpec) *ModelRequest {
	return &ModelRequest{Tenant: env.Tenant, Environment: env.Environment.Name, System: prompt.Stable(env.Tenant.Prompt),
		Tools: specs, Mode: ModeText, Locale: env.Tenant.Locale}
}
