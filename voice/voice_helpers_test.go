package voice_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/widgets"
)

// newDemoHarness serves the demo bank tenant as cmd/engine does: the intent model, the demo
// bank over HTTP, espeak-ng and pocketsphinx. Fields of cfg already set are kept.
func newDemoHarness(t *testing.T, cfg engine.Config) *harness {
	t.Helper()
	d := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: testkit.WithSpeech(t, cfg)})
	return harnessOf(t, d.Server, d.Engine, d.Logs)
}

func demoHeaders() http.Header {
	h := headers()
	h.Set("X-Engine-Key", demobank.EngineKey)
	return h
}

// serverMessage is any message of the voice socket.
type serverMessage struct {
	Type       string       `json:"type"`
	Text       string       `json:"text"`
	Disclosure string       `json:"disclosure"`
	Delta      string       `json:"delta"`
	Seq        int          `json:"seq"`
	SampleRate int          `json:"sampleRate"`
	Chunk      string       `json:"chunk"`
	Spec       widgets.Spec `json:"spec"`
	TurnID     string       `json:"turnId"`
	Error      struct {
		Code      string `json:"code"`
		Message   string `json:"message"`
		Retryable bool   `json:"retryable"`
	} `json:"error"`
	raw []byte
}

// voiceClient is a client of the voice socket.
type voiceClient struct {
	t  testing.TB
	ws *websocket.Conn
}

func (h *harness) wsURL() string {
	return "ws" + strings.TrimPrefix(h.srv.URL, "http") + engine.PathStream
}

// dial opens the voice socket with hdr; it fails the test when the upgrade fails.
func (h *harness) dial(t testing.TB, hdr http.Header) *voiceClient {
	t.Helper()
	ws, resp, err := websocket.Dial(t.Context(), h.wsURL(), &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		body := ""
		if resp != nil && resp.Body != nil {
			b, _ := io.ReadAll(resp.Body)
			body = string(b)
		}
		t.Fatalf("dial: %v %s", err, body)
	}
	ws.SetReadLimit(1 << 20)
	c := &voiceClient{t: t, ws: ws}
	t.Cleanup(func() { ws.CloseNow() })
	return c
}

func (c *voiceClient) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.ws.Write(c.t.Context(), websocket.MessageText, b); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// sendAudio streams pcm in 20 ms frames, with ctx on the first frame when it is not nil.
func (c *voiceClient) sendAudio(pcm []int16, ctx map[string]any) {
	c.t.Helper()
	const frame = 320 // 20 ms at 16 kHz
	for i := 0; i < len(pcm); i += frame {
		m := map[string]any{"type": "audio", "chunk": base64.StdEncoding.EncodeToString(audio.AppendPCM(nil, pcm[i:min(i+frame, len(pcm))]))}
		if i == 0 && ctx != nil {
			m["context"] = ctx
		}
		c.send(m)
	}
}

// next reads one message, failing the test after a while.
func (c *voiceClient) next() serverMessage {
	c.t.Helper()
	m, err := c.read(30 * time.Second)
	if err != nil {
		c.t.Fatalf("reading the socket: %v", err)
	}
	return m
}

func (c *voiceClient) read(wait time.Duration) (serverMessage, error) {
	ctx, cancel := context.WithTimeout(c.t.Context(), wait)
	defer cancel()
	typ, b, err := c.ws.Read(ctx)
	if err != nil {
		return serverMessage{}, err
	}
	if typ != websocket.MessageText {
		c.t.Fatalf("a %v message", typ)
	}
	var m serverMessage
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("message %s: %v", b, err)
	}
	m.raw = b
	return m, nil
}

// expect reads one message and fails unless it has type typ.
func (c *voiceClient) expect(typ string) serverMessage {
	c.t.Helper()
	m := c.next()
	if m.Type != typ {
		c.t.Fatalf("got %s, want a %s message", m.raw, typ)
	}
	return m
}

// closeCode reads until the socket ends and returns its close status, or -1.
func (c *voiceClient) closeCode() websocket.StatusCode {
	c.t.Helper()
	for {
		_, err := c.read(30 * time.Second)
		if err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

// voiceTurn is one turn of the socket as a client sees it.
type voiceTurn struct {
	msgs       []serverMessage
	transcript string
	speak      string
	audio      []int16
	sampleRate int
	spec       widgets.Spec
	turnID     string
}

func (r *voiceTurn) types() string {
	var b []string
	last := ""
	for _, m := range r.msgs {
		if m.Type != last {
			b = append(b, m.Type)
		}
		last = m.Type
	}
	return strings.Join(b, ",")
}

// turn reads one turn up to its done message and checks its order: transcript, speak and
// audio messages, spec, done.
func (c *voiceClient) turn() *voiceTurn {
	c.t.Helper()
	r := &voiceTurn{}
	seq := 0
	for {
		m := c.next()
		r.msgs = append(r.msgs, m)
		switch m.Type {
		case "transcript":
			if len(r.msgs) != 1 {
				c.t.Errorf("transcript is message %d of the turn", len(r.msgs))
			}
			r.transcript = m.Text
		case "speak":
			r.speak += m.Delta
		case "audio":
			seq++
			if m.Seq != seq {
				c.t.Errorf("audio message %d has seq %d", seq, m.Seq)
			}
			if r.sampleRate != 0 && m.SampleRate != r.sampleRate {
				c.t.Errorf("the sample rate changed from %d to %d", r.sampleRate, m.SampleRate)
			}
			r.sampleRate = m.SampleRate
			b, err := base64.StdEncoding.DecodeString(m.Chunk)
			if err != nil || len(b)%2 != 0 || len(b) == 0 {
				c.t.Errorf("audio chunk of %d bytes: %v", len(b), err)
			}
			r.audio = append(r.audio, audio.PCMFromBytes(b)...)
		case "spec":
			r.spec = m.Spec
		case "done":
			r.turnID = m.TurnID
			if got := r.types(); !strings.HasPrefix(got, "transcript,") || !strings.HasSuffix(got, ",spec,done") {
				c.t.Errorf("message order %s", got)
			}
			if r.turnID == "" || r.turnID != r.spec.Meta.TurnID {
				c.t.Errorf("done has turn %q, the spec %q", r.turnID, r.spec.Meta.TurnID)
			}
			return r
		case "error", "cancelled":
			c.t.Fatalf("unexpected %s", m.raw)
		default:
			c.t.Fatalf("unknown message %s", m.raw)
		}
	}
}
