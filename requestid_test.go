package engine_test

import (
	"errors"
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

// TestCallerRequestIDRule: an in-process caller's RequestID follows X-Request-ID's rule. Without
// an Environment, it needs the prod- or stg- prefix, which chooses the environment, and an id
// without one is refused naming the rule; with the host's Environment, any id of the allowed
// characters reaches the backend as is, as over HTTP with Config.Environment.
func TestCallerRequestIDRule(t *testing.T) {
	d := newDemo(t, nil)
	for _, tc := range []struct {
		name, env, id string
		code          string // "" when the turn runs
	}{
		{"unprefixed, no environment", "", "host-1", engine.CodeInvalidRequestID},
		{"prod- prefix", "", "prod-host-2", ""},
		{"stg- prefix chooses staging", "", "stg-host-3", ""},
		{"unprefixed, the host's environment", engine.EnvProduction, "host-4", ""},
		{"bad characters, the host's environment", engine.EnvProduction, "host 5", engine.CodeInvalidRequestID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(d.Backend.Received())
			c := &engine.Caller{EngineKey: demobank.EngineKey, UserToken: testToken, Environment: tc.env, RequestID: tc.id}
			var failed error
			for _, err := range d.Engine.Turn(t.Context(), c, &engine.TurnInput{Transcript: "what is my balance"}) {
				if err != nil {
					failed = err
				}
			}
			if tc.code != "" {
				var p *engine.Problem
				if !errors.As(failed, &p) || p.Code != tc.code || p.Status != http.StatusBadRequest || p.RequestID != "" {
					t.Fatalf("the turn's error is %v, want a 400 %s problem", failed, tc.code)
				}
				if tc.env == "" && !strings.Contains(p.Detail, "prod- or stg-") {
					t.Errorf("the problem does not name the rule: %q", p.Detail)
				}
				if len(d.Backend.Received()) != before {
					t.Error("a refused turn reached the backend")
				}
				return
			}
			if failed != nil {
				t.Fatal(failed)
			}
			received := d.Backend.Received()
			if len(received) == before || received[len(received)-1].Get("X-Request-Id") != tc.id {
				t.Fatalf("the backend did not get request id %q", tc.id)
			}
		})
	}
}
