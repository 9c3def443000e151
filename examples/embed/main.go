// Command embed shows the engine inside a host application: the host's own routes and the
// engine's on one stdlib mux, with the host's own tenant store, tool and model.
//
//	go run ./examples/embed
//	curl -N localhost:8090/assistant/engine -H 'X-Engine-Key: pk_shop' -H 'X-Token: u1' \
//	  -H 'X-Request-ID: prod-1' -H 'Content-Type: application/json' \
//	  -d '{"transcript":"where is my order"}'
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"iter"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/widgets"
)

// hostTenants is a TenantStore over the host's own configuration (here a map; a database or a
// config service works the same way).
type hostTenants map[string]*engine.Tenant

func (h hostTenants) Tenant(_ context.Context, key string) (*engine.Tenant, error) {
	if t, ok := h[key]; ok {
		return t, nil
	}
	return nil, engine.ErrUnknownTenant
}

// orders is a Toolset calling an internal service in-process: no HTTP, no tenants file.
type orders struct{}

func (orders) Tools(context.Context, *engine.ToolEnv) ([]engine.Tool, error) {
	return []engine.Tool{{
		Name: "track_order", Description: "Where the user's latest order is.", Status: "Looking up your order",
		Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
	}}, nil
}

func (orders) Call(_ context.Context, env *engine.ToolEnv, call engine.ToolCall) (engine.ToolResult, error) {
	if call.Name != "track_order" {
		return engine.ToolResult{}, engine.ErrToolNotFound
	}
	// The user's token would authorize this lookup in the host's own service.
	_ = env.UserToken.Reveal()
	return engine.ToolResult{Content: json.RawMessage(`{"order":"A-1042","status":"out for delivery","eta":"today, 14:00-16:00"}`)}, nil
}

// shopModel is a tiny Model: it asks for the order tool, then answers from its result with a
// stat widget. A real deployment plugs in package openai or intent here.
type shopModel struct{}

func (shopModel) Stream(_ context.Context, req *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	return func(yield func(engine.ModelEvent, error) bool) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role != engine.RoleTool {
			if strings.Contains(strings.ToLower(last.Content), "order") {
				yield(engine.ToolCallEvent(engine.ToolCall{ID: "1", Name: "track_order", Arguments: json.RawMessage(`{}`)}), nil)
				yield(engine.FinishEvent(engine.FinishToolCalls), nil)
				return
			}
			yield(engine.TextEvent("I can tell you where your order is."), nil)
			yield(engine.FinishEvent(engine.FinishStop), nil)
			return
		}
		var o struct{ Order, Status, ETA string }
		json.Unmarshal([]byte(last.Content), &o)
		for _, w := range []string{"Your order ", o.Order, " is ", o.Status, "."} {
			if !yield(engine.TextEvent(w), nil) {
				return
			}
		}
		stat, _ := json.Marshal(widgets.Stat{Label: "Arriving", Value: o.ETA})
		yield(engine.ToolCallEvent(engine.ToolCall{ID: "2", Name: widgets.ToolShowStat, Arguments: stat}), nil)
		yield(engine.FinishEvent(engine.FinishStop), nil)
	}
}

// newHandler is the host's whole HTTP surface, and the engine behind it, which the host shuts
// down with its server (serve).
func newHandler() (http.Handler, *engine.Engine, error) {
	key := make([]byte, 32)
	rand.Read(key) // a real host reads a key shared by its replicas from its secret store
	shop := &engine.Tenant{Key: "pk_shop", Name: "Shop", Environments: map[string]*engine.Environment{engine.EnvProduction: {}}}
	if err := shop.Validate(); err != nil {
		return nil, nil, err
	}
	eng, err := engine.New(engine.Config{
		Tenants:    hostTenants{shop.Key: shop},
		Model:      shopModel{},
		Toolset:    orders{},
		SigningKey: key,
	})
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("the host's home page\n")) })
	mux.Handle("/assistant/", http.StripPrefix("/assistant", eng.Handler()))
	// Handler serves the protocol only: the probes and the API's description go where the host
	// wants them. Health names failing parts, so keep it where only the platform reaches it.
	mux.Handle("GET /healthz", eng.HealthHandler())
	mux.HandleFunc("GET /assistant/openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		doc, err := eng.OpenAPI() // the protocol, with the host's own widget types
		if err != nil {
			http.Error(w, "the OpenAPI document could not be written", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(doc)
	})
	return mux, eng, nil
}

// serve serves h on ln until ctx ends, then shuts down gracefully: the server stops taking
// requests and lets those in flight (turns streaming) finish, the engine closes its transports'
// sockets (Shutdown), then stops its background work (Close).
func serve(ctx context.Context, ln net.Listener, h http.Handler, eng *engine.Engine) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	stop, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := errors.Join(srv.Shutdown(stop), eng.Shutdown(stop))
	eng.Close()
	return err
}

func main() {
	h, eng, err := newHandler()
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:8090")
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log.Println("listening on http://127.0.0.1:8090 (the engine under /assistant/)")
	if err := serve(ctx, ln, h, eng); err != nil {
		log.Fatal(err)
	}
}
