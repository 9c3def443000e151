package engine_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
)

// TestGeneratedRequestIDsCarryTheEnvironment: an in-process turn without a RequestID, and a
// request identified by Config.Identify without an X-Request-ID, reach the backend with an id
// the engine made, prefixed prod- or stg- as the environment is, as a client's would be.
func TestGeneratedRequestIDsCarryTheEnvironment(t *testing.T) {
	identify := func(r *http.Request) (engine.Identity, error) {
		return engine.Identity{EngineKey: demobank.EngineKey, UserToken: testToken, Environment: r.Header.Get("X-Host-Env")}, nil
	}
	d := newDemo(t, &enginetest.DemoOptions{Config: engine.Config{Identify: identify}})
	lastID := func() string {
		received := d.Backend.Received()
		if len(received) == 0 {
			t.Fatal("the backend was not called")
		}
		return received[len(received)-1].Get("X-Request-Id")
	}
	for env, prefix := range map[string]string{"": "prod-", engine.EnvProduction: "prod-", engine.EnvStaging: "stg-"} {
		t.Run("in-process "+env, func(t *testing.T) {
			c := &engine.Caller{EngineKey: demobank.EngineKey, UserToken: testToken, Environment: env}
			for _, err := range d.Engine.Turn(t.Context(), c, &engine.TurnInput{Transcript: "what is my balance"}) {
				if err != nil {
					t.Fatal(err)
				}
			}
			if id := lastID(); !strings.HasPrefix(id, prefix) || len(id) != len(prefix)+36 {
				t.Errorf("the backend got request id %q, want %s and a UUID", id, prefix)
			}
		})
		t.Run("identified "+env, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, d.URL+"/engine", strings.NewReader(`{"transcript":"what is my balance"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Host-Env", env)
			resp, err := d.Server.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body) // the whole turn
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "event: done") {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if id := lastID(); !strings.HasPrefix(id, prefix) || len(id) != len(prefix)+36 {
				t.Errorf("the backend got request id %q, want %s and a UUID", id, prefix)
			}
		})
	}
}
