package engine_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

type downStore struct{ engine.MemoryStore }

func (*downStore) Ping(context.Context) error { return errors.New("connection refused") }

func TestHealth(t *testing.T) {
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}})
	rec := httptest.NewRecorder()
	h.engine.HealthHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != 200 || strings.TrimSpace(rec.Body.String()) != `{"status":"ok"}` {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}

	down := &downStore{}
	h = newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, Sessions: down, Replay: down, Actions: down})
	rec = httptest.NewRecorder()
	h.engine.HealthHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != 503 || !strings.Contains(string(body), `"status":"unavailable"`) || strings.Count(string(body), `"`) != 8 {
		t.Fatalf("%d %s", rec.Code, body)
	}
}
