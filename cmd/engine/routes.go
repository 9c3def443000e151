package main

import (
	"net/http"

	"github.com/convengine/engine"
	"github.com/convengine/engine/docs"
	"github.com/convengine/engine/examples/web"
)

// routes serves the engine's API with what an operator expects next to it: health probes, the
// OpenAPI and AsyncAPI documents, and with demoWeb the reference web client at /demo/. Metrics
// are served on the debug address only (serveDebug).
func routes(eng *engine.Engine, demoWeb bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", eng.Handler())
	mux.Handle("/healthz", eng.HealthHandler())
	mux.Handle("/readyz", eng.HealthHandler())
	mux.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		doc, err := eng.OpenAPI() // with the demo's own widget types
		if err != nil {
			http.Error(w, "the OpenAPI document could not be written", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(doc)
	})
	mux.HandleFunc("GET /asyncapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(docs.AsyncAPI)
	})
	if demoWeb {
		mux.Handle("GET /demo/", http.StripPrefix("/demo", web.Handler()))
	}
	return mux
}
