// Package shutdown holds the engine's going away: the farewells that transports register
// (package voice closes its sockets), all called at once when the engine shuts down, and the
// draining signal that the admission and the resumes read to turn new work away meanwhile.
// The root's Engine.Shutdown and Engine.OnShutdown are its API.
package shutdown

import (
	"context"
	"errors"
	"sync"
)

// Hooks are the functions registered to be called at shutdown. Make them with [New]; they are
// safe for concurrent use.
type Hooks struct {
	mu       sync.Mutex
	closing  bool
	ctx      context.Context // the first Run's, without its cancellation
	hooks    []func(context.Context) error
	draining context.Context // done once Run has begun
	stop     context.CancelFunc
}

// New returns hooks that are not draining.
func New() *Hooks {
	h := &Hooks{}
	h.draining, h.stop = context.WithCancel(context.Background())
	return h
}

// Draining is done once [Hooks.Run] has begun.
func (h *Hooks) Draining() context.Context { return h.draining }

// Register adds f to what Run calls; once Run has begun, f is called at once, with the context
// of the first Run, no longer cancelled.
func (h *Hooks) Register(f func(ctx context.Context) error) {
	h.mu.Lock()
	closing, ctx := h.closing, h.ctx
	if !closing {
		h.hooks = append(h.hooks, f)
	}
	h.mu.Unlock()
	if closing {
		_ = f(ctx)
	}
}

// Run starts draining, calls every function registered, at once, and waits for them: it
// returns their errors joined, else ctx.Err().
func (h *Hooks) Run(ctx context.Context) error {
	h.mu.Lock()
	if !h.closing {
		h.closing, h.ctx = true, context.WithoutCancel(ctx)
		h.stop()
	}
	hooks := h.hooks
	h.mu.Unlock()
	errs := make([]error, len(hooks))
	var wg sync.WaitGroup
	for i, f := range hooks {
		wg.Go(func() { errs[i] = f(ctx) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return ctx.Err()
}
