package main

import (
	"net/http"

	"github.com/convengine/engine"
	"github.com/convengine/engine/docs"
)

// routes serves the engine's API with what an operator expects next to it: health probes, the
// OpenAPI document and, when on, metrics.
func routes(eng *engine.Engine, mx *metrics) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", eng.Handler())
	mux.Handle("/healthz", eng.HealthHandler())
	mux.Handle("/readyz", eng.HealthHandler())
	mux.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(docs.OpenAPI)
	})
	mux.HandleFunc("GET /asyncapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(docs.AsyncAPI)
	})
	if mx != nil {
		mux.Handle("GET /metrics", mx.handler)
	}
	return mux
}
