package client_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/convengine/engine"
	"github.com/convengine/engine/client"
)

// TestStreamTicketOpensTheSocket: a ticket minted through a bound session opens the voice
// socket once, with no header at all, as a browser would; the socket answers in the session's
// conversation as the client's user.
func TestStreamTicketOpensTheSocket(t *testing.T) {
	d := newDemo(t, engine.Config{})
	c := d.client(nil)
	if _, err := c.CreateSession(t.Context(), &client.SessionOptions{Bind: true}); err != nil {
		t.Fatal(err)
	}
	tk, err := c.StreamTicket(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d.scheme(client.PathStreamTicket) != "DPoP" {
		t.Error("the ticket was asked for without the session's proof")
	}
	if s := fmt.Sprint(tk); strings.Contains(s, tk.Ticket) {
		t.Errorf("the ticket prints itself: %s", s)
	}
	url := "ws" + strings.TrimPrefix(d.url, "http") + client.PathStream
	ws, _, err := websocket.Dial(t.Context(), url, &websocket.DialOptions{Subprotocols: tk.Protocols()})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if ws.Subprotocol() != client.SubprotocolEngine {
		t.Errorf("subprotocol %q", ws.Subprotocol())
	}
	ws.Write(t.Context(), websocket.MessageText, []byte(`{"type":"text","transcript":"what is my balance"}`))
	for {
		_, b, err := ws.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Type string
			Spec struct{ Speak string }
		}
		json.Unmarshal(b, &m)
		if m.Type == "error" {
			t.Fatalf("%s", b)
		}
		if m.Type == "spec" {
			if !strings.Contains(m.Spec.Speak, "$1,234.56") {
				t.Errorf("spec %s", b)
			}
			break
		}
	}
	_, resp, err := websocket.Dial(t.Context(), url, &websocket.DialOptions{Subprotocols: tk.Protocols()})
	if err == nil || resp == nil || resp.StatusCode != 401 {
		t.Errorf("the ticket opened a second socket: %v", err)
	}
}
