package judge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/convengine/engine/internal/judge"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testKey = "sk-judge-secret-key-5678"

const conversation = "user: send 20 dollars to Alex\nassistant: I've prepared a transfer of $20.00 to Alex. Please confirm it on your device."

// reply is one answer of the test server.
type reply struct {
	status int
	header map[string]string
	body   string
}

// completion is a chat completion whose message says content, as OpenAI answers.
func completion(content string) reply {
	c, _ := json.Marshal(content)
	return reply{200, map[string]string{"Content-Type": "application/json"}, `{"id":"chatcmpl-1","object":"chat.completion","created":1764926901,"model":"gpt-4o-mini-2024-07-18",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":` + string(c) + `,"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":120,"completion_tokens":20,"total_tokens":140},"system_fingerprint":"fp_1"}`}
}

func openAIError(status int, typ, code, message string) reply {
	return reply{status, map[string]string{"Content-Type": "application/json"},
		fmt.Sprintf(`{"error":{"message":%q,"type":%q,"param":null,"code":%q}}`, message, typ, code)}
}

// server answers the n-th request with replies[n] (the last one after that) and keeps the
// requests' bodies.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []map[string]any
	auth     []string
}

func newServer(t *testing.T, replies ...reply) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		s.mu.Lock()
		n := len(s.requests)
		s.requests = append(s.requests, body)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.mu.Unlock()
		rep := replies[min(n, len(replies)-1)]
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rep.status)
		io.WriteString(w, rep.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func newJudge(t *testing.T, url string, timeout time.Duration) *judge.Judge {
	t.Helper()
	j, err := judge.New(&judge.Options{BaseURL: url + "/v1/", APIKey: testKey, Model: "judge-model", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestVerdicts: the verdict is read from the answers OpenAI-compatible servers really give.
func TestVerdicts(t *testing.T) {
	const ok = `{"pass": true, "reason": "The assistant prepared a $20.00 transfer to Alex."}`
	cases := []struct {
		name     string
		replies  []reply
		pass     bool
		reason   string
		requests int
		format   []bool // whether each request asked for json_object
	}{
		{"json object", []reply{completion(ok)}, true, "The assistant prepared a $20.00 transfer to Alex.", 1, []bool{true}},
		{"a failing verdict", []reply{completion(`{"pass":false,"reason":"No new balance is stated."}`)}, false, "No new balance is stated.", 1, []bool{true}},
		{"fenced json", []reply{completion("```json\n" + ok + "\n```")}, true, "The assistant prepared a $20.00 transfer to Alex.", 1, []bool{true}},
		{"prose around it, response_format ignored", []reply{completion("Sure! Here is my verdict:\n\n" + ok + "\n\nLet me know if you need more {details}.")}, true, "The assistant prepared a $20.00 transfer to Alex.", 1, []bool{true}},
		{"another object before it", []reply{completion(`Criterion: {"criterion": "x"}. Verdict: {"reason": "Stated.", "pass": true}`)}, true, "Stated.", 1, []bool{true}},
		{"a think section with braces", []reply{completion(`<think>The user said {"pass": false}? No, the transcript shows $20.00.</think>` + "\n" + ok)}, true, "The assistant prepared a $20.00 transfer to Alex.", 1, []bool{true}},
		{"a rate limit, then the verdict", []reply{{429, map[string]string{"Content-Type": "application/json", "Retry-After-Ms": "5"}, `{"error":{"message":"Rate limit reached for judge-model","type":"requests","param":null,"code":"rate_limit_exceeded"}}`}, completion(ok)}, true, "The assistant prepared a $20.00 transfer to Alex.", 2, []bool{true, true}},
		{"response_format rejected", []reply{openAIError(400, "invalid_request_error", "", "'response_format' of type 'json_object' is not supported with this model."), completion(ok)}, true, "The assistant prepared a $20.00 transfer to Alex.", 2, []bool{true, false}},
		{"temperature rejected", []reply{openAIError(400, "invalid_request_error", "unsupported_value", "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported."), completion(ok)}, true, "The assistant prepared a $20.00 transfer to Alex.", 2, []bool{true, true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.replies...)
			pass, reason, err := newJudge(t, srv.URL, 0).Verdict(context.Background(), "the assistant prepares a transfer of $20.00 to Alex", conversation)
			if err != nil || pass != tc.pass || reason != tc.reason {
				t.Fatalf("Verdict: %v %q %v", pass, reason, err)
			}
			if len(srv.requests) != tc.requests {
				t.Fatalf("%d requests, want %d", len(srv.requests), tc.requests)
			}
			for i, req := range srv.requests {
				rf, _ := req["response_format"].(map[string]any)
				if (rf["type"] == "json_object") != tc.format[i] || req["model"] != "judge-model" || srv.auth[i] != "Bearer "+testKey {
					t.Errorf("request %d: %v, %s", i, req, srv.auth[i])
				}
				if temp, set := req["temperature"]; tc.name != "temperature rejected" && (temp != 0.0 || !set) {
					t.Errorf("request %d: temperature %v", i, req["temperature"])
				}
			}
			msgs, _ := srv.requests[0]["messages"].([]any)
			if len(msgs) != 2 {
				t.Fatalf("messages %v", msgs)
			}
			system := msgs[0].(map[string]any)
			user := msgs[1].(map[string]any)
			var quoted struct{ Criterion, Conversation string }
			if err := json.Unmarshal([]byte(user["content"].(string)), &quoted); err != nil || quoted.Conversation != conversation || !strings.Contains(quoted.Criterion, "$20.00") {
				t.Errorf("the user message does not quote the criterion and the conversation: %v", user["content"])
			}
			if system["role"] != "system" || !strings.Contains(system["content"].(string), `{"pass": true or false, "reason"`) {
				t.Errorf("system message %v", system)
			}
		})
	}
}

// TestFailures: what is not a verdict is an error that says what happened, never with the
// API key, even when a server echoes it.
func TestFailures(t *testing.T) {
	cases := []struct {
		name    string
		replies []reply
		is      error
		want    string
	}{
		{"prose without a verdict", []reply{completion("I think the conversation meets the criterion.")}, judge.ErrNoVerdict,
			`judge: no verdict in the answer: expected {"pass": true|false, "reason": "…"}, the model said: I think the conversation meets the criterion.`},
		{"pass is not a boolean", []reply{completion(`{"pass": "yes", "reason": "ok"}`)}, judge.ErrNoVerdict, `"pass" is "yes", not true or false`},
		{"an empty answer", []reply{completion("")}, judge.ErrNoVerdict, "the answer is empty"},
		{"a refusal", []reply{{200, map[string]string{"Content-Type": "application/json"}, `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`}}, judge.ErrNoVerdict, "the model refused: I can't help with that."},
		{"server errors", []reply{openAIError(500, "server_error", "", "The server had an error while processing your request.")}, judge.ErrServer,
			"judge: the server answered 500 Internal Server Error: The server had an error while processing your request."},
		{"a bad key echoed", []reply{openAIError(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: "+testKey+".")}, judge.ErrServer,
			"judge: the server answered 401 Unauthorized (invalid_api_key): Incorrect API key provided: <redacted>."},
		{"an error string", []reply{{404, map[string]string{"Content-Type": "application/json"}, `{"error":"model 'judge-model' not found"}`}}, judge.ErrServer,
			"judge: the server answered 404 Not Found: model 'judge-model' not found"},
		{"a FastAPI detail", []reply{{400, map[string]string{"Content-Type": "application/json"}, `{"detail":"messages: field required"}`}}, judge.ErrServer,
			"judge: the server answered 400 Bad Request: messages: field required"},
		{"a proxy's page", []reply{{502, map[string]string{"Content-Type": "text/html"}, "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"}}, judge.ErrServer,
			"judge: the server answered 502 Bad Gateway: <html> <head><title>502 Bad Gateway</title></head>"},
		{"not a completion", []reply{{200, map[string]string{"Content-Type": "text/event-stream"}, "data: {\"choices\":[]}\n\ndata: [DONE]\n\n"}}, judge.ErrServer,
			"judge: the server failed: the answer is not a chat completion: data: {"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.replies...)
			_, _, err := newJudge(t, srv.URL, 0).Verdict(context.Background(), "the answer states the new balance", conversation)
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Verdict: %v\nwant %v saying %s", err, tc.is, tc.want)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("the key is in the error: %v", err)
			}
		})
	}
}

// TestTimeout: a server that does not answer within the timeout is an error that says so.
func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	_, _, err := newJudge(t, srv.URL, 200*time.Millisecond).Verdict(context.Background(), "the answer states the new balance", conversation)
	if !errors.Is(err, judge.ErrTimeout) || err.Error() != "judge: no answer in time: the server gave no verdict within 200ms" {
		t.Fatalf("Verdict: %v", err)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("the timeout was not kept: %s", elapsed)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := newJudge(t, srv.URL, 0).Verdict(ctx, "x", conversation); !errors.Is(err, context.Canceled) || errors.Is(err, judge.ErrTimeout) {
		t.Errorf("a cancelled context: %v", err)
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []*judge.Options{{BaseURL: "localhost:8080"}, {Timeout: -time.Second}} {
		if _, err := judge.New(o); !errors.Is(err, judge.ErrOptions) {
			t.Errorf("New(%+v): %v", o, err)
		}
	}
	if _, err := judge.New(nil); err != nil {
		t.Error(err)
	}
}
