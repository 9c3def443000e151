package main

import (
	"net"
	"net/http"
	"sync/atomic"

	"github.com/convengine/engine"
	"github.com/convengine/engine/agui"
	"github.com/convengine/engine/docs"
	"github.com/convengine/engine/examples/web"
	"github.com/convengine/engine/handoff"
	"github.com/convengine/engine/voice"
)

// routes serves the engine's API and its voice socket with what an operator expects next to it: AG-UI runs at
// /engine/agui, health probes, the OpenAPI and AsyncAPI documents, and with demoWeb the
// reference web client at /demo/, with the reference bank's enrolment routes at /demo/bank/
// when the demo runs. Metrics are served on the
// debug address only (serveDebug).
func routes(eng *engine.Engine, sockets *voice.Server, sb *handoff.Switchboard, deskKey string, demoWeb bool, d *demo, draining *atomic.Bool, phones ...engine.Route) http.Handler {
	mux := http.NewServeMux()
	// The voice socket at /engine/stream, handoffs at /engine/handoff/ (docs/handoff.md), the
	// phone lines at /telephony/ (docs/telephony.md).
	mux.Handle("/", eng.Handler(append(append(sockets.Routes(), sb.Routes()...), phones...)...))
	// AG-UI clients (docs/agui.md); a run that hands the conversation to a person follows it.
	mux.Handle("POST /engine/agui", agui.Handler(eng, &agui.Options{Follow: sb.Follow}))
	mux.Handle("/healthz", eng.HealthHandler())
	mux.Handle("/readyz", readiness(draining))
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
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
		page := http.StripPrefix("/demo", web.Handler())
		if d != nil {
			page = toLocalhost(page)
		}
		mux.Handle("GET /demo/", page)
		// The demo's agent desk: the page at /demo/desk/, its API for the desk key's holder.
		desk := http.StripPrefix("/demo/desk/api", sb.DeskHandler(deskKey))
		mux.Handle("GET /demo/desk/api/", desk)
		mux.Handle("POST /demo/desk/api/", desk)
		if d != nil {
			// The demo's stand-in for the bank's own app: the library never relays enrolment.
			mux.Handle("POST /demo/bank/", http.StripPrefix("/demo/bank", d.enrolment))
		}
	}
	return mux
}

// toLocalhost sends the offline demo's page asked at a loopback address (127.0.0.1, [::1]) to
// localhost, same port, path and query: passkeys need a domain as their relying party (WebAuthn
// refuses IP addresses, and the demo's is localhost), and one origin keeps one device key, one
// enrolment and one theme whichever gate the page uses.
func toLocalhost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, port, err := net.SplitHostPort(r.Host)
		if err != nil {
			host, port = r.Host, ""
		}
		if host != "127.0.0.1" && host != "::1" && host != "[::1]" {
			next.ServeHTTP(w, r)
			return
		}
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		u := scheme + "://localhost"
		if port != "" {
			u += ":" + port
		}
		http.Redirect(w, r, u+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	})
}

// readiness answers whether a load balancer should send this replica work: 200 until it
// drains, then 503 shutting_down. It does not look at Redis or the tenants' backends, which
// /healthz does: when Redis fails over, every replica fails alike, and a balancer that took
// them all out would answer its own 503 page where each replica answers a retryable 503
// store_unavailable and recovers with Redis, by itself.
func readiness(draining *atomic.Bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if draining.Load() {
			engine.WriteProblem(w, engine.NewProblem(http.StatusServiceUnavailable, engine.CodeShuttingDown, "this server is shutting down"))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
}

// countWork counts in n the requests h is serving that do work (POST: turns, actions, AG-UI
// runs, syntheses), for the drain to wait for them; resumes and sockets (GET) end by themselves
// when the engine shuts down.
func countWork(h http.Handler, n *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			n.Add(1)
			defer n.Add(-1)
		}
		h.ServeHTTP(w, r)
	})
}
