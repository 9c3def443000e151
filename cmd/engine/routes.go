package main

import (
	"net/http"

	"github.com/convengine/engine"
	"github.com/convengine/engine/docs"
	"github.com/convengine/engine/examples/web"
)

// routes serves the engine's API with what an operator expects next to it: health probes and
// the OpenAPI document; with demoWeb, the reference web client at /demo/.
func routes(eng *engine.Engine, demoWeb bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", eng.Handler())
	mux.Handle("/healthz", eng.HealthHandler())
	mux.Handle("/readyz", eng.HealthHandler())
	mux.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(docs.OpenAPI)
	})
	if demoWeb {
		mux.Handle("GET /demo/", http.StripPrefix("/demo", web.Handler()))
	}
	return mux
}
