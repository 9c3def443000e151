package voice_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/voice"
)

// mintTicket asks h for a stream ticket with hdr.
func mintTicket(t *testing.T, h *harness, hdr http.Header) (string, time.Time) {
	t.Helper()
	resp := h.do(t.Context(), http.MethodPost, engine.PathStreamTicket, hdr, "")
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("Cache-Control") != "no-store" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream-ticket: %d %s", resp.StatusCode, b)
	}
	var body struct {
		Ticket    string    `json:"ticket"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Ticket == "" {
		t.Fatalf("stream-ticket body: %+v %v", body, err)
	}
	return body.Ticket, body.ExpiresAt
}

// dialTicket opens the socket of h as a browser does: none of the protocol's headers, the
// ticket as a subprotocol. It returns the socket, or the problem that refused it.
func dialTicket(t *testing.T, url string, protocols []string, hdr http.Header) (*voiceClient, *engine.Problem) {
	t.Helper()
	ws, resp, err := websocket.Dial(t.Context(), url, &websocket.DialOptions{Subprotocols: protocols, HTTPHeader: hdr})
	if err != nil {
		if resp == nil {
			t.Fatalf("dial: %v", err)
		}
		p := readProblem(t, resp)
		if resp.StatusCode != p.Status {
			t.Errorf("status %d, problem %d", resp.StatusCode, p.Status)
		}
		return nil, &p
	}
	if ws.Subprotocol() != voice.SubprotocolEngine {
		t.Errorf("the socket answered with subprotocol %q", ws.Subprotocol())
	}
	t.Cleanup(func() { ws.CloseNow() })
	return &voiceClient{t: t, ws: ws}, nil
}

// whoamiEngine is an engine whose model calls a tool that records who it ran for.
func whoamiEngine(t *testing.T, cfg engine.Config, opts ...*voice.Options) (*harness, func() []string) {
	var (
		mu  sync.Mutex
		who []string
	)
	cfg.Toolset = &enginetest.FuncToolset{
		ToolList: []engine.Tool{{Name: "whoami"}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"whoami": func(_ context.Context, env *engine.ToolEnv, _ engine.ToolCall) (engine.ToolResult, error) {
				mu.Lock()
				defer mu.Unlock()
				who = append(who, env.Environment.Name+" "+env.UserToken.Reveal()+" "+env.RequestID)
				return engine.ToolResult{Content: json.RawMessage(`{}`)}, nil
			},
		},
	}
	cfg.Model = modelFunc(func(_ context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		if enginetest.StepOf(req.Messages) == 0 {
			return []engine.ModelEvent{call("1", "whoami", `{}`)}
		}
		return enginetest.Text("Done.")
	})
	var o *voice.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	h := newHarnessWith(t, cfg, o)
	return h, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), who...)
	}
}

// TestStreamTicket: a ticket opens the socket once, as the user, environment and request that
// asked for it, and the socket runs turns as one opened with headers; a ticket that is
// reused, expired, another tenant's or malformed is refused with 401 and its code, and no
// ticket reaches the logs.
func TestStreamTicket(t *testing.T) {
	clock := newClock()
	h, who := whoamiEngine(t, engine.Config{Now: clock.Now})
	hdr := headers()
	hdr.Set("X-Request-ID", "stg-ticket-1")
	ticket, exp := mintTicket(t, h, hdr)
	if d := exp.Sub(clock.Now()); d <= 0 || d > time.Minute {
		t.Errorf("the ticket lasts %v", d)
	}
	protocols := []string{voice.SubprotocolEngine, "ticket." + ticket}

	c, p := dialTicket(t, h.wsURL(), protocols, nil)
	if p != nil {
		t.Fatalf("the ticket did not open the socket: %+v", p)
	}
	c.send(map[string]any{"type": "text", "transcript": "who am i"})
	if r := c.turn(); r.spec.Speak != "Done." {
		t.Fatalf("the turn: %+v", r.spec)
	}
	if got := who(); len(got) != 1 || got[0] != "staging "+testToken+" stg-ticket-1" {
		t.Errorf("the tool ran as %q", got)
	}

	refused := func(name string, protocols []string, hdr http.Header, code string) {
		t.Helper()
		if _, p := dialTicket(t, h.wsURL(), protocols, hdr); p == nil || p.Status != http.StatusUnauthorized || p.Code != code {
			t.Errorf("%s: %+v, want 401 %s", name, p, code)
		}
	}
	refused("used again", protocols, nil, engine.CodeStreamTicketReused)

	other, _ := mintTicket(t, h, headers())
	refused("another tenant's key beside it", []string{voice.SubprotocolEngine, "ticket." + other},
		http.Header{"X-Engine-Key": {"pk_other"}}, engine.CodeStreamTicketWrongTenant)
	refused("the ticket's key and another tenant's beside it", []string{voice.SubprotocolEngine, "ticket." + other},
		http.Header{"X-Engine-Key": {headers().Get("X-Engine-Key"), "pk_other"}}, engine.CodeStreamTicketWrongTenant)

	late, _ := mintTicket(t, h, headers())
	clock.Add(61 * time.Second)
	refused("expired", []string{voice.SubprotocolEngine, "ticket." + late}, nil, engine.CodeStreamTicketExpired)

	tampered := []byte(ticket)
	tampered[len(tampered)/2] ^= 1
	if tampered[len(tampered)/2] < '0' {
		tampered[len(tampered)/2] = 'A'
	}
	many := []string{voice.SubprotocolEngine}
	for i := range 99 {
		many = append(many, "p"+strings.Repeat("x", i%5))
	}
	for name, protos := range map[string][]string{
		"forged":                {voice.SubprotocolEngine, "ticket.st1_" + strings.Repeat("A", 80)},
		"changed":               {voice.SubprotocolEngine, "ticket." + string(tampered)},
		"10 KB":                 {voice.SubprotocolEngine, "ticket." + strings.Repeat("A", 10<<10)},
		"20 KB":                 {voice.SubprotocolEngine, "ticket." + strings.Repeat("A", 20<<10)},
		"not base64url":         {voice.SubprotocolEngine, "ticket.st1_abc.def"},
		"without engine.v1":     {"ticket." + other},
		"two tickets":           {voice.SubprotocolEngine, "ticket." + other, "ticket." + other},
		"an empty ticket first": {voice.SubprotocolEngine, "ticket.", "ticket." + other},
		"100 subprotocols":      append(many, "ticket."+other),
		"too short":             {voice.SubprotocolEngine, "ticket.x"},
	} {
		refused(name, protos, nil, engine.CodeInvalidStreamTicket)
	}
	// Control characters cannot be sent by a WebSocket client, nor Go's HTTP client: a raw
	// upgrade carries them.
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: engine.v1, ticket.st1_a\x01b\r\n\r\n", engine.PathStream)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a control character in the ticket: %d", resp.StatusCode)
	}
	if resp.StatusCode == http.StatusUnauthorized {
		if p := readProblem(t, resp); p.Code != engine.CodeInvalidStreamTicket {
			t.Errorf("a control character in the ticket: %s", p.Code)
		}
	}
	// The socket of headers is unchanged, with or without the engine's subprotocol.
	h.dial(t, headers())

	for _, tk := range []string{ticket, other, late} {
		if strings.Contains(h.logs.String(), tk) || strings.Contains(h.logs.String(), tk[4:40]) {
			t.Fatal("a ticket reached the logs")
		}
	}
	if strings.Contains(ticket, testToken) {
		t.Error("the ticket shows the user's token")
	}
}

// TestStreamWithoutTicket: a browser's upgrade that offers engine.v1 but no ticket, and none of
// the engine's headers, is told its ticket is missing (401 invalid_stream_ticket), not that a
// header it cannot send is (400 invalid_request_id). An upgrade with the headers, with or
// without engine.v1, is checked as before.
func TestStreamWithoutTicket(t *testing.T) {
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}})
	_, p := dialTicket(t, h.wsURL(), []string{voice.SubprotocolEngine}, nil)
	if p == nil || p.Status != http.StatusUnauthorized || p.Code != engine.CodeInvalidStreamTicket || !strings.Contains(p.Detail, engine.PathStreamTicket) {
		t.Fatalf("engine.v1 alone: %+v, want 401 %s naming %s", p, engine.CodeInvalidStreamTicket, engine.PathStreamTicket)
	}
	noID := headers()
	noID.Del("X-Request-ID")
	for name, tc := range map[string]struct {
		protocols []string
		hdr       http.Header
		code      string
	}{
		"engine.v1 and a header short":  {[]string{voice.SubprotocolEngine}, noID, engine.CodeInvalidRequestID},
		"no subprotocol and no headers": {nil, nil, engine.CodeInvalidRequestID},
	} {
		if _, p := dialTicket(t, h.wsURL(), tc.protocols, tc.hdr); p == nil || p.Status != http.StatusBadRequest || p.Code != tc.code {
			t.Errorf("%s: %+v, want 400 %s", name, p, tc.code)
		}
	}
	if _, p := dialTicket(t, h.wsURL(), []string{voice.SubprotocolEngine}, headers()); p != nil {
		t.Fatalf("engine.v1 with the headers: %+v", p)
	}
}

// TestStreamTicketAcrossReplicas: a ticket minted by one replica opens the socket on another
// that shares the signing key and the replay store, once.
func TestStreamTicketAcrossReplicas(t *testing.T) {
	shared := &engine.MemoryStore{}
	a, _ := whoamiEngine(t, engine.Config{Replay: shared})
	b, who := whoamiEngine(t, engine.Config{Replay: shared})
	ticket, _ := mintTicket(t, a, headers())
	protocols := []string{voice.SubprotocolEngine, "ticket." + ticket}
	c, p := dialTicket(t, b.wsURL(), protocols, nil)
	if p != nil {
		t.Fatalf("replica B: %+v", p)
	}
	c.send(map[string]any{"type": "text", "transcript": "who am i"})
	c.turn()
	if got := who(); len(got) != 1 || !strings.HasPrefix(got[0], "production "+testToken) {
		t.Errorf("on B the tool ran as %q", got)
	}
	if _, p := dialTicket(t, a.wsURL(), protocols, nil); p == nil || p.Code != engine.CodeStreamTicketReused {
		t.Errorf("back on A: %+v", p)
	}
}

// TestStreamTicketRequestIsChecked: the ticket request passes the checks of every request.
func TestStreamTicketRequestIsChecked(t *testing.T) {
	h, _ := whoamiEngine(t, engine.Config{})
	hdr := headers()
	hdr.Del("X-Token")
	resp := h.do(t.Context(), http.MethodPost, engine.PathStreamTicket, hdr, "")
	if p := readProblem(t, resp); resp.StatusCode != 401 || p.Code != engine.CodeMissingUserToken {
		t.Errorf("without a token: %d %s", resp.StatusCode, p.Code)
	}
	resp = h.do(t.Context(), http.MethodPost, engine.PathStreamTicket, headers(), `[1]`)
	if p := readProblem(t, resp); resp.StatusCode != 400 || p.Code != engine.CodeInvalidRequest {
		t.Errorf("a body that is not an object: %d %s", resp.StatusCode, p.Code)
	}
	resp = h.do(t.Context(), http.MethodGet, engine.PathStreamTicket, headers(), "")
	if p := readProblem(t, resp); resp.StatusCode != 405 || p.Code != engine.CodeMethodNotAllowed {
		t.Errorf("GET: %d %s", resp.StatusCode, p.Code)
	}
}

// TestStreamTicketSize: the longest token the engine takes, with metadata full of characters
// JSON escapes, still makes a ticket that opens the socket; what cannot fit in one (forwarded
// headers besides) is 431 headers_too_large, not a server error.
func TestStreamTicketSize(t *testing.T) {
	h, _ := whoamiEngine(t, engine.Config{})
	hdr := headers()
	hdr.Set("X-Token", strings.Repeat("t", 8000))
	hdr.Set("X-Client-Metadata", `{"note":"`+strings.Repeat("<", 1300)+`"}`)
	ticket, _ := mintTicket(t, h, hdr)
	if _, p := dialTicket(t, h.wsURL(), []string{voice.SubprotocolEngine, "ticket." + ticket}, nil); p != nil {
		t.Errorf("the long ticket was refused: %d %s %s", p.Status, p.Code, p.Detail)
	}

	hdr.Set("X-Client-Metadata", `{"note":"`+strings.Repeat("x", 4000)+`"}`)
	for i := range 16 {
		hdr.Set(fmt.Sprintf("X-Engine-Forward-H%d", i), strings.Repeat("v", 900))
	}
	resp := h.do(t.Context(), http.MethodPost, engine.PathStreamTicket, hdr, "")
	if p := readProblem(t, resp); resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || p.Code != engine.CodeHeadersTooLarge {
		t.Errorf("claims too large for a ticket: %d %s", resp.StatusCode, p.Code)
	}
}

// TestStreamTicketKeptWhenToldToRetry: a ticket refused with a problem that says to try again
// (the user's sockets are all open) is not spent: it opens the socket once one is closed.
func TestStreamTicketKeptWhenToldToRetry(t *testing.T) {
	h, _ := whoamiEngine(t, engine.Config{}, &voice.Options{MaxSocketsPerUser: 1})
	first := h.dial(t, headers())
	ticket, _ := mintTicket(t, h, headers())
	protocols := []string{voice.SubprotocolEngine, "ticket." + ticket}
	if _, p := dialTicket(t, h.wsURL(), protocols, nil); p == nil || p.Status != http.StatusTooManyRequests {
		t.Fatalf("a second socket of a user allowed one: %+v", p)
	}
	first.ws.Close(websocket.StatusNormalClosure, "")
	var p *engine.Problem
	for range 100 { // the first socket's slot is given back once its goroutine ends
		if _, p = dialTicket(t, h.wsURL(), protocols, nil); p == nil || p.Status != http.StatusTooManyRequests {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if p != nil {
		t.Errorf("the ticket, refused for now, then: %d %s", p.Status, p.Code)
	}
}
