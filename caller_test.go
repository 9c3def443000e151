package engine_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

// TestCallerFromRequest: a host's own transport reads the protocol's headers as the engine's
// handlers do, and answers their problems with WriteProblem.
func TestCallerFromRequest(t *testing.T) {
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}})
	read := func(hdr http.Header) (*engine.Caller, *httptest.ResponseRecorder) {
		r := httptest.NewRequest(http.MethodPost, "/host/transport", nil)
		r.Header = hdr
		c, err := h.engine.CallerFromRequest(r)
		rec := httptest.NewRecorder()
		if err != nil {
			engine.WriteProblem(rec, err)
		}
		return c, rec
	}
	hdr := headers()
	hdr.Set("X-Request-Id", "stg-host-1")
	hdr.Set("X-Engine-Forward-X-Tenant-Trace", "abc")
	c, rec := read(hdr)
	if c == nil {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if c.EngineKey != testKey || c.UserToken != testToken || c.Environment != engine.EnvStaging || c.RequestID != "stg-host-1" ||
		c.Forward.Get("X-Tenant-Trace") != "abc" || c.SessionID != "" {
		t.Errorf("caller %+v", c)
	}

	for name, tt := range map[string]struct {
		del, set string
		status   int
		code     string
	}{
		"no user token":  {del: "X-Token", status: 401, code: engine.CodeMissingUserToken},
		"unknown key":    {set: "X-Engine-Key", status: 401, code: engine.CodeUnknownEngineKey},
		"bad request id": {set: "X-Request-Id", status: 400, code: engine.CodeInvalidRequestID},
		"bogus session":  {set: "Authorization", status: 401, code: engine.CodeInvalidSession},
	} {
		hdr := headers()
		hdr.Del(tt.del)
		if tt.set != "" {
			hdr.Set(tt.set, "Bearer nope")
		}
		c, rec := read(hdr)
		if c != nil || rec.Code != tt.status || rec.Header().Get("Content-Type") != "application/problem+json" ||
			!strings.Contains(rec.Body.String(), `"code":"`+tt.code+`"`) {
			t.Errorf("%s: %v %d %s", name, c, rec.Code, rec.Body)
		}
	}

	rec = httptest.NewRecorder()
	engine.WriteProblem(rec, errors.New("db password hunter2"))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), `"code":"internal"`) || strings.Contains(rec.Body.String(), "hunter2") {
		t.Errorf("a plain error: %d %s", rec.Code, rec.Body)
	}
}
