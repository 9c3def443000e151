package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/internal/testkit"
)

// deskKeyOf returns the desk key the server printed on its console.
func deskKeyOf(t *testing.T, out *lineWriter) string {
	t.Helper()
	m := regexp.MustCompile(`desk key: (desk_[0-9a-f]+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("the server printed no desk key:\n%s", out.String())
	}
	return m[1]
}

// desk calls the desk's API as a person holding key; it returns the status and the body.
func desk(t *testing.T, base, key, method, path, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, base+"/demo/desk/api/"+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// waitingFor returns the id of the open handoff of conversation on the desk.
func waitingFor(t *testing.T, base, key, conversation string) string {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, b := desk(t, base, key, http.MethodGet, "handoffs", "")
		var open []struct {
			ID             string `json:"id"`
			ConversationID string `json:"conversation_id"`
		}
		_ = json.Unmarshal(b, &open)
		for _, h := range open {
			if h.ConversationID == conversation {
				return h.ID
			}
		}
	}
	t.Fatalf("the desk shows no handoff of conversation %s", conversation)
	return ""
}

// socketMessage is a voice socket's message, as far as the tests read it.
type socketMessage struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Delta    string          `json:"delta"`
	Spec     json.RawMessage `json:"spec"`
	TurnID   string          `json:"turnId"`
	Chunk    string          `json:"chunk"`
	raw      []byte
	specMeta struct {
		From, Name, ConversationID string
	}
	speak string
}

// readUntil reads the socket's messages until one of type typ, and returns them all.
func readUntil(t *testing.T, ws *websocket.Conn, typ string) []socketMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	var got []socketMessage
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("reading the socket, waiting for %s after %d messages: %v", typ, len(got), err)
		}
		var m socketMessage
		_ = json.Unmarshal(data, &m)
		m.raw = data
		if m.Spec != nil {
			var s struct {
				Speak string `json:"speak"`
				Meta  struct {
					From           string `json:"from"`
					Name           string `json:"name"`
					ConversationID string `json:"conversationId"`
				} `json:"meta"`
			}
			_ = json.Unmarshal(m.Spec, &s)
			m.speak, m.specMeta.From, m.specMeta.Name, m.specMeta.ConversationID = s.Speak, s.Meta.From, s.Meta.Name, s.Meta.ConversationID
		}
		got = append(got, m)
		if m.Type == typ {
			return got
		}
	}
}

// TestHandoffOnTheVoiceSocket: a customer on the voice socket asks for a person; the person on
// the desk joins and writes, and the message reaches the socket unasked, spoken (speak and audio
// messages in the tenant's voice) and as a spec marked as the person's; the customer's typed
// answer reaches the desk; after the release, the assistant answers on the socket again.
func TestHandoffOnTheVoiceSocket(t *testing.T) {
	base, out := startServer(t, nil, nil)
	key := deskKeyOf(t, out)
	hdr := demoRequest(t, http.MethodGet, base, "").Header
	ws, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(base, "http")+engine.PathStream, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 20)
	write := func(msg string) {
		t.Helper()
		if err := ws.Write(t.Context(), websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"type":"text","transcript":"I want to talk to a person","context":{"sessionId":"voice-handoff-1","locale":"en-US"}}`)
	turn := readUntil(t, ws, "done")
	spec := turn[len(turn)-2]
	if spec.Type != "spec" || !strings.Contains(string(spec.Spec), `"type":"handoff"`) {
		t.Fatalf("the turn asking for a person ended with %s", spec.raw)
	}
	id := waitingFor(t, base, key, "voice-handoff-1")
	if code, b := desk(t, base, key, http.MethodPost, "handoffs/"+id+"/join", `{"name":"Ana"}`); code != 204 {
		t.Fatalf("join: %d %s", code, b)
	}
	joined := readUntil(t, ws, "spec")
	if last := joined[len(joined)-1]; !strings.Contains(last.speak, "Ana") || !strings.Contains(string(last.Spec), `"status":"connected"`) {
		t.Fatalf("the socket heard of the person joining as %s", last.raw)
	}
	if code, b := desk(t, base, key, http.MethodPost, "handoffs/"+id+"/messages", `{"text":"Hello, this is Ana. I see the double charge."}`); code != 204 {
		t.Fatalf("message: %d %s", code, b)
	}
	said := readUntil(t, ws, "spec")
	last := said[len(said)-1]
	if last.specMeta.From != "person" || last.specMeta.Name != "Ana" || last.speak != "Hello, this is Ana. I see the double charge." ||
		last.specMeta.ConversationID != "voice-handoff-1" {
		t.Fatalf("the person's message reached the socket as %s", last.raw)
	}
	var speak strings.Builder
	audio := 0
	for _, m := range said {
		switch m.Type {
		case "speak":
			speak.WriteString(m.Delta)
		case "audio":
			audio++
		case "transcript", "done":
			t.Errorf("a person's message is no turn, yet the socket got %s", m.raw)
		}
	}
	if speak.String() != last.speak || audio == 0 {
		t.Errorf("the person's message was spoken as %q in %d audio messages", speak.String(), audio)
	}
	t.Logf("the person's message: %d speak bytes, %d audio messages", speak.Len(), audio)

	// The customer answers (a typed turn on the socket): it goes to the person, not the model.
	write(`{"type":"text","transcript":"It was on Monday"}`)
	relayed := readUntil(t, ws, "done")
	if s := relayed[len(relayed)-2]; !strings.Contains(s.speak, "Ana") {
		t.Errorf("the relayed turn said %s", s.raw)
	}
	if code, b := desk(t, base, key, http.MethodPost, "handoffs/"+id+"/release", `{"note":"Refund opened."}`); code != 204 {
		t.Fatalf("release: %d %s", code, b)
	}
	released := readUntil(t, ws, "spec")
	if s := released[len(released)-1]; !strings.Contains(string(s.Spec), `"status":"released"`) {
		t.Fatalf("the release reached the socket as %s", s.raw)
	}
	write(`{"type":"text","transcript":"what is my balance"}`)
	back := readUntil(t, ws, "done")
	if s := back[len(back)-2]; !strings.Contains(string(s.Spec), `"type":"stat"`) {
		t.Errorf("after the release the assistant answered %s", s.raw)
	}
}

// TestHandoffExchangesMatchOpenAPI: the customer's side of a handoff (the turn with its
// widget, the messages endpoint, the stream with its events) and the contact centre's answers
// match docs/openapi.yaml, refusals included. (The signatures of the centre's answers are the
// handoff package's tests'.)
func TestHandoffExchangesMatchOpenAPI(t *testing.T) {
	base, out := startServer(t, nil, nil)
	key := deskKeyOf(t, out)
	checked := &http.Client{Transport: testkit.NewOpenAPITransport(t, http.DefaultTransport)}
	do := func(req *http.Request) (int, []byte) {
		t.Helper()
		res, err := checked.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	code, body := do(demoRequest(t, http.MethodPost, base+"/engine", `{"transcript":"I want to talk to a person","context":{"sessionId":"openapi-handoff-1"}}`))
	evs, err := enginetest.ReadEvents(strings.NewReader(string(body)))
	if code != 200 || err != nil || len(evs) == 0 {
		t.Fatalf("the turn: %d %v", code, err)
	}
	var done struct {
		Widgets []struct{ Type, ID string }
	}
	_ = json.Unmarshal(evs[len(evs)-1].Data, &done)
	id := ""
	for _, w := range done.Widgets {
		if w.Type == "handoff" {
			id = w.ID
		}
	}
	if id == "" {
		t.Fatalf("no handoff widget in %s", evs[len(evs)-1].Data)
	}
	path := base + "/engine/handoff/" + id
	for _, tc := range []struct {
		body string
		want int
	}{{`{"text":"Is anybody there?"}`, 202}, {`{}`, 400}, {`{"text":"a"`, 400}} {
		if code, b := do(demoRequest(t, http.MethodPost, path+"/messages", tc.body)); code != tc.want {
			t.Errorf("POST messages %s: %d %s, want %d", tc.body, code, b, tc.want)
		}
	}
	for _, step := range []struct{ path, body string }{{"join", `{"name":"Ana"}`}, {"messages", `{"text":"Hello, this is Ana."}`}, {"release", `{"note":"Answered."}`}} {
		if code, b := desk(t, base, key, http.MethodPost, "handoffs/"+id+"/"+step.path, step.body); code != 204 {
			t.Fatalf("desk %s: %d %s", step.path, code, b)
		}
	}
	if code, _ := do(demoRequest(t, http.MethodPost, path+"/messages", `{"text":"too late"}`)); code != 409 {
		t.Errorf("a message after the release: %d, want 409", code)
	}
	// The stream from the start: every event, then its end at the release.
	code, body = do(demoRequest(t, http.MethodGet, path+"/events", ""))
	if code != 200 || !strings.Contains(string(body), `"from":"person"`) || !strings.Contains(string(body), `"status":"released"`) {
		t.Errorf("the stream: %d\n%s", code, body)
	}
	if code, _ := do(demoRequest(t, http.MethodGet, base+"/engine/handoff/no-such-handoff/events", "")); code != 404 {
		t.Errorf("the stream of an unknown handoff: %d, want 404", code)
	}
	answer, _ := http.NewRequest(http.MethodPost, base+"/engine/handoff/events", strings.NewReader(`{"type":"agent.message","id":"`+id+`","text":"hi"}`))
	answer.Header.Set("Content-Type", "application/json")
	answer.Header.Set("Engine-Signature", "t=1,v1=00")
	if code, _ := do(answer); code != 404 {
		t.Errorf("a webhook's answer about a handoff of the desk: %d, want 404", code)
	}
}

// TestTwoReplicasShareHandoffs: with -redis, a customer's handoff started on replica A is on
// replica B's desk; the person joins and writes there, and the message reaches the customer's
// voice socket on A, spoken, and the customer's stream read from B.
func TestTwoReplicasShareHandoffs(t *testing.T) {
	redis := testkit.StartRedisT(t)
	env := map[string]string{
		"ENGINE_SIGNING_KEY": base64.StdEncoding.EncodeToString([]byte("a shared signing key of 32 bytes")),
		"ENGINE_REDIS_URL":   "redis://" + redis.Addr,
	}
	a, _ := startServer(t, nil, env)
	b, outB := startServer(t, nil, env)
	keyB := deskKeyOf(t, outB)
	ws, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(a, "http")+engine.PathStream, &websocket.DialOptions{HTTPHeader: demoRequest(t, http.MethodGet, a, "").Header})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 20)
	if err := ws.Write(t.Context(), websocket.MessageText, []byte(`{"type":"text","transcript":"I want to talk to a person","context":{"sessionId":"replicas-handoff-1"}}`)); err != nil {
		t.Fatal(err)
	}
	readUntil(t, ws, "done")
	id := waitingFor(t, b, keyB, "replicas-handoff-1")
	for _, step := range []struct{ path, body string }{{"join", `{"name":"Ana"}`}, {"messages", `{"text":"Hello from the other replica."}`}} {
		if code, body := desk(t, b, keyB, http.MethodPost, "handoffs/"+id+"/"+step.path, step.body); code != 204 {
			t.Fatalf("desk %s on B: %d %s", step.path, code, body)
		}
	}
	readUntil(t, ws, "spec") // the person joined
	said := readUntil(t, ws, "spec")
	if last := said[len(said)-1]; last.specMeta.From != "person" || last.speak != "Hello from the other replica." {
		t.Fatalf("the socket on A got %s", last.raw)
	}
	if code, body := desk(t, b, keyB, http.MethodPost, "handoffs/"+id+"/release", `{}`); code != 204 {
		t.Fatalf("release on B: %d %s", code, body)
	}
	res, err := http.DefaultClient.Do(demoRequest(t, http.MethodGet, b+"/engine/handoff/"+id+"/events", ""))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "Hello from the other replica.") || !strings.Contains(string(body), `"status":"released"`) {
		t.Fatalf("the customer's stream read from B: %d\n%s", res.StatusCode, body)
	}
}
