package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/intent"
)

// noLeaks records the goroutines and open file descriptors of the process now and, when the
// test ends, checks that both are back: no goroutine, connection or file is left behind. Call it
// before starting any server, so that its check runs after their cleanups closed them. Tests
// that call it must not run in parallel.
func noLeaks(t *testing.T) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	baseline := openFDs(t)
	t.Cleanup(func() {
		goleak.VerifyNone(t, ignore)
		if baseline < 0 {
			return
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			n := openFDs(t)
			if n <= baseline {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("%d file descriptors are open after the test, %d before", n, baseline)
				return
			}
		}
	})
}

// openFDs counts the open file descriptors of the process, or returns -1 where /proc is absent.
func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Logf("not counting file descriptors: %v", err)
		return -1
	}
	return len(entries)
}

// chaosTurn is a turn run against a broken dependency, as its client saw it.
type chaosTurn struct {
	*turnResult
	errors  []struct{ Code, Message string }
	elapsed time.Duration
}

func runChaosTurn(h *harness, key, transcript string) *chaosTurn {
	h.t.Helper()
	hdr := headers()
	hdr.Set("X-Engine-Key", key)
	body, _ := json.Marshal(map[string]string{"transcript": transcript})
	start := time.Now()
	res := h.turnWith(hdr, string(body))
	ct := &chaosTurn{turnResult: res, elapsed: time.Since(start)}
	for _, ev := range res.events {
		if ev.Name == engine.EventError {
			var e struct{ Code, Message string }
			json.Unmarshal(ev.Data, &e)
			ct.errors = append(ct.errors, e)
		}
	}
	return ct
}

// chaosTenant is the demo tenant against backendURL, with short time-outs: each tool call
// 300ms, the whole turn turnTimeout.
func chaosTenant(t *testing.T, backendURL string, turnTimeout time.Duration) *engine.Tenant {
	t.Helper()
	tn, err := demobank.Tenant(backendURL, backendURL)
	if err != nil {
		t.Fatal(err)
	}
	tools := bytes.ReplaceAll(tn.Tools, []byte(`"timeout": "5s"`), []byte(`"timeout": "300ms"`))
	if bytes.Contains(tools, []byte(`"5s"`)) || bytes.Equal(tools, tn.Tools) {
		t.Fatal("the demo tools' time-outs could not be shortened")
	}
	tn.Tools = tools
	tn.Limits.TurnTimeout = engine.Duration(turnTimeout)
	return tn
}

// TestBackendFaults runs the demo tenant's balance question against backends that fail in every
// way a network service can. The turn ends with done, well within its deadline; the intent
// model's error template tells the user in plain words that the balance could not be fetched;
// and nothing is left running or open.
func TestBackendFaults(t *testing.T) {
	const huge = 2 << 20 // past httptools' 1 MiB bound
	cases := []struct {
		name    string
		backend http.HandlerFunc
	}{
		{"slow past the tool time-out", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(2 * time.Second):
				io.WriteString(w, `{"account":"checking","balance":1}`)
			case <-r.Context().Done():
			}
		}},
		{"hangs until cancelled", func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}},
		{"500", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":"database down"}`, http.StatusInternalServerError)
		}},
		{"503 with a body that is not JSON", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "<html>maintenance</html>", http.StatusServiceUnavailable)
		}},
		{"malformed JSON", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"account":"checking","balance":`)
		}},
		{"HTML instead of JSON", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><body>login</body></html>")
		}},
		{"huge response", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"pad":"`+strings.Repeat("x", huge)+`"}`)
		}},
		{"connection reset", func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				panic(err)
			}
			if tc, ok := conn.(*net.TCPConn); ok {
				tc.SetLinger(0) // close with RST
			}
			conn.Close()
		}},
		{"closes mid-body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "1000")
			io.WriteString(w, `{"account":"check`)
			http.NewResponseController(w).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}},
		{"redirects elsewhere", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/steal", http.StatusFound)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			noLeaks(t)
			var calls sync.WaitGroup
			backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				defer calls.Done()
				tc.backend(w, r)
			}))
			t.Cleanup(backend.Close)
			const turnTimeout = 3 * time.Second
			tn := chaosTenant(t, backend.URL, turnTimeout)
			h := newHarness(t, engine.Config{Model: intent.New(nil), Toolset: httptools.New(nil)}, tn)

			res := runChaosTurn(h, demobank.EngineKey, "what's my balance")
			if res.elapsed >= turnTimeout {
				t.Errorf("the turn took %v, past its deadline of %v", res.elapsed, turnTimeout)
			}
			if !strings.Contains(res.spec.Speak, "couldn't get your balance") {
				t.Errorf("the answer %q does not say the balance could not be fetched", res.spec.Speak)
			}
			if res.spec.Meta.Error != "" || len(res.errors) > 0 {
				t.Errorf("a failed tool failed the turn: %s %+v", res.spec.Meta.Error, res.errors)
			}
			if len(res.spec.Widgets) != 0 {
				t.Errorf("widgets drawn from a failed tool: %+v", res.spec.Widgets)
			}
			if !strings.Contains(h.logs.String(), "tool call failed") {
				t.Errorf("the failure is not logged:\n%s", h.logs.String())
			}
		})
	}
}

// chaosModel is an [engine.Model] made of a function.
type chaosModel func(ctx context.Context, req *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error]

func (f chaosModel) Stream(ctx context.Context, req *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	return f(ctx, req)
}

// lastToolResults returns the tool results the model is answering, if any.
func lastToolResults(req *engine.ModelRequest) []engine.Message {
	var out []engine.Message
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == engine.RoleTool; i-- {
		out = append(out, req.Messages[i])
	}
	return out
}

// TestModelFaults runs turns with models that hang, die, write broken tool calls or never stop
// calling tools. The turn ends with done before its deadline passes by much, the client is told
// what failed, and nothing is left running or open.
func TestModelFaults(t *testing.T) {
	const turnTimeout = 300 * time.Millisecond
	apology := "Sorry, something went wrong. Please try again."
	cases := []struct {
		name  string
		model chaosModel
		// code is the turn's error code, "" when the turn succeeds.
		code string
		// speak is what the answer must say.
		speak string
		// maxBackendCalls bounds what reached the backend.
		maxBackendCalls int
	}{
		{name: "hangs before the first token", code: "turn_timeout", speak: apology,
			model: func(ctx context.Context, _ *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
				return func(yield func(engine.ModelEvent, error) bool) {
					<-ctx.Done()
					yield(engine.ModelEvent{}, ctx.Err())
				}
			}},
		{name: "hangs mid-stream", code: "turn_timeout", speak: apology,
			model: func(ctx context.Context, _ *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
				return func(yield func(engine.ModelEvent, error) bool) {
					if !yield(engine.TextEvent("Your balance is "), nil) {
						return
					}
					<-ctx.Done()
					yield(engine.ModelEvent{}, ctx.Err())
				}
			}},
		{name: "dies mid-stream", code: "model_error", speak: apology,
			model: func(ctx context.Context, _ *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
				return func(yield func(engine.ModelEvent, error) bool) {
					if yield(engine.TextEvent("Your balance is "), nil) {
						yield(engine.ModelEvent{}, io.ErrUnexpectedEOF)
					}
				}
			}},
		{name: "ignores its context and streams forever", code: "turn_timeout", speak: apology,
			model: func(ctx context.Context, _ *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
				return func(yield func(engine.ModelEvent, error) bool) {
					for yield(engine.TextEvent("la "), nil) {
						time.Sleep(time.Millisecond)
					}
				}
			}},
		{name: "floods tool calls in one completion", code: "model_error", speak: apology,
			model: func(ctx context.Context, _ *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
				return func(yield func(engine.ModelEvent, error) bool) {
					for yield(engine.ToolCallEvent(engine.ToolCall{Name: "get_balance"}), nil) {
					}
				}
			}},
		{name: "tool-call arguments that are not JSON", speak: "I could not read my own request",
			model: func(ctx context.Context, req *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
				return func(yield func(engine.ModelEvent, error) bool) {
					results := lastToolResults(req)
					if len(results) == 0 {
						_ = yield(engine.ToolCallEvent(engine.ToolCall{Name: "get_balance", Arguments: json.RawMessage(`{"account":`)}), nil) &&
							yield(engine.ToolCallEvent(engine.ToolCall{Name: "transfer", Arguments: json.RawMessage(`send 100 to Alice`)}), nil) &&
							yield(engine.FinishEvent(engine.FinishToolCalls), nil)
						return
					}
					for _, m := range results {
						if !m.IsError || !strings.Contains(m.Content, "invalid_arguments") {
							yield(engine.TextEvent("unexpected result "+m.Content), nil)
							return
						}
					}
					_ = yield(engine.TextEvent("Sorry, I could not read my own request. Please ask again."), nil) &&
						yield(engine.FinishEvent(engine.FinishStop), nil)
				}
			}},
		{name: "loops on tool calls", code: "step_limit", speak: apology, maxBackendCalls: 6,
			model: func(ctx context.Context, _ *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
				return func(yield func(engine.ModelEvent, error) bool) {
					_ = yield(engine.ToolCallEvent(engine.ToolCall{Name: "get_balance", Arguments: json.RawMessage(`{}`)}), nil) &&
						yield(engine.FinishEvent(engine.FinishToolCalls), nil)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			noLeaks(t)
			bank := enginetest.NewBackend(demobank.New(nil))
			backend := httptest.NewServer(bank)
			t.Cleanup(backend.Close)
			tn := chaosTenant(t, backend.URL, turnTimeout)
			h := newHarness(t, engine.Config{Model: tc.model, Toolset: httptools.New(nil)}, tn)

			res := runChaosTurn(h, demobank.EngineKey, "what's my balance")
			if limit := turnTimeout + 2*time.Second; res.elapsed > limit {
				t.Errorf("the turn took %v, well past its deadline of %v", res.elapsed, turnTimeout)
			}
			if res.spec.Meta.Error != tc.code {
				t.Errorf("the turn's error is %q, want %q", res.spec.Meta.Error, tc.code)
			}
			if tc.code != "" && (len(res.errors) != 1 || res.errors[0].Code != tc.code || res.errors[0].Message == "") {
				t.Errorf("error events %+v, want one %s with a message", res.errors, tc.code)
			}
			if !strings.Contains(res.spec.Speak, tc.speak) {
				t.Errorf("the answer %q does not say %q", res.spec.Speak, tc.speak)
			}
			if len(res.spec.Widgets) != 0 {
				t.Errorf("widgets drawn by a broken model: %+v", res.spec.Widgets)
			}
			if n := len(bank.Received()); n > tc.maxBackendCalls {
				t.Errorf("the backend was called %d times, at most %d expected", n, tc.maxBackendCalls)
			}
		})
	}
}

// TestFaultsWhileTheClientLeaves cancels turns while their backend hangs: the engine lets go of
// the backend and of the client, and nothing is left behind.
func TestFaultsWhileTheClientLeaves(t *testing.T) {
	noLeaks(t)
	entered := make(chan struct{}, 1)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	t.Cleanup(backend.Close)
	tn := chaosTenant(t, backend.URL, 5*time.Second)
	h := newHarness(t, engine.Config{Model: intent.New(nil), Toolset: httptools.New(nil)}, tn)

	ctx, cancel := context.WithCancel(t.Context())
	hdr := headers()
	hdr.Set("X-Engine-Key", demobank.EngineKey)
	resp := h.doStreaming(ctx, http.MethodPost, "/engine", hdr, `{"transcript":"what's my balance"}`)
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the backend was never called")
	}
	cancel()
	_, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Logf("reading the cancelled stream: %v", err)
	}
}
