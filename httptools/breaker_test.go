package httptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/breaker"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
)

// TestBreakerAnswersAtOnceWhileTheBackendIsDown: a backend that does not answer costs its
// tool's time-out five times; then its breaker is open, and its tools fail at once, as not
// reached, without a request.
func TestBreakerAnswersAtOnceWhileTheBackendIsDown(t *testing.T) {
	var hits atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		select { // a backend that hangs
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	ts := httptools.New(&httptools.Options{Breakers: breaker.New(nil)})
	env := envOf(tenantWith(testTools, srv.URL))
	for i := range 10 {
		_, err := ts.Call(context.Background(), env, engine.ToolCall{Name: "slow"})
		if !errors.Is(err, httptools.ErrUnavailable) {
			t.Fatalf("call %d: %v", i, err)
		}
		if open := i >= breaker.DefaultMaxFailures; errors.Is(err, engine.ErrToolNotReached) != open {
			t.Errorf("call %d: %v (not reached: want %v)", i, err, open)
		}
	}
	if n := hits.Load(); n != breaker.DefaultMaxFailures {
		t.Errorf("the backend got %d requests, want %d", n, breaker.DefaultMaxFailures)
	}
}

// TestReadToolsRetryAConnectionOnce: a connection dropped before an answer is tried once more
// for a read tool; an action is never sent twice.
func TestReadToolsRetryAConnectionOnce(t *testing.T) {
	for _, tc := range []struct {
		tool string
		hits int32
		ok   bool
	}{{"get", 2, true}, {"post", 1, false}} {
		t.Run(tc.tool, func(t *testing.T) {
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if hits.Add(1) == 1 {
					panic(http.ErrAbortHandler) // the connection drops without an answer
				}
				io.WriteString(w, `{"ok":true}`)
			}))
			defer srv.Close()
			ts := httptools.New(nil)
			res, err := ts.Call(context.Background(), envOf(tenantWith(testTools, srv.URL)), engine.ToolCall{Name: tc.tool, Arguments: []byte(`{}`)})
			if (err == nil) != tc.ok || hits.Load() != tc.hits {
				t.Errorf("result %s, error %v, %d requests", res.Content, err, hits.Load())
			}
		})
	}
}

// TestTurnsAnswerToolUnavailableOnceTheBreakerIsOpen: through the engine, a tenant whose
// backend is down answers its turns; once the backend's breaker is open, the tool calls end
// unavailable without reaching the backend rather than after the tool's time-out.
func TestTurnsAnswerToolUnavailableOnceTheBreakerIsOpen(t *testing.T) {
	var (
		mu       sync.Mutex
		outcomes []string
		states   []string
	)
	set := breaker.New(&breaker.Options{OnChange: func(name string, _, to breaker.State) { states = append(states, string(to)) }})
	obs := &engine.Observer{ToolEnd: func(_ context.Context, e engine.ToolEvent) {
		mu.Lock()
		outcomes = append(outcomes, e.Outcome)
		mu.Unlock()
	}}
	d := enginetest.NewDemo(t, &enginetest.DemoOptions{
		Config: engine.Config{Toolset: httptools.New(&httptools.Options{Breakers: set}), Observer: obs},
		Tenant: func(t *engine.Tenant) {
			t.Tools = json.RawMessage(regexp.MustCompile(`"timeout": *"[^"]*"`).ReplaceAll(t.Tools, []byte(`"timeout":"200ms"`)))
		},
	})
	d.Backend.SetDelay(time.Minute) // down: it never answers
	for i := range 8 {
		req, _ := http.NewRequest(http.MethodPost, d.URL+engine.PathTurn, strings.NewReader(`{"transcript":"what is my balance"}`))
		req.Header.Set("X-Engine-Key", demobank.EngineKey)
		req.Header.Set("X-Token", "user-token-s3cr3t")
		req.Header.Set("X-Request-ID", "prod-down-"+string(rune('a'+i)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		turn, err := enginetest.ReadTurn(bytes.NewReader(raw))
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("turn %d: %d %v\n%s", i, resp.StatusCode, err, raw)
		}
		if turn.Spec.Speak == "" {
			t.Errorf("turn %d said nothing", i)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := "timeout,timeout,timeout,timeout,timeout,unavailable,unavailable,unavailable"
	if got := strings.Join(outcomes, ","); got != want {
		t.Errorf("tool outcomes %s\nwant          %s", got, want)
	}
	if n := len(d.Backend.Received()); n != breaker.DefaultMaxFailures {
		t.Errorf("the backend got %d requests, want %d", n, breaker.DefaultMaxFailures)
	}
	if strings.Join(states, ",") != "open" {
		t.Errorf("breaker states %v", states)
	}
}
