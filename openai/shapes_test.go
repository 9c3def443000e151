package openai_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/openai"
	"github.com/convengine/engine/widgets"
)

// failures are what a failing shape must give: how many requests the model sends (a server's
// failure is retried twice, the request's fault never), what the log line says, and what the
// server said that must not reach a log line (it may quote the prompt).
var failures = map[string]struct {
	attempts           int
	logged, serverSaid string
}{
	"sglang_context_error": {1, "error in the stream (400 BadRequestError)", "longer than the model"},
	"llamacpp_error_field": {1, "error in the stream (400 invalid_request_error)", "exceeds the available context"},
	"stream_server_error":  {3, "error in the stream (server_error)", "context window is full"},
	"error_string":         {1, "404 Not Found: the base URL or the model name is likely wrong", "llama3.2:latest"},
	"fastapi_detail":       {1, "400 Bad Request", "max_completion_tokens"},
	"vllm_object_error":    {1, "400 Bad Request (400)", "enable-auto-tool-choice"},
	"nginx_502":            {3, "502 Bad Gateway", "<center>"},
}

// TestServerShapes runs the demo bank's balance turn through the engine against each way
// OpenAI-compatible servers are known to stream: the user hears the balance sentence and sees
// its widget after the balance tool ran, or, where the server really failed, gets the model
// error and an apology; nothing of a reasoning or of a tool call's markup is spoken. The model
// also passes enginetest.TestModel against each shape that does not fail.
func TestServerShapes(t *testing.T) {
	shapes := enginetest.ServerShapes()
	if len(shapes) == 0 {
		t.Fatal("no server shapes")
	}
	for _, shape := range shapes {
		t.Run(shape.Name, func(t *testing.T) {
			replay := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), enginetest.ShapeRoute(shape))
			d := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: engine.Config{Model: newModel(t, replay.URL, nil)}})
			req := httptest.NewRequest(http.MethodPost, engine.PathTurn, strings.NewReader(`{"transcript":"What's my balance?"}`))
			req.Header = d.Headers()
			rec := httptest.NewRecorder()
			d.Handler.ServeHTTP(rec, req)
			turn, err := enginetest.ReadTurn(rec.Body)
			if err != nil {
				t.Fatalf("%v: %d %s", err, rec.Code, rec.Body)
			}
			for _, tag := range []string{"<think>", "</think>", "<tool_call>", "</tool_call>", "reasoning"} {
				if strings.Contains(turn.Speak, tag) {
					t.Errorf("spoke %q", turn.Speak)
				}
			}
			if shape.Fails {
				if turn.Spec.Meta.Error != engine.CodeModelError || turn.Spec.Speak == "" || len(turn.Spec.Widgets) != 0 {
					t.Errorf("spec %+v, want a model error and an apology", turn.Spec)
				}
				want := failures[shape.Name]
				if n := len(replay.Requests()); n != want.attempts {
					t.Errorf("%d requests, want %d", n, want.attempts)
				}
				logs := d.Logs.String()
				if !strings.Contains(logs, want.logged) || strings.Contains(logs, want.serverSaid) {
					t.Errorf("the log line does not say %q, or quotes the server's %q:\n%s", want.logged, want.serverSaid, logs)
				}
				return
			}
			var stat *widgets.Stat
			for _, w := range turn.Spec.Widgets {
				if s, ok := w.(widgets.Stat); ok {
					stat = &s
				}
			}
			if turn.Spec.Meta.Error != "" || turn.Speak != "Your Everyday Checking balance is $1,234.56." ||
				turn.Spec.Speak != turn.Speak || stat == nil || stat.Value != "$1,234.56" {
				t.Errorf("events %s, spec %+v", turn.Names(), turn.Spec)
			}
			if len(d.Backend.Received()) == 0 {
				t.Error("the balance tool did not run")
			}
			t.Run("conformance", func(t *testing.T) {
				enginetest.TestModel(t, newModel(t, replay.URL, nil), d.Tenant)
			})
		})
	}
}

// TestBrokenStreams: a stream that is really broken ends the turn cleanly, with the model error
// and a spoken apology, however it breaks.
func TestBrokenStreams(t *testing.T) {
	text := func(s string) string {
		return `data: {"choices":[{"index":0,"delta":{"content":` + strconv.Quote(s) + `},"finish_reason":null}]}` + "\n\n"
	}
	var flood strings.Builder
	for i := range 200 {
		fmt.Fprintf(&flood, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"id":"c%d","type":"function","function":{"name":"get_balance","arguments":"{}"}}]},"finish_reason":null}]}`+"\n\n", i, i)
	}
	garbage := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range garbage {
		garbage[i] = byte(rng.UintN(256))
	}
	for _, tc := range []struct {
		name string
		body string
		cut  bool
	}{
		{"cut mid-string", text("Your") + text(" balance") + `data: {"choices":[{"index":0,"delta":{"content":" is $1,2`, true},
		{"a flood of tool calls", flood.String() + "data: [DONE]\n\n", false},
		{"binary garbage", "data: " + string(garbage) + "\n\n", false},
		{"a 10 MB line", "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + strings.Repeat("a", 10<<20) + "\"}}]}\n\n", false},
		{"arguments that never become JSON", `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"get_balance","arguments":"{\"account\":"}}]},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, tc.body)
				if tc.cut {
					w.(http.Flusher).Flush()
					panic(http.ErrAbortHandler)
				}
			}))
			defer srv.Close()
			d := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: engine.Config{Model: newModel(t, srv.URL+"/v1", &openai.Options{MaxRetries: -1})}})
			req := httptest.NewRequest(http.MethodPost, engine.PathTurn, strings.NewReader(`{"transcript":"What's my balance?"}`))
			req.Header = d.Headers()
			rec := httptest.NewRecorder()
			d.Handler.ServeHTTP(rec, req)
			turn, err := enginetest.ReadTurn(rec.Body)
			if err != nil {
				t.Fatal(err)
			}
			if turn.Spec.Meta.Error != engine.CodeModelError || !strings.HasSuffix(turn.Spec.Speak, "Sorry, something went wrong. Please try again.") ||
				turn.Speak != turn.Spec.Speak || len(turn.Spec.Widgets) != 0 {
				t.Errorf("events %s, spec %+v", turn.Names(), turn.Spec)
			}
			if len(d.Backend.Received()) != 0 {
				t.Error("a tool ran")
			}
		})
	}
}
