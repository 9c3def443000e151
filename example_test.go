package engine_test

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

func ExampleNew() {
	tenants, err := engine.NewStaticTenants(&engine.Tenant{
		Key:          "pk_example",
		Name:         "Example",
		Environments: map[string]*engine.Environment{engine.EnvProduction: {BackendURL: "https://api.example.com"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	eng, err := engine.New(engine.Config{
		Tenants:    tenants,
		Model:      &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hello ", "there.")}},
		SigningKey: bytes.Repeat([]byte("k"), 32), // use 32 random bytes, the same on every replica
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		log.Fatal(err)
	}

	req := httptest.NewRequest(http.MethodPost, "/engine", strings.NewReader(`{"transcript":"hi"}`))
	req.Header.Set("X-Engine-Key", "pk_example")
	req.Header.Set("X-Token", "the-user's-backend-token")
	req.Header.Set("X-Request-ID", "prod-1")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	eng.Handler().ServeHTTP(rec, req)

	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "event: ") {
			fmt.Println(line)
		}
	}
	// Output:
	// event: start
	// event: speak
	// event: speak
	// event: done
}

func ExampleEngine_TurnHandler() {
	var eng *engine.Engine // from engine.New

	// Mount every route under a prefix of the host's router…
	mux := http.NewServeMux()
	mux.Handle("/assistant/", http.StripPrefix("/assistant", eng.Handler()))

	// …or only the endpoints the host wants, behind its own middleware.
	mux.Handle("POST /v2/turn", requireTLS(eng.TurnHandler()))
}

func requireTLS(h http.Handler) http.Handler { return h }
