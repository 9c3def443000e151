// Command chi mounts the engine on a chi router, behind the host's own authentication: the
// host's middleware decides who may talk to the assistant before the engine sees the request,
// and Config.Identify hands the engine the tenant and the user's backend token from what the
// middleware found. The request is not rewritten: the engine reads no X-Engine-Key or X-Token.
//
//	go run ./examples/chi
//	curl -N localhost:8091/assistant/engine -b 'host_session=alice' \
//	  -H 'Content-Type: application/json' -d '{"transcript":"what is my balance"}'
package main

import (
	"context"
	"crypto/rand"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/intent"
)

// userKey is where the host's middleware leaves the signed-in user in the request's context.
type userKey struct{}

// hostAuth is the host's middleware: it accepts the host's own session cookie (a real host
// verifies it against its session store) and refuses requests without one, which never
// reach the engine.
func hostAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("host_session")
		if err != nil || c.Value == "" {
			http.Error(w, "sign in first", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, c.Value)))
	})
}

// identify tells the engine who the request comes from: the demo tenant, and the backend
// token the host keeps for its signed-in user.
func identify(r *http.Request) (engine.Identity, error) {
	user, _ := r.Context().Value(userKey{}).(string)
	if user == "" {
		return engine.Identity{}, engine.NewProblem(http.StatusUnauthorized, "sign_in_required", "sign in first")
	}
	return engine.Identity{EngineKey: demobank.EngineKey, UserToken: "backend-token-for-" + user}, nil
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
	eng, err := engine.New(engine.Config{Tenants: tenants, Model: intent.New(nil), Toolset: httptools.New(nil),
		SigningKey: key, Identify: identify})
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
