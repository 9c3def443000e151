package fallback

import (
	"context"
	"net/http"

	"github.com/convengine/engine"
)

// BeforeTurn returns a hook for [engine.Guards].BeforeTurn that refuses a turn before its
// stream starts when the model pick gives its tenant is a [Chain] none of whose models would
// be tried now: 503 model_unavailable, with Retry-After. The turn then costs nothing and the
// client knows when to ask again. Other models, and chains with a model to try, pass.
func BeforeTurn(pick func(*engine.Tenant) engine.Model) func(context.Context, *engine.TurnInfo) (string, error) {
	return func(_ context.Context, t *engine.TurnInfo) (string, error) {
		c, ok := pick(t.Env.Tenant).(*Chain)
		if !ok {
			return "", nil
		}
		if wait, ok := c.Available(); !ok {
			return "", engine.NewProblem(http.StatusServiceUnavailable, engine.CodeModelUnavailable,
				"the assistant's models are unavailable right now; try again later").WithRetryAfter(wait)
		}
		return "", nil
	}
}
