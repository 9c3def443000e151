package modeltape_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/internal/modeltape"
	"github.com/convengine/engine/openai"
	"github.com/convengine/engine/widgets"
)

const testKey = "sk-test-secret-key-1234"

// offline is where a replaying model sends its requests: a host that does not exist, so that
// a request the player let through would fail.
const offline = "http://model.invalid/v1/"

func newModel(t testing.TB, baseURL string, rt http.RoundTripper) *openai.Model {
	t.Helper()
	m, err := openai.NewModel(&openai.Options{
		BaseURL: baseURL, APIKey: testKey, RetryDelay: time.Millisecond, Organization: "org-s3cr3t-organization",
		HTTPClient: &http.Client{Transport: rt},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// events renders what a model streamed, one line per event, the error last.
func events(seq iter.Seq2[engine.ModelEvent, error]) []string {
	var out []string
	for ev, err := range seq {
		if err != nil {
			out = append(out, "error "+err.Error())
			continue
		}
		b, _ := json.Marshal(ev)
		out = append(out, string(b))
	}
	return out
}

func request(said string, more ...engine.Message) *engine.ModelRequest {
	return &engine.ModelRequest{
		Tenant: &engine.Tenant{Key: "pk_test"}, Environment: engine.EnvProduction,
		System: "You are a bank's assistant.", Context: "About this turn:\n- Answer in en.\n",
		Messages: append([]engine.Message{{Role: engine.RoleUser, Content: said}}, more...),
		Tools: []engine.ToolSpec{
			{Name: "get_balance", Description: "Get the balance.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
		},
	}
}

// conversation is a model's traffic: the completions a test sends, in order.
type conversation func(t *testing.T, m *openai.Model) []string

func balance(t *testing.T, m *openai.Model) []string {
	first := events(m.Stream(context.Background(), request("what is my balance")))
	call := engine.ToolCall{ID: "call_1", Name: "get_balance", Arguments: json.RawMessage(`{}`)}
	second := events(m.Stream(context.Background(), request("what is my balance",
		engine.Message{Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{call}},
		engine.Message{Role: engine.RoleTool, ToolCallID: "call_1", Content: `{"balance":"1234.56"}`})))
	return append(first, second...)
}

func once(said string) conversation {
	return func(t *testing.T, m *openai.Model) []string {
		return events(m.Stream(context.Background(), request(said)))
	}
}

func warm(t *testing.T, m *openai.Model) []string {
	ev, err := m.Warm(context.Background(), request("ignored"))
	b, _ := json.Marshal(ev)
	return []string{string(b), fmt.Sprint(err)}
}

// sequence routes the n-th attempt of a request to names[n], and later ones to the last name.
func sequence(names ...string) func(*enginetest.ReplayRequest) string {
	return func(r *enginetest.ReplayRequest) string { return names[min(r.Attempt, len(names)-1)] }
}

// record runs conv through a recorder against a replay server and returns the events and the
// tape's bytes.
func record(t *testing.T, path string, route func(*enginetest.ReplayRequest) string, conv conversation) ([]string, []byte) {
	t.Helper()
	replay := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), route)
	rec := modeltape.Record(path, nil)
	got := conv(t, newModel(t, replay.URL, rec))
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	tape, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return got, tape
}

// TestReplayGivesTheRecordedEvents: traffic recorded against the replay server, replayed
// offline through the openai model, gives the same events (text deltas, tool calls, finish,
// usage, retries, a stream that broke); recording it again gives the same bytes.
func TestReplayGivesTheRecordedEvents(t *testing.T) {
	cases := []struct {
		name      string
		route     func(*enginetest.ReplayRequest) string
		conv      conversation
		exchanges int
	}{
		{"balance with a tool call", enginetest.DemoRoute, balance, 2},
		{"transfer", enginetest.DemoRoute, once("send 20 dollars to Alex"), 1},
		{"retried after a rate limit and a server error", sequence("rate_limited", "server_error", "text"), once("hello"), 3},
		{"a stream cut after some text", sequence("cut_midstream"), once("hello"), 1},
		{"an error event in the stream", sequence("error_midstream"), once("hello"), 1},
		{"refusal", sequence("refusal"), once("tell me something awful"), 1},
		{"warm-up", enginetest.DemoRoute, warm, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tapes", "x.jsonl") // the folder is created
			want, tape := record(t, path, tc.route, tc.conv)
			if lines := bytes.Count(tape, []byte("\n")); lines != tc.exchanges {
				t.Fatalf("%d exchanges on the tape, want %d:\n%s", lines, tc.exchanges, tape)
			}
			if _, again := record(t, path, tc.route, tc.conv); !bytes.Equal(again, tape) {
				t.Errorf("the same traffic recorded twice differs:\n%s\n%s", tape, again)
			}
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*")); len(left) != 0 {
				t.Errorf("temporary files left: %v", left)
			}

			player, err := modeltape.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			got := tc.conv(t, newModel(t, offline, player))
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("replayed:\n%s\nrecorded:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if err := player.Close(); err != nil {
				t.Error(err)
			}
			t.Logf("%s", tape)
		})
	}
}

// TestReplayThroughTheEngine: demo turns recorded through one engine replay through another,
// made afresh, with the same answers and widgets.
func TestReplayThroughTheEngine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo.jsonl")
	turns := []string{"What's my balance?", "send 20 dollars to Alex", "show me my recent transactions"}
	run := func(rt http.RoundTripper, base string) []string {
		d := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: engine.Config{Model: newModel(t, base, rt)}})
		var out []string
		for i, said := range turns {
			turn := postTurn(t, d.URL, fmt.Sprintf("prod-tape-%d", i), said)
			// What the model decided; the ids and the action tokens are the engine's own.
			what := []string{turn.Names(), turn.Speak, fmt.Sprint(turn.Spec.Suggestions)}
			for _, w := range turn.Spec.Widgets {
				what = append(what, w.WidgetType())
				if c, ok := w.(widgets.Confirm); ok {
					what = append(what, c.Body, c.Execute.Tool, string(c.Execute.Arguments))
				}
			}
			out = append(out, strings.Join(what, " | "))
		}
		return out
	}
	replay := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), enginetest.DemoRoute)
	rec := modeltape.Record(path, nil)
	want := run(rec, replay.URL)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	player, err := modeltape.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	got := run(player, offline)
	if strings.Join(got, "\n") != strings.Join(want, "\n") || !strings.Contains(want[1], "Alex") {
		t.Errorf("replayed:\n%s\nrecorded:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := player.Close(); err != nil {
		t.Error(err)
	}
}

func postTurn(t *testing.T, base, requestID, said string) *enginetest.Turn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	body, _ := json.Marshal(map[string]string{"transcript": said})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+engine.PathTurn, bytes.NewReader(body))
	req.Header.Set("X-Engine-Key", demobank.EngineKey)
	req.Header.Set("X-Token", "user-token-s3cr3t")
	req.Header.Set("X-Request-ID", requestID)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	turn, err := enginetest.ReadTurn(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, %v: %s", resp.StatusCode, err, turn.Names())
	}
	return turn
}

// TestChangedRequestIsNamed: a request that is not the recorded one fails the completion and
// the player's Close with the request's number and the first JSON path where it differs.
func TestChangedRequestIsNamed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	record(t, path, enginetest.DemoRoute, balance)
	long := strings.Repeat("what is my balance ", 8)

	cases := []struct {
		name string
		conv conversation
		want string
	}{
		{"another prompt", once("what is my savings balance"),
			`modeltape: request 1 of ` + path + ` changed at messages[2].content: recorded "what is my balance", now "what is my savings balance"`},
		{"a long prompt", once(long),
			`changed at messages[2].content: recorded "what is my balance", now "what is my balance what is my balance what is my balance what is my balance what…"`},
		{"the second request", func(t *testing.T, m *openai.Model) []string {
			events(m.Stream(context.Background(), request("what is my balance")))
			return events(m.Stream(context.Background(), request("what is my balance", engine.Message{Role: engine.RoleAssistant, Content: "hm"})))
		}, `request 2 of ` + path + ` changed at messages[3].content: recorded nothing, now "hm"`},
		{"past the end", func(t *testing.T, m *openai.Model) []string {
			balance(t, m)
			return events(m.Stream(context.Background(), request("and my savings?")))
		}, `request 3 (POST /v1/chat/completions) is past the end of ` + path + `: the tape has 2 exchanges`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			player, err := modeltape.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			got := tc.conv(t, newModel(t, offline, player))
			if last := got[len(got)-1]; !strings.Contains(last, tc.want) {
				t.Errorf("the completion ended with\n%s\nwant it to say\n%s", last, tc.want)
			}
			err = player.Close()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "modeltape: ") {
				t.Errorf("Close: %v", err)
			}
			if !errors.Is(err, modeltape.ErrChanged) && !errors.Is(err, modeltape.ErrExhausted) {
				t.Errorf("Close: %v wraps neither ErrChanged nor ErrExhausted", err)
			}
		})
	}

	t.Run("unplayed", func(t *testing.T) {
		player, _ := modeltape.Open(path)
		once("what is my balance")(t, newModel(t, offline, player))
		err := player.Close()
		if !errors.Is(err, modeltape.ErrUnplayed) || !strings.Contains(err.Error(), "1 of its 2 exchanges were never requested (2: POST /v1/chat/completions)") {
			t.Errorf("Close: %v", err)
		}
	})
}

// TestAPIKeyNeverOnTape: no request header reaches the tape, the key-carrying query parameters
// are left out of the path, and a key a server echoes in its answer is redacted.
func TestAPIKeyNeverOnTape(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Set-Cookie", "session=cookie-s3cr3t-value")
		w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s (%s)","type":"invalid_request_error","code":"invalid_api_key"}}`,
			strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), r.URL.Query().Get("api-key"))
	}))
	defer echo.Close()
	path := filepath.Join(t.TempDir(), "x.jsonl")
	rec := modeltape.Record(path, nil)
	m, err := openai.NewModel(&openai.Options{BaseURL: echo.URL + "/v1/", APIKey: testKey, MaxRetries: -1, HTTPClient: &http.Client{Transport: rec}})
	if err != nil {
		t.Fatal(err)
	}
	events(m.Stream(context.Background(), request("hi")))
	req, _ := http.NewRequest(http.MethodGet, echo.URL+"/v1/models?api-version=2024-10-21&api-key=azure-s3cr3t-key", nil)
	req.Header.Set("Api-Key", "azure-s3cr3t-key")
	resp, err := (&http.Client{Transport: rec}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	tape, _ := os.ReadFile(path)
	for _, secret := range []string{testKey, "Bearer", "Authorization", "azure-s3cr3t-key", "cookie-s3cr3t-value", "org-s3cr3t", "X-Echo"} {
		if bytes.Contains(tape, []byte(secret)) {
			t.Errorf("%q is on the tape:\n%s", secret, tape)
		}
	}
	if !bytes.Contains(tape, []byte(`Incorrect API key provided: <redacted> ()`)) || !bytes.Contains(tape, []byte(`Incorrect API key provided:  (<redacted>)`)) || !bytes.Contains(tape, []byte(`"path":"/v1/models?api-version=2024-10-21"`)) {
		t.Errorf("tape:\n%s", tape)
	}
}

// TestCorruptTapeIsAClearError: a tape cut short, edited into invalid JSON or holding what is
// not an exchange fails Open with the file and line.
func TestCorruptTapeIsAClearError(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	_, tape := record(t, good, enginetest.DemoRoute, balance)
	cases := []struct {
		name, content, want string
	}{
		{"truncated", string(tape[:len(tape)-200]), ":2: not an exchange (unexpected EOF)"},
		{"garbage", "hello\n", ":1: not an exchange (invalid character 'h'"},
		{"unknown field", `{"method":"POST","path":"/v1/chat/completions","status":200,"authorization":"x"}` + "\n", `:1: not an exchange (json: unknown field "authorization")`},
		{"no status", `{"method":"POST","path":"/v1/chat/completions"}` + "\n", ":1: an exchange with status 0"},
		{"bad base64", `{"method":"GET","path":"/v1/audio","status":200,"body_base64":"@@"}` + "\n", ":1: the recorded body: illegal base64"},
		{"blank line", string(tape) + "\n", ":3: an empty line"},
		{"two on a line", strings.TrimSuffix(string(tape), "\n") + strings.SplitAfter(string(tape), "\n")[0], ":2: more than one exchange on the line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".jsonl")
			os.WriteFile(path, []byte(tc.content), 0o644)
			_, err := modeltape.Open(path)
			if !errors.Is(err, modeltape.ErrCorrupt) || !strings.Contains(err.Error(), "modeltape: "+path+tc.want) {
				t.Errorf("Open: %v\nwant %s", err, path+tc.want)
			}
		})
	}
	if _, err := modeltape.Open(filepath.Join(dir, "missing.jsonl")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing tape: %v", err)
	}
}

// TestOtherBodies: multipart requests, whose boundaries are random, replay; a binary answer
// (speech) comes back byte for byte; a request that failed without an answer fails again.
func TestOtherBodies(t *testing.T) {
	audio := []byte{0, 1, 2, 0xff, 0xfe, 'R', 'I', 'F', 'F'}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "audio/pcm")
		w.Write(audio)
	}))
	path := filepath.Join(t.TempDir(), "x.jsonl")
	send := func(rt http.RoundTripper, base string, boundary string) ([]byte, error) {
		body := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n--" + boundary + "--\r\n"
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/audio/transcriptions", strings.NewReader(body))
		req.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
		resp, err := (&http.Client{Transport: rt}).Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		return io.ReadAll(resp.Body)
	}
	rec := modeltape.Record(path, nil)
	if got, err := send(rec, srv.URL, "b1b1b1"); err != nil || !bytes.Equal(got, audio) {
		t.Fatalf("%q %v", got, err)
	}
	srv.Close()
	if _, err := send(rec, srv.URL, "b2b2b2"); err == nil {
		t.Fatal("a closed server answered")
	}
	rec.Close()

	player, err := modeltape.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := send(player, "http://model.invalid", "c3c3c3"); err != nil || !bytes.Equal(got, audio) {
		t.Errorf("%q %v", got, err)
	}
	if _, err := send(player, "http://model.invalid", "d4d4d4"); err == nil || !strings.Contains(err.Error(), "request 2 of "+path+" failed when recorded: ") {
		t.Errorf("%v", err)
	}
	if err := player.Close(); err != nil {
		t.Error(err)
	}
}

// TestConcurrentUse: recorders and players may be used from several goroutines.
func TestConcurrentUse(t *testing.T) {
	replay := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), sequence("text"))
	path := filepath.Join(t.TempDir(), "x.jsonl")
	run := func(m *openai.Model) {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() { events(m.Stream(context.Background(), request("hello"))) })
		}
		wg.Wait()
	}
	rec := modeltape.Record(path, nil)
	run(newModel(t, replay.URL, rec))
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	player, err := modeltape.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	run(newModel(t, offline, player))
	if err := player.Close(); err != nil {
		t.Error(err)
	}
}

func FuzzOpen(f *testing.F) {
	f.Add([]byte(`{"method":"POST","path":"/v1/chat/completions","request":{"a":[1,{"b":"c"}]},"status":200,"header":{"Content-Type":"text/event-stream"},"body":"data: [DONE]\n\n"}` + "\n"))
	f.Add([]byte(`{"method":"GET","path":"/v1/x","status":200,"body_base64":"AAEC","body_error":"unexpected EOF"}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.jsonl")
		os.WriteFile(path, data, 0o644)
		p, err := modeltape.Open(path)
		if err != nil {
			return
		}
		req, _ := http.NewRequest(http.MethodPost, offline+"chat/completions", strings.NewReader(`{"a":[1,{"b":"d"}]}`))
		if resp, err := p.RoundTrip(req); err == nil {
			io.Copy(io.Discard, resp.Body)
		}
		p.Close()
	})
}

// TestRequestsInAnotherOrder: requests sent at once (a background warm-up and a turn) may
// reach the player in another order than they were recorded in; each gets its own response.
func TestRequestsInAnotherOrder(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"echo":%s}`, b)
	}))
	defer srv.Close()
	send := func(rt http.RoundTripper, base, body string) string {
		resp, err := (&http.Client{Transport: rt}).Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	path := filepath.Join(t.TempDir(), "x.jsonl")
	rec := modeltape.Record(path, nil)
	for _, b := range []string{`{"n":1}`, `{"n":2}`, `{"n":1}`} {
		send(rec, srv.URL, b)
	}
	rec.Close()
	player, _ := modeltape.Open(path)
	for _, b := range []string{`{"n":2}`, `{"n": 1}`, `{"n":1}`} {
		if got := send(player, "http://model.invalid", b); got != `{"echo":`+strings.ReplaceAll(b, " ", "")+`}` {
			t.Errorf("%s: %s", b, got)
		}
	}
	if err := player.Close(); err != nil {
		t.Error(err)
	}
}
