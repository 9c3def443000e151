// Command chi mounts the engine on a chi router, behind the host's own authentication
// middleware: the host decides who may talk to the assistant before the engine sees the
// request, and passes the user's backend token on as X-Token.
//
//	go run ./examples/chi
//	curl -N localhost:8091/assistant/engine -H 'Authorization: Bearer host-session-alice' \
//	  -H 'X-Engine-Key: pk_demo' -H 'X-Request-ID: prod-1' -H 'Content-Type: application/json' \
//	  -d '{"transcript":"what is my balance"}'
package main

import (
	"crypto/rand"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/intent"
)

// hostAuth is the host's middleware: it accepts the host's own session cookie or bearer token,
// and hands the engine the user's token for the tenant backend. Requests without a host
// session never reach the engine.
func hostAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer host-session-")
		if !ok || user == "" {
			http.Error(w, "sign in first", http.StatusUnauthorized)
			return
		}
		r = r.Clone(r.Context())
		r.Header.Del("Authorization") // the host's credential stays with the host
		r.Header.Set(engine.HeaderUserToken, "backend-token-for-"+user)
		next.ServeHTTP(w, r)
	})
}

// newRouter builds the host's router with the engine under /assistant, against backendURL.
func newRouter(backendURL string) (http.Handler, error) {
	tenant, err := demobank.Tenant(backendURL, "")
	if err != nil {
		return nil, err
	}
	tenants, err := engine.NewStaticTenants(tenant)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	rand.Read(key) // a real host reads a key shared by its replicas from its secret store
	eng, err := engine.New(engine.Config{Tenants: tenants, Model: intent.New(nil), Toolset: httptools.New(nil), SigningKey: key})
	if err != nil {
		return nil, err
	}
	r := chi.NewRouter()
	r.Use(middleware.RealIP)
	r.Get("/", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("the host's home page\n")) })
	r.Route("/assistant", func(r chi.Router) {
		r.Use(hostAuth)
		r.Mount("/", http.StripPrefix("/assistant", eng.Handler()))
	})
	return r, nil
}

func main() {
	bank := httptest.NewServer(demobank.New(nil)) // stands in for the host's own backend
	defer bank.Close()
	h, err := newRouter(bank.URL)
	if err != nil {
		log.Fatal(err)
	}
	log.Println("listening on http://127.0.0.1:8091 (the engine under /assistant/)")
	log.Fatal(http.ListenAndServe("127.0.0.1:8091", h))
}
