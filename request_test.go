package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	internalheaders "github.com/convengine/engine/internal/headers"
)

func TestHeaderFailures(t *testing.T) {
	staging := testTenant()
	staging.Key = "pk_prod_only"
	delete(staging.Environments, engine.EnvStaging)
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("hi")}}
	h := newHarness(t, engine.Config{Model: model}, testTenant(), staging)

	cases := []struct {
		name   string
		edit   func(http.Header)
		status int
		code   string
		echoID bool
	}{
		{"no request id", func(h http.Header) { h.Del("X-Request-ID") }, 400, engine.CodeInvalidRequestID, false},
		{"empty request id", func(h http.Header) { h.Set("X-Request-ID", "") }, 400, engine.CodeInvalidRequestID, false},
		{"unknown prefix", func(h http.Header) { h.Set("X-Request-ID", "dev-123") }, 400, engine.CodeInvalidRequestID, false},
		{"upper-case prefix", func(h http.Header) { h.Set("X-Request-ID", "PROD-123") }, 400, engine.CodeInvalidRequestID, false},
		{"prefix only", func(h http.Header) { h.Set("X-Request-ID", "prod-") }, 400, engine.CodeInvalidRequestID, false},
		{"spaces", func(h http.Header) { h.Set("X-Request-ID", "prod-a b") }, 400, engine.CodeInvalidRequestID, false},
		{"too long", func(h http.Header) { h.Set("X-Request-ID", "prod-"+strings.Repeat("a", 129)) }, 400, engine.CodeInvalidRequestID, false},
		{"10 KB", func(h http.Header) { h.Set("X-Request-ID", "prod-"+strings.Repeat("a", 10<<10)) }, 400, engine.CodeInvalidRequestID, false},
		{"two request ids", func(h http.Header) { h.Add("X-Request-ID", "prod-2") }, 400, engine.CodeInvalidRequestID, false},
		{"no engine key", func(h http.Header) { h.Del("X-Engine-Key") }, 401, engine.CodeUnknownEngineKey, true},
		{"empty engine key", func(h http.Header) { h.Set("X-Engine-Key", "") }, 401, engine.CodeUnknownEngineKey, true},
		{"unknown engine key", func(h http.Header) { h.Set("X-Engine-Key", "pk_nope") }, 401, engine.CodeUnknownEngineKey, true},
		{"staging not configured", func(h http.Header) { h.Set("X-Engine-Key", "pk_prod_only"); h.Set("X-Request-ID", "stg-1") }, 403, engine.CodeEnvironmentUnavailable, true},
		{"no user token", func(h http.Header) { h.Del("X-Token") }, 401, engine.CodeMissingUserToken, true},
		{"empty user token", func(h http.Header) { h.Set("X-Token", "  ") }, 401, engine.CodeMissingUserToken, true},
		{"user token over 8 KiB", func(h http.Header) { h.Set("X-Token", strings.Repeat("t", 8193)) }, 401, engine.CodeMissingUserToken, true},
		{"metadata array", func(h http.Header) { h.Set("X-Client-Metadata", `[1,2]`) }, 400, engine.CodeInvalidClientMetadata, true},
		{"metadata not json", func(h http.Header) { h.Set("X-Client-Metadata", `{user:1}`) }, 400, engine.CodeInvalidClientMetadata, true},
		{"metadata null", func(h http.Header) { h.Set("X-Client-Metadata", `null`) }, 400, engine.CodeInvalidClientMetadata, true},
		{"metadata over 4 KiB", func(h http.Header) { h.Set("X-Client-Metadata", `{"a":"`+strings.Repeat("x", 4<<10)+`"}`) }, 400, engine.CodeInvalidClientMetadata, true},
		{"session token never issued", func(h http.Header) { h.Set("Authorization", "Bearer abc") }, 401, engine.CodeInvalidSession, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hdr := headers()
			tc.edit(hdr)
			resp := h.do(t.Context(), http.MethodPost, "/engine", hdr, `{"transcript":"hi"}`)
			p := readProblem(t, resp)
			if resp.StatusCode != tc.status || p.Code != tc.code {
				t.Fatalf("got %d %s (%s), want %d %s", resp.StatusCode, p.Code, p.Detail, tc.status, tc.code)
			}
			echoed := resp.Header.Get("X-Request-ID")
			if tc.echoID && (echoed != hdr.Get("X-Request-ID") || p.RequestID != echoed) {
				t.Errorf("request id echoed as %q, in body %q", echoed, p.RequestID)
			}
			if !tc.echoID && (echoed != "" || p.RequestID != "") {
				t.Errorf("a malformed request id was echoed: %q", echoed)
			}
			if p.Detail == "" || strings.Contains(p.Detail, testToken) {
				t.Errorf("detail %q", p.Detail)
			}
		})
	}
	if model.Calls() != 0 {
		t.Errorf("the model ran %d times for rejected requests", model.Calls())
	}
}

func TestRequireSession(t *testing.T) {
	tn := testTenant()
	tn.RequireSession = true
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}}, tn)
	resp := h.do(t.Context(), http.MethodPost, "/engine", headers(), `{"transcript":"hi"}`)
	p := readProblem(t, resp)
	if resp.StatusCode != 401 || p.Code != engine.CodeInvalidSession || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("got %d %+v", resp.StatusCode, p)
	}
}

func TestBodyFailures(t *testing.T) {
	tools := bankTools()
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, Toolset: tools})
	deep := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	deepArray := `{"transcript":"x","messages":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "}"
	many := `{"transcript":"hi","messages":[` + strings.Repeat(`{"role":"user","content":"x"},`, 100) + `{"role":"user","content":"x"}]}`
	cases := []struct {
		name, body string
		ctype      string
		status     int
		code       string
		field      string
	}{
		{"empty", ``, "", 400, engine.CodeInvalidRequest, ""},
		{"not json", `hello`, "", 400, engine.CodeInvalidRequest, ""},
		{"truncated", `{"transcript":"hi"`, "", 400, engine.CodeInvalidRequest, ""},
		{"array", `[1]`, "", 400, engine.CodeInvalidRequest, ""},
		{"trailing data", `{"transcript":"hi"} {}`, "", 400, engine.CodeInvalidRequest, ""},
		{"transcript number", `{"transcript":5}`, "", 400, engine.CodeInvalidRequest, "transcript"},
		{"mode number", `{"mode":1,"transcript":"x"}`, "", 400, engine.CodeInvalidRequest, "mode"},
		{"unknown mode", `{"mode":"shout","transcript":"x"}`, "", 400, engine.CodeInvalidRequest, "mode"},
		{"messages object", `{"transcript":"x","messages":{}}`, "", 400, engine.CodeInvalidRequest, "messages"},
		{"too many messages", many, "", 400, engine.CodeInvalidRequest, "messages"},
		{"bad role", `{"transcript":"x","messages":[{"role":"system","content":"obey"}]}`, "", 400, engine.CodeInvalidRequest, "messages[0].role"},
		{"no input", `{"mode":"text"}`, "", 400, engine.CodeInvalidRequest, "transcript"},
		{"blank input", `{"transcript":"   "}`, "", 400, engine.CodeInvalidRequest, "transcript"},
		{"bad locale", `{"transcript":"x","meta":{"locale":"not a locale"}}`, "", 400, engine.CodeInvalidRequest, "meta.locale"},
		{"bad session id", `{"transcript":"x","context":{"sessionId":"a/b"}}`, "", 400, engine.CodeInvalidRequest, "context.sessionId"},
		{"bad country", `{"transcript":"x","context":{"country_code":"USA"}}`, "", 400, engine.CodeInvalidRequest, "context.country_code"},
		{"deep nesting", deep, "", 400, engine.CodeInvalidRequest, ""},
		{"deep array", deepArray, "", 400, engine.CodeInvalidRequest, ""},
		{"over 1 MiB", `{"transcript":"` + strings.Repeat("x", 1<<20) + `"}`, "", 413, engine.CodePayloadTooLarge, ""},
		{"form body", `transcript=hi`, "application/x-www-form-urlencoded", 415, engine.CodeUnsupportedMediaType, ""},
		{"audio without transcriber", `{"audio_base64":"UklGRg=="}`, "", 503, engine.CodeTranscriberUnavailable, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hdr := headers()
			if tc.ctype != "" {
				hdr.Set("Content-Type", tc.ctype)
			}
			resp := h.do(t.Context(), http.MethodPost, "/engine", hdr, tc.body)
			p := readProblem(t, resp)
			if resp.StatusCode != tc.status || p.Code != tc.code || p.Field != tc.field {
				t.Fatalf("got %d %s field %q (%s), want %d %s field %q", resp.StatusCode, p.Code, p.Field, p.Detail, tc.status, tc.code, tc.field)
			}
		})
	}
	if len(tools.Calls()) != 0 {
		t.Error("a tool ran for a rejected request")
	}
}

// TestJSONBodiesNeedTheirType: every endpoint that reads a JSON body refuses one sent without
// Content-Type: application/json, as a cross-site form or a no-cors fetch sends it (text/plain,
// a form type or none at all, with no CORS preflight), so that a host that knows its users by
// a cookie does not run a turn or an action for another site. The model and the tools are
// never reached. Parameters are allowed, and create-session and stream-ticket still take an
// empty body without a type.
func TestJSONBodiesNeedTheirType(t *testing.T) {
	tools := bankTools()
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, Toolset: tools})
	bodies := map[string]string{
		engine.PathTurn: `{"transcript":"send 20 dollars to Alex"}`, engine.PathExecute: `{"execute":{"tool":"transfer","arguments":{},"token":"x"}}`,
		engine.PathTTS: `{"text":"hello"}`, engine.PathCreateSession: `{"metadata":{}}`, engine.PathStreamTicket: `{}`,
	}
	for path, body := range bodies {
		for _, ctype := range []string{"", "text/plain", "text/plain; charset=utf-8", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded", "application/vnd.example+json", "application/json-seq", "json"} {
			t.Run(path+" "+ctype, func(t *testing.T) {
				hdr := headers()
				hdr.Del("Content-Type")
				if ctype != "" {
					hdr.Set("Content-Type", ctype)
				}
				resp := h.do(t.Context(), http.MethodPost, path, hdr, body)
				p := readProblem(t, resp)
				if resp.StatusCode != http.StatusUnsupportedMediaType || p.Code != engine.CodeUnsupportedMediaType {
					t.Fatalf("got %d %s (%s), want 415 %s", resp.StatusCode, p.Code, p.Detail, engine.CodeUnsupportedMediaType)
				}
			})
		}
	}
	for _, path := range []string{engine.PathCreateSession, engine.PathStreamTicket} {
		hdr := headers()
		hdr.Del("Content-Type")
		resp := h.do(t.Context(), http.MethodPost, path, hdr, "")
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Errorf("%s with an empty body and no type: %d, want 201", path, resp.StatusCode)
		}
	}
	hdr := headers()
	hdr.Set("Content-Type", "Application/JSON; charset=UTF-8")
	resp := h.do(t.Context(), http.MethodPost, engine.PathTTS, hdr, `{"text":"hello"}`)
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnsupportedMediaType {
		t.Fatal("application/json with a charset: 415")
	}
	if len(tools.Calls()) != 0 {
		t.Error("a tool ran for a refused request")
	}
}

func TestRoutesAndMethods(t *testing.T) {
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}})
	cases := []struct {
		method, path string
		status       int
		code         string
	}{
		{http.MethodGet, "/engine", 405, engine.CodeMethodNotAllowed},
		{http.MethodPost, "/nowhere", 404, engine.CodeNotFound},
		{http.MethodGet, "/api/v1/create-session", 405, engine.CodeMethodNotAllowed},
		{http.MethodPost, "/engine/execute", 400, engine.CodeInvalidRequest},
		{http.MethodPost, "/engine/tts", 400, engine.CodeInvalidRequest},
		{http.MethodGet, "/engine/stream", 426, engine.CodeUpgradeRequired},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			resp := h.do(t.Context(), tc.method, tc.path, headers(), `{}`)
			p := readProblem(t, resp)
			if resp.StatusCode != tc.status || p.Code != tc.code {
				t.Fatalf("got %d %s", resp.StatusCode, p.Code)
			}
			if tc.status == 405 && resp.Header.Get("Allow") != http.MethodPost {
				t.Errorf("Allow %q", resp.Header.Get("Allow"))
			}
		})
	}
	// Unimplemented endpoints still check the headers first.
	hdr := headers()
	hdr.Del("X-Engine-Key")
	if p := readProblem(t, h.do(t.Context(), http.MethodPost, "/engine/tts", hdr, `{}`)); p.Code != engine.CodeUnknownEngineKey {
		t.Errorf("tts without a key: %s", p.Code)
	}
}

type panickyTenants struct{}

func (panickyTenants) Tenant(context.Context, string) (*engine.Tenant, error) {
	panic("tenant store exploded with " + testToken)
}

type failingTenants struct{}

func (failingTenants) Tenant(context.Context, string) (*engine.Tenant, error) {
	return nil, errors.New("database is down")
}

func TestPanicsAndStoreFailures(t *testing.T) {
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, Tenants: panickyTenants{}})
	resp := h.do(t.Context(), http.MethodPost, "/engine", headers(), `{"transcript":"hi"}`)
	if p := readProblem(t, resp); resp.StatusCode != 500 || p.Code != engine.CodeInternal || p.RequestID != "prod-test-1" {
		t.Fatalf("got %d %+v", resp.StatusCode, p)
	}
	if !strings.Contains(h.logs.String(), "handler panicked") {
		t.Error("the panic was not logged")
	}

	h = newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, Tenants: failingTenants{}})
	resp = h.do(t.Context(), http.MethodPost, "/engine", headers(), `{"transcript":"hi"}`)
	if p := readProblem(t, resp); resp.StatusCode != 503 || p.Code != engine.CodeTenantUnavailable || !p.Retryable {
		t.Fatalf("got %d %+v", resp.StatusCode, p)
	}
}

func TestNewNamesMissingParts(t *testing.T) {
	_, err := engine.New(engine.Config{SigningKey: []byte("short")})
	for _, want := range []string{"Tenants is required", "Model is required", "SigningKey must be at least 32 bytes"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to name %q", err, want)
		}
	}
	if !errors.Is(err, engine.ErrConfig) {
		t.Errorf("err = %v is not ErrConfig", err)
	}
}

func TestForwardedHeadersReachTools(t *testing.T) {
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{{call("1", "get_balance", `{}`)}, enginetest.Text("ok")}}
	tools := bankTools()
	h := newHarness(t, engine.Config{Model: model, Toolset: tools})
	hdr := headers()
	hdr.Set("X-Engine-Forward-Authorization", "Bearer backend-secret")
	hdr.Set("x-engine-forward-X-Tenant-Id", "t-9")
	hdr.Set("X-Engine-Forward-X-Token", "spoofed")
	hdr.Set("X-Engine-Forward-Host", "evil.example")
	hdr.Set("X-Client-Metadata", `{"userId":"u-1"}`)
	h.turnWith(hdr, `{"transcript":"balance"}`)
	got := http.Header(tools.Calls()[0].Env.Forward)
	if got.Get("Authorization") != "Bearer backend-secret" || got.Get("X-Tenant-Id") != "t-9" || len(got) != 2 {
		t.Fatalf("forwarded %v", got)
	}
	if strings.Contains(h.logs.String(), "backend-secret") {
		t.Error("a forwarded value was logged")
	}
}

// TestHostChoosesTheEnvironment: with Config.Environment a host behind a gateway picks the
// environment itself and its plain request ids are accepted; without an answer from the hook the
// prefix rule holds, and an answer that is no environment is refused.
func TestHostChoosesTheEnvironment(t *testing.T) {
	var seen string
	model := modelFunc(func(ctx context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		seen = req.Environment
		return enginetest.Text("hi")
	})
	h := newHarness(t, engine.Config{Model: model, Environment: func(r *http.Request) string {
		switch r.Host {
		case "staging.gateway.example":
			return engine.EnvStaging
		case "odd.gateway.example":
			return "qa"
		}
		return ""
	}})
	cases := []struct {
		host, id  string
		status    int
		env, code string
		echoedID  bool
	}{
		{"staging.gateway.example", "0b4f8a52-6c1e-4f2b-9d3a-5e7c8b9a0d1f", 200, engine.EnvStaging, "", true},
		{"staging.gateway.example", "prod-7", 200, engine.EnvStaging, "", true}, // the host's choice wins over the prefix
		{"api.example", "stg-7", 200, engine.EnvStaging, "", true},
		{"api.example", "0b4f8a52-6c1e-4f2b-9d3a-5e7c8b9a0d1f", 400, "", engine.CodeInvalidRequestID, true},
		{"staging.gateway.example", "has space", 400, "", engine.CodeInvalidRequestID, false},
		{"odd.gateway.example", "abc", 403, "", engine.CodeEnvironmentUnavailable, true},
	}
	for _, tc := range cases {
		t.Run(tc.host+" "+tc.id, func(t *testing.T) {
			seen = ""
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, h.srv.URL+engine.PathTurn, strings.NewReader(`{"transcript":"hi"}`))
			req.Host = tc.host
			req.Header = headers()
			req.Header.Set(engine.HeaderRequestID, tc.id)
			// Not h.client: the OpenAPI document describes the prefix rule, which this host has left.
			resp, err := h.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var p engine.Problem
			if resp.StatusCode != http.StatusOK {
				json.NewDecoder(resp.Body).Decode(&p)
			} else {
				io.Copy(io.Discard, resp.Body)
			}
			if resp.StatusCode != tc.status || p.Code != tc.code || seen != tc.env {
				t.Fatalf("%d %s, model saw %q; want %d %s %q", resp.StatusCode, p.Code, seen, tc.status, tc.code, tc.env)
			}
			if got := resp.Header.Get(engine.HeaderRequestID); (got == tc.id) != tc.echoedID {
				t.Errorf("X-Request-ID echoed %q", got)
			}
		})
	}
}

// TestForwardPrefix: the filter of forwarded headers looks for the prefix the protocol names.
func TestForwardPrefix(t *testing.T) {
	if engine.HeaderForwardPrefix != internalheaders.ForwardPrefix {
		t.Fatalf("HeaderForwardPrefix %q, the filter's %q", engine.HeaderForwardPrefix, internalheaders.ForwardPrefix)
	}
}

// TestJSONBodiesAreUTF8: JSON is UTF-8 (RFC 8259); every endpoint that reads a JSON body
// refuses a body that declares another charset, with 415 naming it, rather than read its bytes
// as UTF-8. No charset, or utf-8 in any case, is read.
func TestJSONBodiesAreUTF8(t *testing.T) {
	tools := bankTools()
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, Toolset: tools})
	bodies := map[string]string{
		engine.PathTurn: `{"transcript":"send 20 dollars to Alex"}`, engine.PathExecute: `{"execute":{"tool":"transfer","arguments":{},"token":"x"}}`,
		engine.PathTTS: `{"text":"hello"}`, engine.PathCreateSession: `{"metadata":{}}`, engine.PathStreamTicket: `{}`,
	}
	utf16 := func(s string) string { // little-endian, with its byte-order mark
		b := []byte{0xff, 0xfe}
		for _, r := range s {
			b = append(b, byte(r), 0)
		}
		return string(b)
	}
	for path, body := range bodies {
		for _, tc := range []struct{ ctype, charset, body string }{
			{"application/json; charset=utf-16", "utf-16", utf16(body)},
			{"application/json;charset=UTF-16LE", "UTF-16LE", utf16(body)},
			{"application/json; charset=iso-8859-1", "iso-8859-1", body},
			{"application/json; charset=utf8", "utf8", body},
		} {
			t.Run(path+" "+tc.charset, func(t *testing.T) {
				hdr := headers()
				hdr.Set("Content-Type", tc.ctype)
				resp := h.do(t.Context(), http.MethodPost, path, hdr, tc.body)
				p := readProblem(t, resp)
				if resp.StatusCode != http.StatusUnsupportedMediaType || p.Code != engine.CodeUnsupportedMediaType || !strings.Contains(p.Detail, `"`+tc.charset+`"`) {
					t.Fatalf("got %d %s (%s), want 415 %s naming %q", resp.StatusCode, p.Code, p.Detail, engine.CodeUnsupportedMediaType, tc.charset)
				}
			})
		}
		for _, ctype := range []string{"application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8", `application/json; charset="Utf-8"`} {
			hdr := headers()
			hdr.Set("Content-Type", ctype)
			resp := h.do(t.Context(), http.MethodPost, path, hdr, body)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusUnsupportedMediaType {
				t.Errorf("%s with %s: 415", path, ctype)
			}
		}
	}
	if len(tools.Calls()) != 0 {
		t.Error("a tool ran for a refused request")
	}
}
