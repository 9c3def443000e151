package enginetest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

//go:embed testdata/openai/*.http
var openaiFixtures embed.FS

// OpenAIFixtures returns the recorded Chat Completions responses kept in testdata/openai, by
// name without the ".http" extension. Each file is one HTTP response as it came over the wire
// (status line, headers, a blank line, the body). OpenAI's streams are
// "data: {chat.completion.chunk}" events ended by "data: [DONE]"; the shape_ fixtures are
// written as other servers were reported to stream.
//
//   - text, usage_cached, warm: plain text, with a usage chunk (cached tokens in usage_cached;
//     warm is a one-token answer cut by max_completion_tokens)
//   - tool_call, parallel_tool_calls, text_then_tool_call: tool calls, alone, two in one
//     completion, after some text
//   - refusal, content_filter: a refusal and a content-filter stop
//   - rate_limited (429 with retry-after-ms), server_error (500), invalid_key (401): errors
//     before any token
//   - error_midstream, cut_midstream, cut_before_text: a stream that breaks, with an error
//     event or by losing its connection, after some text or before any
//   - demo_<topic>_<step>: the demo bank's conversations (see [DemoRoute])
//   - shape_<name>_<step>: the balance conversation as other servers stream it, each in its
//     server's own format (see [ServerShapes] and [ShapeRoute])
func OpenAIFixtures() fs.FS {
	sub, err := fs.Sub(openaiFixtures, "testdata/openai")
	if err != nil {
		panic(err) // the directory is embedded
	}
	return sub
}

// ReplayRequest is one request a [ReplayServer] received, with what routing needs read from a
// Chat Completions body.
type ReplayRequest struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte

	Model               string
	Stream              bool
	MaxCompletionTokens int
	// LastUser is the text of the last user message; empty when there is none.
	LastUser string
	// Step counts the assistant messages with tool calls after the last user message: 0 for
	// the first completion of a turn, 1 once the first tool results are in, and so on.
	Step int
	// Attempt counts the earlier requests with the same body: 0 the first time, 1 for the
	// first retry.
	Attempt int
}

// ReplayServer is an OpenAI-compatible server that answers every request with a recorded HTTP
// response, byte for byte: the status, the headers and the body. A streamed body is written
// event by event, each flushed as it would arrive from the API, and the response then ends as
// HTTP responses do. A fixture with the header "X-Replay-Cut: true" (which is not sent) instead
// loses its connection after its last byte, as a broken upstream would.
//
// It records the requests it answered. It is safe for concurrent use.
type ReplayServer struct {
	// URL is the base URL clients use, ending in "/v1/".
	URL string

	srv      *httptest.Server
	fixtures fs.FS
	route    func(*ReplayRequest) string

	mu       sync.Mutex
	requests []*ReplayRequest
	seen     map[[32]byte]int
}

// NewReplayServer starts a server that answers each request with the fixture of fixtures that
// route names (without ".http"); an empty name, or one without a file, answers 404 with an
// OpenAI-style error. The server is closed when tb's test ends.
func NewReplayServer(tb testing.TB, fixtures fs.FS, route func(*ReplayRequest) string) *ReplayServer {
	tb.Helper()
	s := &ReplayServer{fixtures: fixtures, route: route, seen: map[[32]byte]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1/"
	tb.Cleanup(s.srv.Close)
	return s
}

// Requests returns the requests answered so far, oldest first.
func (s *ReplayServer) Requests() []*ReplayRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*ReplayRequest(nil), s.requests...)
}

func (s *ReplayServer) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req := parseReplayRequest(r, body)
	s.mu.Lock()
	key := sha256.Sum256(append([]byte(r.URL.Path+"\n"), body...))
	req.Attempt = s.seen[key]
	s.seen[key]++
	s.requests = append(s.requests, req)
	s.mu.Unlock()

	name := s.route(req)
	raw, err := fs.ReadFile(s.fixtures, name+".http")
	if name == "" || err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error","param":null,"code":"no_fixture"}}`,
			fmt.Sprintf("the replay server has no fixture %q for %s %s (last user message %q, step %d)", name, r.Method, r.URL.Path, req.LastUser, req.Step))
		return
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), r)
	if err != nil {
		http.Error(w, "fixture "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	recorded, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		http.Error(w, "fixture "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	cut := resp.Header.Get("X-Replay-Cut") == "true"
	for k, vs := range resp.Header {
		switch k {
		case "Content-Length", "Transfer-Encoding", "Connection", "X-Replay-Cut":
			continue
		}
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		w.Write(recorded)
		if cut {
			panic(http.ErrAbortHandler)
		}
		return
	}
	flusher, _ := w.(http.Flusher)
	rest := recorded
	for len(rest) > 0 {
		event := rest
		if i := bytes.Index(rest, []byte("\n\n")); i >= 0 {
			event = rest[:i+2]
		}
		rest = rest[len(event):]
		if _, err := w.Write(event); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	if cut {
		panic(http.ErrAbortHandler) // drop the connection: the stream was cut
	}
}

func parseReplayRequest(r *http.Request, body []byte) *ReplayRequest {
	req := &ReplayRequest{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	var b struct {
		Model               string `json:"model"`
		Stream              bool   `json:"stream"`
		MaxCompletionTokens int    `json:"max_completion_tokens"`
		Messages            []struct {
			Role      string            `json:"role"`
			Content   json.RawMessage   `json:"content"`
			ToolCalls []json.RawMessage `json:"tool_calls"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &b) != nil {
		return req
	}
	req.Model, req.Stream, req.MaxCompletionTokens = b.Model, b.Stream, b.MaxCompletionTokens
	for i := len(b.Messages) - 1; i >= 0; i-- {
		m := b.Messages[i]
		if m.Role == "user" {
			req.LastUser = messageText(m.Content)
			break
		}
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			req.Step++
		}
	}
	return req
}

// messageText reads a message's content, a string or an array of text parts.
func messageText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// DemoRoute routes the demo bank's conversations to the demo fixtures of [OpenAIFixtures] by
// the words of the last user message: balance, transactions, savings goal, transfer, and home
// when there is no user message. The first completion of a turn asks for the data
// (demo_<topic>_1); the one after the tool results answers (demo_<topic>_2). A request to
// launder or steal money gets "refusal"; one that mentions an "outage" gets "error_midstream",
// the server failing inside its stream after some text (a scenario of a turn after a model
// error); a warm-up (one output token) "warm", anything else "text".
func DemoRoute(r *ReplayRequest) string {
	if r.MaxCompletionTokens == 1 {
		return "warm"
	}
	said := strings.ToLower(r.LastUser)
	topic := ""
	switch {
	case r.LastUser == "":
		topic = "home"
	case containsAny(said, "launder", "steal"):
		return "refusal"
	case strings.Contains(said, "outage"):
		return "error_midstream"
	case containsAny(said, "send", "transfer", "pay "):
		topic = "transfer"
	case containsAny(said, "transaction", "spen", "movimiento", "معامل"):
		topic = "transactions"
	case containsAny(said, "balance", "money", "saldo", "رصيد"):
		topic = "balance"
	case containsAny(said, "goal", "saving", "meta", "ادخار"):
		topic = "goal"
	default:
		return "text"
	}
	return fmt.Sprintf("demo_%s_%d", topic, min(r.Step, 1)+1)
}

func containsAny(s string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
