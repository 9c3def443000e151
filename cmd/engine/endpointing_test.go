package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/deepgram/deepgramtest"
	"github.com/convengine/engine/internal/testkit"
)

// A tenant whose speech section says end_of_speech: recognizer has its utterances ended by the
// streaming recogniser's endpointing (Deepgram's speech_final, here its stand-in's) on a server
// whose own detector ends none (-end-of-speech 0): the user stops speaking and is answered. A
// tenant that does not say so is not: its utterance waits for the client's end_of_speech.
func TestTenantChoosesRecognizerEndOfSpeech(t *testing.T) {
	dg := deepgramtest.New("dg-key")
	defer dg.Close()
	dg.Hear = func([]int16, int) string { return "what is my balance" }
	dg.Endpointing = 300 * time.Millisecond
	path := writeTenants(t,
		demoTenantAs("pk_ends", map[string]any{"model": "intent", "speech": map[string]any{"recognizer": "deepgram", "end_of_speech": "recognizer"}}),
		demoTenantAs("pk_waits", map[string]any{"model": "intent", "speech": map[string]any{"recognizer": "deepgram"}}))
	base, _, logs := startServerLogs(t, []string{"-tenants", path, "-end-of-speech", "0"},
		map[string]string{"DEEPGRAM_API_KEY": "dg-key", "DEEPGRAM_BASE_URL": dg.URL})

	// speak opens key's voice socket, says something and falls silent, and returns the socket's
	// messages.
	speak := func(key string) (*websocket.Conn, <-chan socketMessage) {
		req := demoRequest(t, "GET", base, "")
		req.Header.Set("X-Engine-Key", key)
		ws, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(base, "http")+engine.PathStream, &websocket.DialOptions{HTTPHeader: req.Header})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.CloseNow() })
		ws.SetReadLimit(1 << 20)
		msgs := make(chan socketMessage, 64)
		go func() {
			defer close(msgs)
			for {
				_, data, err := ws.Read(context.Background())
				if err != nil {
					return
				}
				var m socketMessage
				json.Unmarshal(data, &m)
				m.raw = data
				msgs <- m
			}
		}()
		send := func(pcm []byte) {
			msg, _ := json.Marshal(map[string]string{"type": "audio", "chunk": base64.StdEncoding.EncodeToString(pcm)})
			ws.Write(t.Context(), websocket.MessageText, msg)
		}
		pcm := audio.AppendPCM(nil, testkit.Voiced(16000))
		for i := 0; i < len(pcm); i += 640 {
			send(pcm[i:min(i+640, len(pcm))])
		}
		// Then silence, in real time, as a microphone sends it.
		go func() {
			silence := make([]byte, 640)
			for ctx := t.Context(); ctx.Err() == nil; time.Sleep(20 * time.Millisecond) {
				send(silence)
			}
		}()
		return ws, msgs
	}

	if _, msgs := speak("pk_ends"); heard(t, msgs, 10*time.Second) != "what is my balance" {
		t.Errorf("pk_ends: no transcript without end_of_speech: its recogniser did not end the utterance (Deepgram was asked %q)\n%s", dg.Queries(), logs.String())
	}
	ws, msgs := speak("pk_waits")
	if got := heard(t, msgs, 1500*time.Millisecond); got != "" {
		t.Errorf("pk_waits: heard %q before end_of_speech, from a recogniser's endpointing it did not choose", got)
	}
	ws.Write(t.Context(), websocket.MessageText, []byte(`{"type":"end_of_speech"}`))
	if got := heard(t, msgs, 10*time.Second); got != "what is my balance" {
		t.Errorf("pk_waits: heard %q after end_of_speech", got)
	}
}

// heard reads msgs for up to wait and returns the transcript the socket sent, "" for none.
func heard(t *testing.T, msgs <-chan socketMessage, wait time.Duration) string {
	t.Helper()
	timeout := time.After(wait)
	for {
		select {
		case m, ok := <-msgs:
			switch {
			case !ok:
				return ""
			case m.Type == "transcript":
				return m.Text
			case m.Type == "error":
				t.Fatalf("socket: %s", m.raw)
			}
		case <-timeout:
			return ""
		}
	}
}
