package engine_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

func fuzzEngine(f *testing.F, tools engine.Toolset) http.Handler {
	store, err := engine.NewStaticTenants(testTenant())
	if err != nil {
		f.Fatal(err)
	}
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{{call("1", "get_balance", `{}`)}, enginetest.Text("ok")}}
	e, err := engine.New(engine.Config{Tenants: store, Model: model, Toolset: tools, SigningKey: testSigningKey,
		Logger: enginetest.DebugLogger()})
	if err != nil {
		f.Fatal(err)
	}
	return e.Handler()
}

// checkResponse asserts what every answer must be: a stream, or a well-formed problem that is
// not a crash.
func checkResponse(t *testing.T, rec *httptest.ResponseRecorder) {
	if rec.Code == http.StatusOK {
		if !strings.HasSuffix(strings.TrimRight(rec.Body.String(), "\n"), "}") || !strings.Contains(rec.Body.String(), "event: done") {
			t.Fatalf("stream without done: %q", rec.Body.String())
		}
		return
	}
	var p engine.Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Code == "" || p.Status != rec.Code {
		t.Fatalf("status %d with body %q", rec.Code, rec.Body.String())
	}
	if rec.Code >= 500 && rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("server error %d %s: %s", rec.Code, p.Code, p.Detail)
	}
}

func FuzzTurnBody(f *testing.F) {
	h := fuzzEngine(f, bankTools())
	for _, s := range []string{`{"transcript":"hi"}`, `{"mode":"home"}`, `{"transcript":"x","messages":[{"role":"user","content":"a"}],"context":{"sessionId":"s","screen":{"a":1}},"meta":{"locale":"ar"}}`,
		`{"audio_base64":"!!"}`, `{"mode":"voice","transcript":"\u0000"}`, `[]`, `null`, `{"transcript":"x"}{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/engine", bytes.NewReader(body))
		req.Header = headers()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkResponse(t, rec)
	})
}

func FuzzHeaders(f *testing.F) {
	tools := bankTools()
	h := fuzzEngine(f, tools)
	f.Add("prod-1", testKey, "tok", `{"a":1}`, "X-Engine-Forward-Authorization", "Bearer x")
	f.Add("stg-1", testKey, "tok", `[]`, "x-engine-forward-x-token", "spoof")
	f.Add("prod-a", "pk_x", "", "{", "X-Engine-Forward-", "v")
	f.Add("prod-a", testKey, "t", "", "X-ENGINE-FORWARD-Proxy-Authorization", "v\r\nX: y")
	f.Fuzz(func(t *testing.T, id, key, token, metadata, fwdName, fwdValue string) {
		req := httptest.NewRequest(http.MethodPost, "/engine", strings.NewReader(`{"transcript":"hi"}`))
		hdr := http.Header{"X-Request-Id": {id}, "X-Engine-Key": {key}, "X-Token": {token}}
		if metadata != "" {
			hdr["X-Client-Metadata"] = []string{metadata}
		}
		hdr[fwdName] = []string{fwdValue}
		req.Header = hdr
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkResponse(t, rec)
		if id := rec.Header().Get("X-Request-ID"); id != "" && id != hdr.Get("X-Request-ID") {
			t.Fatalf("echoed %q", id)
		}
		for _, c := range tools.Calls() {
			if len(c.Env.Forward) > 32 {
				t.Fatalf("%d forwarded headers", len(c.Env.Forward))
			}
			for name, vals := range c.Env.Forward {
				for _, ctl := range []string{"X-Token", "X-Engine-Key", "X-Request-Id", "X-Client-Metadata", "Host", "Connection"} {
					if strings.EqualFold(name, ctl) {
						t.Fatalf("control header %q forwarded", name)
					}
				}
				for _, v := range vals {
					if strings.ContainsAny(name+v, "\r\n\x00") {
						t.Fatalf("CR/LF forwarded in %q", name)
					}
				}
			}
		}
	})
}
