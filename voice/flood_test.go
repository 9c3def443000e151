package voice_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine"
	"github.com/convengine/engine/deepgram"
	"github.com/convengine/engine/deepgram/deepgramtest"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/voice"
)

// TestSocketFloodAgainstDeepgram opens many voice sockets at once against Deepgram's stand-in:
// past MaxSockets the upgrade is refused with a 503 overloaded problem (RFC 9457), and of the
// sockets that opened and speak at once, at most MaxListening hold a live connection to
// Deepgram; the others are heard after their end of speech by the pre-recorded API. Every
// user is answered, and nothing is left running once they go.
func TestSocketFloodAgainstDeepgram(t *testing.T) {
	checkLeaks(t)
	dg := deepgramtest.New(deepgramKey)
	t.Cleanup(dg.Close)
	tr, err := deepgram.New(&deepgram.Options{APIKey: deepgramKey, BaseURL: dg.URL, FinalTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const sockets, listening, flood = 4, 2, 16
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{threeSentences(), threeSentences(), threeSentences(), threeSentences()}}
	h := newHarnessWith(t, engine.Config{Model: model, Transcriber: tr, MaxConcurrentTurns: sockets},
		&voice.Options{MaxSockets: sockets, MaxListening: listening})
	h.shutdownAtEnd(t)

	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		opened  []*websocket.Conn
		refused []*http.Response
	)
	for i := range flood {
		wg.Go(func() {
			hdr := userHeaders(fmt.Sprint("flood-user-", i))
			ws, resp, err := websocket.Dial(t.Context(), h.wsURL(), &websocket.DialOptions{HTTPHeader: hdr})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				opened = append(opened, ws)
			case resp != nil:
				refused = append(refused, resp)
			default:
				t.Errorf("dial: %v", err)
			}
		})
	}
	wg.Wait()
	if len(opened) != sockets || len(refused) != flood-sockets {
		t.Fatalf("%d sockets opened, %d refused; want %d and %d", len(opened), len(refused), sockets, flood-sockets)
	}
	for _, resp := range refused {
		p := readProblem(t, resp)
		if resp.StatusCode != http.StatusServiceUnavailable || p.Code != engine.CodeOverloaded || resp.Header.Get("Content-Type") != "application/problem+json" || resp.Header.Get("Retry-After") == "" {
			t.Errorf("refused with %d %s (%s), Retry-After %q", resp.StatusCode, p.Code, resp.Header.Get("Content-Type"), resp.Header.Get("Retry-After"))
		}
	}
	clients := make([]*voiceClient, len(opened))
	for i, ws := range opened {
		ws.SetReadLimit(1 << 20)
		clients[i] = &voiceClient{t: t, ws: ws}
		t.Cleanup(func() { ws.CloseNow() })
	}
	// Every socket speaks at once; none has ended its utterance yet.
	for _, c := range clients {
		c.sendAudio(voiced(16000), nil)
	}
	for _, c := range clients {
		c.sendAudio(make([]int16, 3200), nil)
		c.send(map[string]any{"type": "end_of_speech"})
	}
	for i, c := range clients {
		if r := c.turn(); r.transcript != "what is my balance" {
			t.Errorf("socket %d heard %q", i, r.transcript)
		}
	}
	if n := dg.MaxLive(); n == 0 || n > listening {
		t.Errorf("%d live connections to Deepgram at once, want 1 to %d", n, listening)
	}
	for _, c := range clients {
		c.ws.Close(websocket.StatusNormalClosure, "")
	}
}
