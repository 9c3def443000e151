package response

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Health answers a liveness and readiness probe: it pings every part that has a Ping method
// (each once, however many names it has) within two seconds, and writes 200 {"status":"ok"},
// or 503 {"status":"unavailable","failing":[…]} naming the parts that failed, each of which
// failed is told of first.
func Health(w http.ResponseWriter, r *http.Request, parts map[string]any, failed func(ctx context.Context, part string, err error)) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	failing := []string{}
	seen := map[any]bool{}
	for name, part := range parts {
		p, ok := part.(interface{ Ping(context.Context) error })
		if !ok || seen[part] {
			continue
		}
		seen[part] = true
		if err := p.Ping(ctx); err != nil {
			failed(ctx, name, err)
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
}
