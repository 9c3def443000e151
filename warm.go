package engine

import (
	"context"
	"time"
)

// warmLimit bounds a warm-up, which runs after the session's response was sent.
const warmLimit = 30 * time.Second

// warmRequest is what a [Warmer] gets for req's tenant: the stable system prompt and the tools,
// built by the same code as a turn's, so that the prefix a provider caches is the one turns send.
func (e *Engine) warmRequest(ctx context.Context, req *request) (*ModelRequest, *Problem) {
	t := &turn{req: req, env: req.toolEnv()}
	if p := e.loadTools(ctx, t); p != nil {
		return nil, p
	}
	return &ModelRequest{
		Tenant: req.Tenant, Environment: req.Environment.Name, System: stablePrompt(req.Tenant),
		Tools: t.specs, Locale: req.Tenant.Locale,
	}, nil
}

// warmModel warms the model for req's tenant when it is a [Warmer]: session creation runs it in
// the background (spec 4.1 rule 1). Failures are logged and otherwise ignored: a cold first turn
// is slower, not wrong.
func (e *Engine) warmModel(ctx context.Context, req *request) {
	w, ok := e.model.(Warmer)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, warmLimit)
	defer cancel()
	mreq, p := e.warmRequest(ctx, req)
	if p != nil {
		return // loadTools logged why
	}
	start := e.now()
	if err := w.Warm(ctx, mreq); err != nil {
		e.log.WarnContext(ctx, "warming the model failed", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		return
	}
	e.log.DebugContext(ctx, "warmed the model", "requestId", req.ID, "tenant", req.Tenant.Key,
		"ms", float64(e.now().Sub(start).Microseconds())/1000)
}
