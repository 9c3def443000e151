package enginetest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/httptools"
)

// benchEngine serves a tenant whose model is m and whose backend, when there is one, is a
// BenchBackend.
func benchEngine(t *testing.T, m *enginetest.BenchModel, backend string) http.Handler {
	t.Helper()
	tenant := &engine.Tenant{Key: "pk_bench", Name: "Bench", Environments: map[string]*engine.Environment{
		engine.EnvProduction: {BackendURL: backend}}}
	if backend != "" {
		tenant.Tools = json.RawMessage(enginetest.BenchTools)
	}
	if err := tenant.Validate(); err != nil {
		t.Fatal(err)
	}
	tenants, err := engine.NewStaticTenants(tenant)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Config{Tenants: tenants, Model: m, Toolset: httptools.New(nil), SigningKey: bytes.Repeat([]byte{1}, 32),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e.Handler()
}

func turn(t *testing.T, h http.Handler) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, engine.PathTurn, strings.NewReader(`{"transcript":"go"}`))
	req.Header = http.Header{"X-Engine-Key": {"pk_bench"}, "X-Token": {"u"}, "X-Request-Id": {"prod-1"}, "Content-Type": {"application/json"}}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
	return rec
}

// TestBareSSEWritesTheEnginesBytes checks that the bare handler's stream is the engine's, but
// for the turn's ids: the limit it sets is for the same work on the wire.
func TestBareSSEWritesTheEnginesBytes(t *testing.T) {
	for _, c := range []struct{ deltas, widgets int }{{0, 2}, {3, 0}, {5, 3}} {
		eng := turn(t, benchEngine(t, &enginetest.BenchModel{Deltas: c.deltas, Widgets: c.widgets}, ""))
		bare := turn(t, enginetest.BareSSEHandler(c.deltas, c.widgets))
		body := eng.Body.String()
		var start struct{ TurnID, ConversationID string }
		first := strings.SplitN(body, "\n", 4)[2]
		if err := json.Unmarshal([]byte(strings.TrimPrefix(first, "data: ")), &start); err != nil || start.TurnID == "" {
			t.Fatalf("start event %q: %v", first, err)
		}
		body = strings.ReplaceAll(body, start.TurnID, "00000000-0000-4000-8000-000000000000")
		body = strings.ReplaceAll(body, start.ConversationID, "00000000-0000-4000-8000-000000000001")
		if body != bare.Body.String() {
			t.Errorf("%d deltas, %d widgets:\nengine %s\nbare   %s", c.deltas, c.widgets, body, bare.Body.String())
		}
		for _, h := range []string{"Content-Type", "Cache-Control", "X-Accel-Buffering", "X-Request-Id"} {
			if eng.Header().Get(h) != bare.Header().Get(h) {
				t.Errorf("%s: engine %q, bare %q", h, eng.Header().Get(h), bare.Header().Get(h))
			}
		}
	}
}

func TestBenchModelCallsItsTool(t *testing.T) {
	backend := httptest.NewServer(enginetest.BenchBackend{Latency: time.Millisecond})
	defer backend.Close()
	rec := turn(t, benchEngine(t, &enginetest.BenchModel{ToolCalls: 3, Deltas: 2, Widgets: 1}, backend.URL))
	body := rec.Body.String()
	if n := strings.Count(body, "event: status"); n != 3 || strings.Count(body, "event: speak") != 2 ||
		strings.Count(body, "event: widget") != 1 || strings.Contains(body, "event: error") {
		t.Fatalf("stream:\n%s", body)
	}
}

// TestBareSSEPacesItsDeltas checks, on a fake clock, that the bare handler waits the model's
// delays.
func TestBareSSEPacesItsDeltas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &enginetest.BareSSE{FirstTokenDelay: 30 * time.Millisecond, TokenInterval: 10 * time.Millisecond, Deltas: 3}
		start := time.Now()
		rec := turn(t, h)
		if took := time.Since(start); took != 50*time.Millisecond {
			t.Errorf("the stream took %s of the fake clock, want 50ms", took)
		}
		if strings.Count(rec.Body.String(), "event: speak") != 3 {
			t.Fatalf("stream:\n%s", rec.Body.String())
		}
	})
}
