package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
)

// chatStream is a Chat Completions response streamed as OpenAI streams it: one
// chat.completion.chunk a delta, the finish reason, a usage chunk and [DONE].
func chatStream(finish string, deltas ...string) *fstest.MapFile {
	var b strings.Builder
	b.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nx-request-id: req_card\r\n\r\n")
	chunk := func(choices string) {
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-card","object":"chat.completion.chunk","created":1764926901,"model":"gpt-4o-mini-2024-07-18","choices":%s,"usage":null}`+"\n\n", choices)
	}
	for _, d := range deltas {
		chunk(`[{"index":0,"delta":` + d + `,"logprobs":null,"finish_reason":null}]`)
	}
	chunk(`[{"index":0,"delta":{},"logprobs":null,"finish_reason":"` + finish + `"}]`)
	b.WriteString(`data: {"id":"chatcmpl-card","object":"chat.completion.chunk","created":1764926901,"model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":900,"completion_tokens":12,"total_tokens":912}}` + "\n\ndata: [DONE]\n\n")
	return &fstest.MapFile{Data: []byte(b.String())}
}

// TestCardNumberThroughTheServer: a user of the reference server, whose tenant runs the banking
// policy on an OpenAI-compatible model, types a card number. Every request the model server
// receives holds the placeholder and never the number; the tenant's backend receives the
// number in the tool call the model made with the placeholder; the backend's answer, which
// repeats the number, reaches the model as the placeholder; the user is shown the number
// masked; the server's debug log does not hold it.
func TestCardNumberThroughTheServer(t *testing.T) {
	const card = "4111 1111 1111 1111"
	fixtures := fstest.MapFS{
		"card_1.http": chatStream("tool_calls",
			`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_card1","type":"function","function":{"name":"check_card","arguments":""}}]}`,
			`{"tool_calls":[{"index":0,"function":{"arguments":"{\"card\":\"[CA"}}]}`,
			`{"tool_calls":[{"index":0,"function":{"arguments":"RD_1]\"}"}}]}`),
		"card_2.http": chatStream("stop",
			`{"role":"assistant","content":""}`, `{"content":"Card [CA"}`, `{"content":"RD_1] is a valid"}`, `{"content":" Visa card."}`),
	}
	replay := enginetest.NewReplayServer(t, fixtures, func(r *enginetest.ReplayRequest) string {
		return fmt.Sprintf("card_%d", min(r.Step, 1)+1)
	})

	var (
		mu       sync.Mutex
		received []string
	)
	bank := demobank.New(nil)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/cards/check" {
			bank.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		received = append(received, string(body))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"valid":true,"network":"Visa","number":"` + card + `"}`))
	}))
	defer backend.Close()

	tn, err := demobank.Tenant(backend.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	tn.Model = "compat"
	tn.Privacy = json.RawMessage(`{"preset":"banking"}`)
	tn.Tools = json.RawMessage(`[{"name":"check_card","description":"Check a payment card by its number.",
		"parameters":{"type":"object","properties":{"card":{"type":"string"}},"required":["card"],"additionalProperties":false},
		"method":"POST","path":"/cards/check","timeout":"5s"}]`)
	data, _ := json.Marshal(map[string]any{
		"models":  map[string]any{"compat": map[string]string{"base_url": replay.URL, "model": "gpt-4o-mini", "api_key": "sk-card"}},
		"tenants": []*engine.Tenant{tn},
	})
	path := filepath.Join(t.TempDir(), "tenants.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	base, _, logs := startServerLogs(t, []string{"-tenants", path}, nil)
	evs, spec := turn(t, base, "prod-card-1", `{"transcript":"is my card `+card+` still valid?"}`)

	flat := strings.NewReplacer(" ", "", "-", "").Replace
	reqs := replay.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model server got %d requests, want 2", len(reqs))
	}
	for i, r := range reqs {
		if body := string(r.Body); strings.Contains(flat(body), "4111111111111111") || !strings.Contains(body, "[CARD_1]") {
			t.Errorf("model request %d does not hold the placeholder alone:\n%s", i+1, body)
		}
	}
	mu.Lock()
	if len(received) != 1 || received[0] != `{"card":"4111111111111111"}` {
		t.Errorf("the backend received %q, want the card number", received)
	}
	mu.Unlock()
	var said strings.Builder
	for _, ev := range evs {
		if ev.Name == "speak" {
			var d struct{ Delta string }
			json.Unmarshal(ev.Data, &d)
			said.WriteString(d.Delta)
		}
	}
	if want := "Card •••• 1111 is a valid Visa card."; spec.Speak != want || said.String() != want {
		t.Errorf("the user was shown %q (deltas %q), want %q", spec.Speak, said.String(), want)
	}
	if strings.Contains(flat(logs.String()), "4111111111111111") {
		t.Errorf("the server's log holds the card number:\n%s", logs.String())
	}
}
