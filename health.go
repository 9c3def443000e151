package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// A Pinger is a store or other dependency that can report whether it is reachable. The health
// handler pings every part of the engine that implements it.
type Pinger interface {
	Ping(ctx context.Context) error
}

// HealthHandler returns a handler for liveness and readiness probes. It answers 200
// {"status":"ok"} when every part of the engine that implements [Pinger] answers within two
// seconds, and 503 {"status":"unavailable","failing":[…]} naming the parts that did not. It
// takes no authentication headers: mount it where only the platform can reach it.
func (e *Engine) HealthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeProblem(w, newProblem(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "health takes GET"), "")
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		parts := map[string]any{"tenants": e.tenants, "model": e.model, "toolset": e.toolset,
			"sessions": e.sessions, "replay": e.replay, "actions": e.actions}
		failing := []string{}
		seen := map[any]bool{}
		for name, part := range parts {
			p, ok := part.(Pinger)
			if !ok || seen[part] {
				continue
			}
			seen[part] = true
			if err := p.Ping(ctx); err != nil {
				e.log.WarnContext(ctx, "health check failed", "part", name, "err", err)
				failing = append(failing, name)
			}
		}
		status, body := http.StatusOK, map[string]any{"status": "ok"}
		if len(failing) > 0 {
			status, body = http.StatusServiceUnavailable, map[string]any{"status": "unavailable", "failing": failing}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(body)
	})
}
