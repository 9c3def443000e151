package httptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/httptools"
)

// testTools are the tools of the tests' tenant.
const testTools = `[
	{"name":"get","method":"GET","path":"/items","timeout":"5s"},
	{"name":"delete","method":"DELETE","path":"/items/1"},
	{"name":"post","method":"POST","path":"/items","action":true},
	{"name":"put","method":"PUT","path":"/items/1"},
	{"name":"patch","method":"PATCH","path":"/items/1"},
	{"name":"slow","method":"GET","path":"/slow","timeout":"50ms"}
]`

// seen is what the backend received.
type seen struct {
	method, path, query, body string
	header                    http.Header
}

// newBackend starts a backend that records each request and answers with handler, and returns
// a Toolset and tool environment pointed at it.
func newBackend(t *testing.T, handler http.HandlerFunc) (*httptools.Toolset, *engine.ToolEnv, <-chan seen) {
	t.Helper()
	requests := make(chan seen, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		requests <- seen{r.Method, r.URL.Path, r.URL.RawQuery, string(body), r.Header.Clone()}
		handler(w, r)
	}))
	t.Cleanup(srv.Close)
	// The default client, whose redirect policy the tests check.
	return httptools.New(nil), envOf(tenantWith(testTools, srv.URL)), requests
}

// answer returns a handler answering status and body.
func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func TestCallEncoding(t *testing.T) {
	tests := []struct {
		tool, args          string
		method, path, query string
		body                string
	}{
		{"get", `{"account":"savings","limit":5,"all":true}`, "GET", "/items", "account=savings&all=true&limit=5", ""},
		{"get", `{"limit":5.0,"big":1e3,"price":10.50,"neg":-2}`, "GET", "/items", "big=1000&limit=5&neg=-2&price=10.5", ""},
		{"get", `{"q":"a&b=c d","skip":null}`, "GET", "/items", "q=a%26b%3Dc+d", ""},
		{"get", ``, "GET", "/items", "", ""},
		{"get", `null`, "GET", "/items", "", ""},
		{"delete", `{"reason":"lost"}`, "DELETE", "/items/1", "reason=lost", ""},
		{"post", `{"amount":20,"to":"Alex"}`, "POST", "/items", "", `{"amount":20,"to":"Alex"}`},
		{"post", ``, "POST", "/items", "", `{}`},
		{"put", `{"tags":["a","b"],"meta":{"x":1}}`, "PUT", "/items/1", "", `{"tags":["a","b"],"meta":{"x":1}}`},
		{"patch", `{"name":"x"}`, "PATCH", "/items/1", "", `{"name":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			ts, env, requests := newBackend(t, answer(200, `{"ok":true}`))
			res, err := ts.Call(context.Background(), env, engine.ToolCall{ID: "c1", Name: tt.tool, Arguments: json.RawMessage(tt.args)})
			if err != nil || res.IsError || string(res.Content) != `{"ok":true}` {
				t.Fatalf("Call = %s %v, %v", res.Content, res.IsError, err)
			}
			got := <-requests
			if got.method != tt.method || got.path != tt.path || got.query != tt.query || got.body != tt.body {
				t.Errorf("backend got %s %s ?%s %q, want %s %s ?%s %q", got.method, got.path, got.query, got.body, tt.method, tt.path, tt.query, tt.body)
			}
			wantType := ""
			if tt.body != "" {
				wantType = "application/json"
			}
			if ct := got.header.Get("Content-Type"); ct != wantType {
				t.Errorf("Content-Type %q, want %q", ct, wantType)
			}
		})
	}
}

func TestCallBadArguments(t *testing.T) {
	tests := []struct{ tool, args, want string }{
		{"get", `{"filter":{"a":1}}`, `argument \"filter\" must be a string, number or boolean`},
		{"delete", `{"ids":[1,2]}`, `argument \"ids\" must be a string, number or boolean`},
		{"get", `[1]`, "the arguments must be a JSON object"},
		{"post", `"x"`, "the arguments must be a JSON object"},
		{"post", `{"a":`, "the arguments must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			ts, env, requests := newBackend(t, answer(200, `{}`))
			res, err := ts.Call(context.Background(), env, engine.ToolCall{Name: tt.tool, Arguments: json.RawMessage(tt.args)})
			if err != nil || !res.IsError || !strings.Contains(string(res.Content), `"invalid_arguments"`) || !strings.Contains(string(res.Content), tt.want) {
				t.Errorf("Call = %s %v, %v; want an invalid_arguments result saying %s", res.Content, res.IsError, err, tt.want)
			}
			if len(requests) != 0 {
				t.Errorf("the backend was called")
			}
		})
	}
}

func TestCallHeaders(t *testing.T) {
	ts, env, requests := newBackend(t, answer(201, `{"id":"tr_1"}`))
	env.IdempotencyKey = "jti-42"
	env.Metadata = map[string]any{"country": "PT"}
	env.Forward = engine.ForwardedHeaders{
		"Authorization": {"Bearer tenant-auth"},
		"X-Tenant-Id":   {"t-9"},
		"X-Multi":       {"1", "2"},
		// The engine drops these already; the Toolset must not send them either way.
		"X-Token":           {"attacker-token"},
		"x-token":           {"attacker-token-2"},
		"X-Request-ID":      {"prod-forged"},
		"Idempotency-Key":   {"forged-key"},
		"X-Client-Metadata": {`{"admin":true}`},
		"X-Engine-Key":      {"pk_forged"},
		"Content-Type":      {"text/plain"},
	}
	if _, err := ts.Call(context.Background(), env, engine.ToolCall{Name: "post", Arguments: json.RawMessage(`{"amount":20}`)}); err != nil {
		t.Fatal(err)
	}
	h := (<-requests).header
	want := map[string][]string{
		"X-Token":           {"user-token-123"},
		"X-Request-Id":      {"prod-req-1"},
		"Idempotency-Key":   {"jti-42"},
		"Authorization":     {"Bearer tenant-auth"},
		"X-Tenant-Id":       {"t-9"},
		"X-Multi":           {"1", "2"},
		"Accept":            {"application/json"},
		"Content-Type":      {"application/json"},
		"X-Client-Metadata": nil,
		"X-Engine-Key":      nil,
	}
	for name, values := range want {
		if got := h.Values(name); !slices.Equal(got, values) {
			t.Errorf("%s: backend got %q, want %q", name, got, values)
		}
	}
}

func TestCallHeadersWithoutKey(t *testing.T) {
	ts, env, requests := newBackend(t, answer(200, `{}`))
	env.Forward = engine.ForwardedHeaders{"Idempotency-Key": {"forged-key"}, "X-Request-Id": {"prod-forged"}}
	env.RequestID = ""
	if _, err := ts.Call(context.Background(), env, engine.ToolCall{Name: "get"}); err != nil {
		t.Fatal(err)
	}
	h := (<-requests).header
	for _, name := range []string{"Idempotency-Key", "X-Request-Id"} {
		if v := h.Values(name); len(v) != 0 {
			t.Errorf("%s: backend got %q, want none: a forwarded header took the engine's place", name, v)
		}
	}
}

func TestCallResults(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		content string
		isError bool
		err     error
	}{
		{"ok", 200, `{"balance":1234.56}`, `{"balance":1234.56}`, false, nil},
		{"created", 201, "  {\"id\":\"tr_1\"}\n", `{"id":"tr_1"}`, false, nil},
		{"array", 200, `[1,2]`, `[1,2]`, false, nil},
		{"empty", 200, ``, `{}`, false, nil},
		{"no content", 204, ``, `{}`, false, nil},
		{"not JSON", 200, `<html>`, "", false, httptools.ErrBadResponse},
		{"refused", 422, `{"error":"insufficient_funds","message":"checking holds $10.00"}`, `{"error":"insufficient_funds","message":"checking holds $10.00"}`, true, nil},
		{"unauthorized", 401, `{"error":"unauthorized"}`, `{"error":"unauthorized"}`, true, nil},
		{"not found, no JSON", 404, `404 page not found`, `{"error":"http_404","message":"Not Found"}`, true, nil},
		{"bad request, empty", 400, ``, `{"error":"http_400","message":"Bad Request"}`, true, nil},
		{"too many requests", 429, `{"error":"slow_down"}`, "", false, httptools.ErrUnavailable},
		{"request timeout", 408, ``, "", false, httptools.ErrUnavailable},
		{"server error", 500, `{"error":"boom"}`, "", false, httptools.ErrUnavailable},
		{"unavailable", 503, `down`, "", false, httptools.ErrUnavailable},
		{"redirect", 302, ``, "", false, httptools.ErrBadResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, env, _ := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.status == 302 {
					w.Header().Set("Location", "http://elsewhere.invalid/steal")
				}
				answer(tt.status, tt.body)(w, r)
			})
			res, err := ts.Call(context.Background(), env, engine.ToolCall{Name: "get", Arguments: json.RawMessage(`{"q":"secret-query"}`)})
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Call = %s, %v; want an error wrapping %v", res.Content, err, tt.err)
				}
				msg := err.Error()
				if !strings.Contains(msg, "get") || !strings.Contains(msg, fmt.Sprint(tt.status)) {
					t.Errorf("error %q does not name the tool and the status", msg)
				}
				if strings.Contains(msg, "secret-query") || strings.Contains(msg, "user-token-123") {
					t.Errorf("error %q holds the query or the token", msg)
				}
				return
			}
			if err != nil || string(res.Content) != tt.content || res.IsError != tt.isError {
				t.Errorf("Call = %s IsError=%v, %v; want %s IsError=%v", res.Content, res.IsError, err, tt.content, tt.isError)
			}
		})
	}
}

func TestCallOversize(t *testing.T) {
	big := `{"pad":"` + strings.Repeat("x", 2000) + `"}`
	srv := httptest.NewServer(answer(200, big))
	defer srv.Close()
	env := envOf(tenantWith(testTools, srv.URL))
	tests := []struct {
		max    int64
		wantOK bool
	}{
		{int64(len(big)), true},
		{int64(len(big)) - 1, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.max), func(t *testing.T) {
			ts := httptools.New(&httptools.Options{Client: srv.Client(), MaxResponseBytes: tt.max})
			res, err := ts.Call(context.Background(), env, engine.ToolCall{Name: "get"})
			if tt.wantOK && (err != nil || len(res.Content) != len(big)) {
				t.Errorf("Call = %d bytes, %v; want the whole answer", len(res.Content), err)
			}
			if !tt.wantOK && !errors.Is(err, httptools.ErrBadResponse) {
				t.Errorf("Call = %d bytes, %v; want ErrBadResponse", len(res.Content), err)
			}
		})
	}
}

func TestCallDefaultMaxResponse(t *testing.T) {
	ts, env, _ := newBackend(t, func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `"`+strings.Repeat("x", httptools.DefaultMaxResponseBytes)+`"`)
	})
	if _, err := ts.Call(context.Background(), env, engine.ToolCall{Name: "get"}); !errors.Is(err, httptools.ErrBadResponse) {
		t.Errorf("Call of a %d-byte answer = %v, want ErrBadResponse", httptools.DefaultMaxResponseBytes+2, err)
	}
}

func TestCallUnknownTool(t *testing.T) {
	ts, env, requests := newBackend(t, answer(200, `{}`))
	_, err := ts.Call(context.Background(), env, engine.ToolCall{Name: "drop_tables"})
	if !errors.Is(err, engine.ErrToolNotFound) {
		t.Errorf("Call = %v, want ErrToolNotFound", err)
	}
	if len(requests) != 0 {
		t.Errorf("the backend was called")
	}
}

func TestCallNoBackend(t *testing.T) {
	for _, backend := range []string{"", "not a url", "/relative"} {
		t.Run(backend, func(t *testing.T) {
			env := envOf(tenantWith(testTools, backend))
			_, err := httptools.New(nil).Call(context.Background(), env, engine.ToolCall{Name: "get"})
			if !errors.Is(err, httptools.ErrUnavailable) {
				t.Errorf("Call = %v, want ErrUnavailable", err)
			}
		})
	}
}

func TestCallBackendPath(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"path":%q,"query":%q}`, r.URL.Path, r.URL.RawQuery)
	}))
	defer srv.Close()
	env := envOf(tenantWith(testTools, srv.URL+"/api/v2/?region=eu"))
	res, err := httptools.New(&httptools.Options{Client: srv.Client()}).Call(context.Background(), env,
		engine.ToolCall{Name: "get", Arguments: json.RawMessage(`{"limit":3}`)})
	if want := `{"path":"/api/v2/items","query":"limit=3&region=eu"}`; err != nil || string(res.Content) != want {
		t.Errorf("Call = %s, %v; want %s", res.Content, err, want)
	}
}

func TestCallNetworkError(t *testing.T) {
	srv := httptest.NewServer(answer(200, `{}`))
	srv.Close() // nothing listens there any more
	u, _ := url.Parse(srv.URL)
	u.User = url.UserPassword("admin", "hunter2")
	env := envOf(tenantWith(testTools, u.String()))
	_, err := httptools.New(nil).Call(context.Background(), env, engine.ToolCall{Name: "get", Arguments: json.RawMessage(`{"q":"secret-query"}`)})
	if !errors.Is(err, httptools.ErrUnavailable) {
		t.Fatalf("Call = %v, want ErrUnavailable", err)
	}
	for _, secret := range []string{"secret-query", "hunter2", "user-token-123"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q holds %q", err, secret)
		}
	}
}

// blockingTransport answers no request: it waits for the request's context to end.
type blockingTransport struct{}

func (blockingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	<-r.Context().Done()
	return nil, r.Context().Err()
}

func TestCallTimeout(t *testing.T) {
	tests := []struct {
		name, tool string
		ctxTimeout time.Duration
		want       time.Duration
	}{
		{"tool timeout", "get", 0, 5 * time.Second},
		{"context deadline first", "get", time.Second, time.Second},
		{"no tool timeout", "post", 3 * time.Second, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ts := httptools.New(&httptools.Options{Client: &http.Client{Transport: blockingTransport{}}})
				env := envOf(tenantWith(testTools, "http://backend.invalid"))
				ctx := context.Background()
				if tt.ctxTimeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.ctxTimeout)
					defer cancel()
				}
				start := time.Now()
				_, err := ts.Call(ctx, env, engine.ToolCall{Name: tt.tool})
				if !errors.Is(err, httptools.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Call = %v, want ErrUnavailable and DeadlineExceeded", err)
				}
				if !strings.Contains(err.Error(), "timed out") {
					t.Errorf("error %q does not say it timed out", err)
				}
				if took := time.Since(start); took != tt.want {
					t.Errorf("Call gave up after %v, want %v", took, tt.want)
				}
			})
		})
	}
}

func TestCallSlowBackend(t *testing.T) {
	ts, env, _ := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	_, err := ts.Call(context.Background(), env, engine.ToolCall{Name: "slow"})
	if !errors.Is(err, httptools.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Call = %v, want a time-out wrapping ErrUnavailable", err)
	}
}

func TestCallCancel(t *testing.T) {
	started := make(chan struct{})
	ts, env, _ := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	_, err := ts.Call(ctx, env, engine.ToolCall{Name: "post", Arguments: json.RawMessage(`{"amount":1}`)})
	if !errors.Is(err, httptools.ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Errorf("Call = %v, want ErrUnavailable and Canceled", err)
	}
}
