package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/openai"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testKey = "sk-test-secret-key-1234"

// newModel returns a model of the replay server with fast retries.
func newModel(t testing.TB, baseURL string, opts *openai.Options) *openai.Model {
	t.Helper()
	o := openai.Options{}
	if opts != nil {
		o = *opts
	}
	o.BaseURL = baseURL
	if o.APIKey == "" {
		o.APIKey = testKey
	}
	if o.RetryDelay == 0 {
		o.RetryDelay = time.Millisecond
	}
	m, err := openai.NewModel(&o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sequence routes the n-th attempt of a request to names[n], and later ones to the last name.
func sequence(names ...string) func(*enginetest.ReplayRequest) string {
	return func(r *enginetest.ReplayRequest) string { return names[min(r.Attempt, len(names)-1)] }
}

type result struct {
	text   string
	deltas int
	calls  []engine.ToolCall
	finish *engine.ModelEvent
	err    error
	late   bool // an event after the error or the finish
}

func collect(seq iter.Seq2[engine.ModelEvent, error]) result {
	var r result
	for ev, err := range seq {
		if r.err != nil || r.finish != nil {
			r.late = true
		}
		if err != nil {
			r.err = err
			continue
		}
		switch ev.Kind {
		case engine.EventText:
			r.text += ev.Text
			r.deltas++
		case engine.EventToolCall:
			r.calls = append(r.calls, ev.ToolCall)
		case engine.EventFinish:
			r.finish = &ev
		}
	}
	return r
}

func balanceRequest() *engine.ModelRequest {
	return &engine.ModelRequest{
		Tenant: &engine.Tenant{Key: "pk_test"}, Environment: engine.EnvProduction,
		System: "You are a bank's assistant.", Context: "About this turn:\n- Answer in en.\n",
		Messages: []engine.Message{{Role: engine.RoleUser, Content: "what is my balance"}},
		Tools: []engine.ToolSpec{
			{Name: "get_balance", Description: "Get the balance.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
		},
	}
}

func calls(cs []engine.ToolCall) string {
	var b []string
	for _, c := range cs {
		b = append(b, c.Name+" "+string(c.Arguments))
	}
	return strings.Join(b, "; ")
}

func TestStreamFixtures(t *testing.T) {
	cases := []struct {
		name     string
		fixtures []string
		opts     *openai.Options
		text     string
		calls    string
		finish   engine.FinishReason
		usage    engine.Usage
		err      string // part of the error yielded; "" for none
		requests int
	}{
		{name: "plain text", fixtures: []string{"text"}, text: "Hello! How can I help you today?",
			finish: engine.FinishStop, usage: engine.Usage{Reported: true, InputTokens: 1212, OutputTokens: 9}, requests: 1},
		{name: "usage with cached tokens", fixtures: []string{"usage_cached"}, text: "Your balance is ready.",
			finish: engine.FinishStop, usage: engine.Usage{Reported: true, InputTokens: 2006, OutputTokens: 5, CachedTokens: 1920}, requests: 1},
		{name: "single tool call", fixtures: []string{"tool_call"}, calls: "get_balance {}",
			finish: engine.FinishToolCalls, usage: engine.Usage{Reported: true, InputTokens: 1231, OutputTokens: 4, CachedTokens: 1152}, requests: 1},
		{name: "parallel tool calls", fixtures: []string{"parallel_tool_calls"},
			calls: `get_balance {"account":"checking"}; get_savings_goal {}`, finish: engine.FinishToolCalls,
			usage: engine.Usage{Reported: true, InputTokens: 1240, OutputTokens: 11, CachedTokens: 1152}, requests: 1},
		{name: "text then a tool call", fixtures: []string{"text_then_tool_call"}, text: "Let me look at your recent transactions.",
			calls: `list_transactions {"limit":5}`, finish: engine.FinishToolCalls,
			usage: engine.Usage{Reported: true, InputTokens: 1236, OutputTokens: 13, CachedTokens: 1152}, requests: 1},
		{name: "refusal", fixtures: []string{"refusal"}, finish: engine.FinishRefused,
			usage: engine.Usage{Reported: true, InputTokens: 1219, OutputTokens: 11}, requests: 1},
		{name: "content filter", fixtures: []string{"content_filter"}, finish: engine.FinishRefused,
			usage: engine.Usage{Reported: true, InputTokens: 1225}, requests: 1},
		{name: "429 then success", fixtures: []string{"rate_limited", "text"}, text: "Hello! How can I help you today?",
			finish: engine.FinishStop, usage: engine.Usage{Reported: true, InputTokens: 1212, OutputTokens: 9}, requests: 2},
		{name: "500 then success", fixtures: []string{"server_error", "text"}, text: "Hello! How can I help you today?",
			finish: engine.FinishStop, usage: engine.Usage{Reported: true, InputTokens: 1212, OutputTokens: 9}, requests: 2},
		{name: "cut before any text, then success", fixtures: []string{"cut_before_text", "text"}, text: "Hello! How can I help you today?",
			finish: engine.FinishStop, usage: engine.Usage{Reported: true, InputTokens: 1212, OutputTokens: 9}, requests: 2},
		{name: "429 until the retries run out", fixtures: []string{"rate_limited"}, err: "429 Too Many Requests (rate_limit_exceeded)", requests: 3},
		{name: "429 without retries", fixtures: []string{"rate_limited"}, opts: &openai.Options{MaxRetries: -1},
			err: "429 Too Many Requests", requests: 1},
		{name: "500 mid-stream", fixtures: []string{"error_midstream", "text"}, text: "Your balance is", err: "error in the stream (server_error)", requests: 1},
		{name: "connection cut mid-stream", fixtures: []string{"cut_midstream", "text"}, text: "Your Everyday Checking balance", err: "chat completion", requests: 1},
		{name: "invalid key", fixtures: []string{"invalid_key", "text"}, err: "401 Unauthorized (invalid_api_key)", requests: 1},
		{name: "usage as a running total counts once", fixtures: []string{"shape_cumulative_usage_1"}, calls: "get_balance {}",
			finish: engine.FinishToolCalls, usage: engine.Usage{Reported: true, InputTokens: 1226, OutputTokens: 3}, requests: 1},
		{name: "usage under x_groq", fixtures: []string{"shape_groq_usage_1"}, calls: "get_balance {}",
			finish: engine.FinishToolCalls, usage: engine.Usage{Reported: true, InputTokens: 1244, OutputTokens: 15}, requests: 1},
		{name: "usage after the finish", fixtures: []string{"shape_openrouter_1"}, calls: "get_balance {}",
			finish: engine.FinishToolCalls, usage: engine.Usage{Reported: true, InputTokens: 1697, OutputTokens: 52}, requests: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), sequence(tc.fixtures...))
			m := newModel(t, srv.URL, tc.opts)
			r := collect(m.Stream(context.Background(), balanceRequest()))
			if r.text != tc.text || calls(r.calls) != tc.calls {
				t.Errorf("text %q calls %q, want %q and %q", r.text, calls(r.calls), tc.text, tc.calls)
			}
			if tc.text != "" && r.deltas < 3 {
				t.Errorf("the text came in %d deltas, not as streamed", r.deltas)
			}
			if r.late {
				t.Error("events after the finish or the error")
			}
			switch {
			case tc.err != "":
				if r.err == nil || !strings.Contains(r.err.Error(), tc.err) || r.finish != nil {
					t.Errorf("error %v (finish %v), want one with %q", r.err, r.finish, tc.err)
				}
			case r.err != nil:
				t.Errorf("error %v", r.err)
			case r.finish == nil || r.finish.Finish != tc.finish || r.finish.Usage != tc.usage:
				t.Errorf("finish %+v, want %s with %+v", r.finish, tc.finish, tc.usage)
			}
			if r.err != nil && strings.Contains(r.err.Error(), testKey) {
				t.Errorf("the error shows the API key: %v", r.err)
			}
			if n := len(srv.Requests()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}
}

func TestStreamErrorsAreTyped(t *testing.T) {
	srv := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), sequence("invalid_key"))
	r := collect(newModel(t, srv.URL, nil).Stream(context.Background(), balanceRequest()))
	var apiErr *openai.APIError
	if !errors.As(r.err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Code != "invalid_api_key" || apiErr.Type != "invalid_request_error" {
		t.Fatalf("error %v", r.err)
	}

	srv = enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), sequence("cut_midstream"))
	r = collect(newModel(t, srv.URL, nil).Stream(context.Background(), balanceRequest()))
	if r.err == nil || r.text == "" {
		t.Fatalf("text %q, error %v", r.text, r.err)
	}
}

// TestRetryNeverWaitsPastTheDeadline: a Retry-After longer than the time left fails at once.
func TestRetryNeverWaitsPastTheDeadline(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		w.Header().Set("Retry-After", "30")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r := collect(newModel(t, srv.URL+"/v1", nil).Stream(ctx, balanceRequest()))
	var apiErr *openai.APIError
	if !errors.As(r.err, &apiErr) || apiErr.StatusCode != 429 || ctx.Err() != nil || hits != 1 {
		t.Fatalf("error %v after %d requests (ctx %v)", r.err, hits, ctx.Err())
	}
}

// TestRequestTimeoutRetries: an attempt that gets no answer within RequestTimeout is abandoned
// and sent again.
func TestRequestTimeoutRetries(t *testing.T) {
	fixtures := enginetest.OpenAIFixtures()
	replay := enginetest.NewReplayServer(t, fixtures, sequence("text"))
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		if hits == 1 {
			io.Copy(io.Discard, r.Body) // the server notices a closed connection once the body is read
			<-r.Context().Done()        // never answers
			return
		}
		proxy(w, r, replay.URL)
	}))
	defer srv.Close()
	m := newModel(t, srv.URL+"/v1", &openai.Options{RequestTimeout: 200 * time.Millisecond})
	r := collect(m.Stream(context.Background(), balanceRequest()))
	if r.err != nil || r.text != "Hello! How can I help you today?" || hits != 2 {
		t.Fatalf("text %q, error %v, %d requests", r.text, r.err, hits)
	}
}

// proxy forwards r to the replay server at base and copies its answer.
func proxy(w http.ResponseWriter, r *http.Request, base string) {
	req, _ := http.NewRequestWithContext(r.Context(), r.Method, strings.TrimSuffix(base, "/v1/")+r.URL.Path, r.Body)
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		w.Write(buf[:n])
		w.(http.Flusher).Flush()
		if err != nil {
			return
		}
	}
}

// TestCancelClosesTheStream: cancelling the context, or leaving the range, closes the HTTP
// stream at once; the server sees its connection go.
func TestCancelClosesTheStream(t *testing.T) {
	for _, how := range []string{"cancel", "break", "cancel and break"} {
		t.Run(how, func(t *testing.T) {
			gone := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body) // the server notices a closed connection once the body is read
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write([]byte(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}` + "\n\n"))
				w.(http.Flusher).Flush()
				<-r.Context().Done()
				close(gone)
			}))
			defer srv.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var (
				text string
				err  error
			)
			for ev, e := range newModel(t, srv.URL+"/v1", nil).Stream(ctx, balanceRequest()) {
				if e != nil {
					err = e
					continue
				}
				text += ev.Text
				switch how {
				case "break":
				case "cancel and break":
					cancel()
				default:
					cancel()
					continue
				}
				break // the model must not yield again, even with its context cancelled
			}
			if text != "Hello" || (how == "cancel" && !errors.Is(err, context.Canceled)) || (how != "cancel" && err != nil) {
				t.Fatalf("text %q, error %v", text, err)
			}
			select {
			case <-gone:
			case <-time.After(5 * time.Second):
				t.Fatal("the server still holds the stream")
			}
		})
	}
}

// TestEnvironmentIsIgnored: the variables the official SDK reads by itself change nothing.
func TestEnvironmentIsIgnored(t *testing.T) {
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request went to OPENAI_BASE_URL: %s", r.URL)
		http.Error(w, "wrong server", http.StatusTeapot)
	}))
	defer elsewhere.Close()
	t.Setenv("OPENAI_BASE_URL", elsewhere.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	t.Setenv("OPENAI_ORG_ID", "org-env")
	t.Setenv("OPENAI_PROJECT_ID", "proj-env")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Env: yes")

	srv := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), sequence("text"))
	r := collect(newModel(t, srv.URL, nil).Stream(context.Background(), balanceRequest()))
	if r.err != nil {
		t.Fatal(r.err)
	}
	h := srv.Requests()[0].Header
	if h.Get("Authorization") != "Bearer "+testKey || h.Get("OpenAI-Organization") != "" || h.Get("OpenAI-Project") != "" || h.Get("X-Env") != "" {
		t.Errorf("headers %v", h)
	}

	// Without a base URL the default one is used, not the environment's; without a key none is sent.
	var seen *http.Request
	m, err := openai.NewModel(&openai.Options{HTTPClient: &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		seen = r
		return nil, errors.New("offline")
	})}, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	r = collect(m.Stream(context.Background(), balanceRequest()))
	if seen == nil || seen.URL.String() != "https://api.openai.com/v1/chat/completions" || seen.Header.Get("Authorization") != "" || r.err == nil {
		t.Fatalf("request %v, error %v", seen, r.err)
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestNewModelRejectsBadOptions(t *testing.T) {
	for _, o := range []openai.Options{
		{BaseURL: "localhost:11434"},
		{BaseURL: "ftp://example.com/v1"},
		{RequestTimeout: -1},
		{SpeechFormat: "mp3"},
	} {
		if _, err := openai.NewModel(&o); !errors.Is(err, openai.ErrOptions) {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// TestMalformedToolArguments: arguments that never become a JSON object break the completion
// with ErrBadToolCall, which the engine answers with its model error and an apology; arguments
// that are "" mean none.
func TestMalformedToolArguments(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"transfer","arguments":"{\"amount\": 20"}},{"index":1,"id":"call_b","type":"function","function":{"name":"get_balance","arguments":""}}]},"finish_reason":null}]}`+"\n\n"+
			`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	r := collect(newModel(t, srv.URL+"/v1", nil).Stream(context.Background(), balanceRequest()))
	if !errors.Is(r.err, openai.ErrBadToolCall) || len(r.calls) != 0 || r.finish != nil {
		t.Fatalf("calls %s, finish %v, error %v", calls(r.calls), r.finish, r.err)
	}
}
