package voice_test

import (
	"context"
	"encoding/base64"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

// FuzzStreamMessage sends arbitrary text messages over a real voice socket to the demo tenant
// (the intent model, the demo bank, bench speech) and checks, after each, that the socket
// still answers: a cancel gets its cancelled message. A message may end the socket only as the
// protocol says (1008, 1009); nothing may panic.
func FuzzStreamMessage(f *testing.F) {
	chunk := base64.StdEncoding.EncodeToString(make([]byte, 640))
	for _, s := range []string{
		`{"type":"audio","chunk":"` + chunk + `"}`,
		`{"type":"audio","chunk":"` + chunk + `","context":{"sessionId":"c1","locale":"es-MX"}}`,
		`{"type":"end_of_speech"}`,
		`{"type":"text","transcript":"what is my balance"}`,
		`{"type":"text","transcript":"send 20 dollars to Alex"}`,
		`{"type":"cancel"}`,
		`{"type":"audio","chunk":"AAA","sampleRate":8000}`,
		`{"type":"text","context":{"screen":{"a":[1,2,{"b":null}]},"country_code":"MX"}}`,
		`{"type":"nope"}`, `{}`, `[]`, `null`, `{"type":`, "\xff\xfe",
	} {
		f.Add(s)
	}
	logs := &enginetest.Logs{} // warnings and errors only: the fuzzer sends many messages
	d := enginetest.NewDemo(f, &enginetest.DemoOptions{Config: engine.Config{
		Synthesizer: &enginetest.BenchSynthesizer{Duration: 50 * time.Millisecond, SampleRate: 16000},
		Transcriber: &enginetest.BenchTranscriber{Transcript: "what is my balance"},
		Logger:      slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}})
	srv := d.Server
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + engine.PathStream

	var ws *websocket.Conn
	f.Cleanup(func() {
		if ws != nil {
			ws.CloseNow()
		}
	})
	f.Fuzz(func(t *testing.T, msg string) {
		if len(msg) > 60<<10 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if ws == nil {
			c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: demoHeaders()})
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			c.SetReadLimit(1 << 20)
			ws = c
		}
		if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatalf("write: %v", err)
		}
		if err := ws.Write(ctx, websocket.MessageText, []byte(`{"type":"cancel"}`)); err != nil {
			t.Fatalf("write: %v", err)
		}
		for {
			_, data, err := ws.Read(ctx)
			if err != nil {
				code := websocket.CloseStatus(err)
				ws.CloseNow()
				ws = nil
				if code == websocket.StatusPolicyViolation || code == websocket.StatusMessageTooBig || code == websocket.StatusInvalidFramePayloadData {
					break // a message the protocol refuses by closing: the next input opens another
				}
				t.Fatalf("after %q the socket ended: %v", msg, err)
			}
			if strings.HasPrefix(string(data), `{"type":"cancelled"`) {
				break
			}
		}
		if l := logs.String(); strings.Contains(l, "panicked") {
			t.Fatalf("after %q:\n%s", msg, l)
		}
	})
}
