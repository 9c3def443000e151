package voice_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/internal/proc"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/voice"
)

// threeSentences is a model's answer in deltas: three sentences.
func threeSentences() []engine.ModelEvent {
	return enginetest.Text("Hello ", "there. ", "Your balance ", "is fine. ", "Anything ", "else?")
}

// longAnswer is an answer that takes a while to stream with a delay between deltas.
func longAnswer(sentences int) []engine.ModelEvent {
	var words []string
	for range sentences {
		words = append(words, "This ", "is ", "a ", "sentence. ")
	}
	return enginetest.Text(words...)
}

// shutdownAtEnd closes the engine's sockets and its server when the test ends, after the
// clients dialled later have gone, so that leak checks find nothing left.
func (h *harness) shutdownAtEnd(t *testing.T) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.engine.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		h.srv.Close()
	})
}

// checkLeaks fails t if goroutines started during the test outlive it and its cleanups.
func checkLeaks(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

func TestStreamTypedTurnsKeepTheConversation(t *testing.T) {
	checkLeaks(t)
	var (
		mu   sync.Mutex
		reqs []*engine.ModelRequest
	)
	model := modelFunc(func(_ context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		mu.Lock()
		reqs = append(reqs, req)
		mu.Unlock()
		return threeSentences()
	})
	synth := &fakeSynthesizer{Rate: 24000, Seconds: 0.5}
	h := newHarness(t, engine.Config{Model: model, Synthesizer: synth})
	h.shutdownAtEnd(t)
	c := h.dial(t, headers())

	c.send(map[string]any{"type": "text", "transcript": " hi ", "context": map[string]any{
		"sessionId": "conv-7", "locale": "es-MX", "country_code": "mx", "screen": "home"}})
	r := c.turn()
	if r.transcript != "hi" || r.spec.Meta.Transcript != "" {
		t.Errorf("transcript %q, meta.transcript %q", r.transcript, r.spec.Meta.Transcript)
	}
	if r.spec.Speak != "Hello there. Your balance is fine. Anything else?" || r.speak != r.spec.Speak {
		t.Errorf("speak %q, deltas %q", r.spec.Speak, r.speak)
	}
	if m := r.spec.Meta; m.ConversationID != "conv-7" || m.Locale != "es-MX" || m.Direction != "ltr" {
		t.Errorf("meta %+v", m)
	}
	// Three sentences of half a second each at 24 kHz.
	if r.sampleRate != 24000 || len(r.audio) != 3*12000 {
		t.Errorf("%d samples at %d Hz", len(r.audio), r.sampleRate)
	}
	if r.msgs[0].TurnID != r.turnID {
		t.Errorf("the transcript names turn %q, done %q", r.msgs[0].TurnID, r.turnID)
	}

	c.send(map[string]any{"type": "text", "transcript": "and again"})
	r2 := c.turn()
	if r2.turnID == r.turnID || r2.spec.Meta.ConversationID != "conv-7" {
		t.Errorf("second turn %q in %q", r2.turnID, r2.spec.Meta.ConversationID)
	}
	mu.Lock()
	last := reqs[len(reqs)-1]
	mu.Unlock()
	var got []string
	for _, m := range last.Messages {
		got = append(got, string(m.Role)+": "+m.Content)
	}
	want := []string{"user: hi", "assistant: " + r.spec.Speak, "user: <app_context>\n{\"screen\":\"home\"}\n</app_context>", "user: and again"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the second turn's model saw %q, want %q", got, want)
	}
	if last.Mode != engine.ModeVoice || last.Country != "MX" || last.Screen != "home" || last.Locale != "es-MX" {
		t.Errorf("model request: mode %s, country %s, screen %s, locale %s", last.Mode, last.Country, last.Screen, last.Locale)
	}
}

func TestStreamSpeaksWhileTheModelWrites(t *testing.T) {
	checkLeaks(t)
	model := &enginetest.ScriptedModel{Delay: 100 * time.Millisecond, Steps: [][]engine.ModelEvent{threeSentences()}}
	h := newHarness(t, engine.Config{Model: model, Synthesizer: &fakeSynthesizer{Rate: 22050, Seconds: 0.2}})
	h.shutdownAtEnd(t)
	c := h.dial(t, headers())
	c.send(map[string]any{"type": "text", "transcript": "hi"})
	r := c.turn()
	firstAudio, lastSpeak := -1, -1
	for i, m := range r.msgs {
		switch {
		case m.Type == "audio" && firstAudio < 0:
			firstAudio = i
		case m.Type == "speak":
			lastSpeak = i
		}
	}
	if firstAudio < 0 || firstAudio > lastSpeak {
		t.Errorf("the first audio came at message %d, after the last delta (%d): %s", firstAudio, lastSpeak, r.types())
	}
}

func TestStreamCancelStopsModelAndSynthesis(t *testing.T) {
	checkLeaks(t)
	model := &enginetest.ScriptedModel{Delay: 20 * time.Millisecond, Steps: [][]engine.ModelEvent{longAnswer(30)}}
	h := newHarness(t, engine.Config{Model: model, Synthesizer: newEspeak(t)})
	h.shutdownAtEnd(t)
	c := h.dial(t, headers())
	c.send(map[string]any{"type": "text", "transcript": "talk to me"})
	turnID := c.expect("transcript").TurnID
	for c.next().Type != "audio" {
	}
	c.send(map[string]any{"type": "cancel"})
	for {
		m := c.next()
		if m.Type == "cancelled" {
			if m.TurnID != turnID {
				t.Errorf("cancelled names turn %q, want %q", m.TurnID, turnID)
			}
			break
		}
		if m.Type != "speak" && m.Type != "audio" {
			t.Fatalf("got %s before cancelled", m.raw)
		}
	}
	waitFor(t, "the model stops", func() bool { return model.Cancelled() == 1 })
	proc.NoChildren(t, "espeak-ng")

	// Nothing of the cancelled turn follows; the socket takes the next turn.
	c.send(map[string]any{"type": "cancel"})
	if m := c.next(); m.Type != "cancelled" || m.TurnID != "" {
		t.Errorf("a cancel without a turn: %s", m.raw)
	}
	model.Steps = [][]engine.ModelEvent{threeSentences()}
	c.send(map[string]any{"type": "text", "transcript": "short, please"})
	if r := c.turn(); r.spec.Speak != "Hello there. Your balance is fine. Anything else?" || len(r.audio) == 0 {
		t.Errorf("the turn after a cancel: %q with %d samples", r.spec.Speak, len(r.audio))
	}
}

func TestStreamBargeIn(t *testing.T) {
	checkLeaks(t)
	var heard atomic.Int64
	transcriber := transcriberFunc(func(_ context.Context, pcm []int16, rate int, _ string) (string, error) {
		heard.Store(int64(len(pcm)))
		return "a second question", nil
	})
	model := &enginetest.ScriptedModel{Delay: 20 * time.Millisecond, Steps: [][]engine.ModelEvent{longAnswer(30)}}
	h := newHarness(t, engine.Config{Model: model, Synthesizer: &fakeSynthesizer{Rate: 22050, Seconds: 0.3}, Transcriber: transcriber})
	h.shutdownAtEnd(t)
	c := h.dial(t, headers())
	c.send(map[string]any{"type": "text", "transcript": "talk to me"})
	first := c.expect("transcript").TurnID
	c.expect("speak")

	// The user speaks over the answer.
	c.sendAudio(voiced(16000), nil)
	for {
		m := c.next()
		if m.Type == "cancelled" {
			if m.TurnID != first {
				t.Errorf("cancelled names %q, want %q", m.TurnID, first)
			}
			break
		}
	}
	waitFor(t, "the model stops", func() bool { return model.Cancelled() == 1 })
	model.Steps = [][]engine.ModelEvent{threeSentences()}
	c.sendAudio(make([]int16, 1600), nil) // the rest of the utterance
	c.send(map[string]any{"type": "end_of_speech"})
	r := c.turn()
	if r.transcript != "a second question" || r.spec.Meta.Transcript != "a second question" {
		t.Errorf("transcript %q", r.transcript)
	}
	if n := heard.Load(); n < 8000 || n > 17600 {
		t.Errorf("the transcriber got %d samples, want the speech of the 17600 sent after the first answer", n)
	}
}

func TestStreamRefusesBadAudio(t *testing.T) {
	checkLeaks(t)
	var calls atomic.Int64
	transcriber := transcriberFunc(func(context.Context, []int16, int, string) (string, error) {
		calls.Add(1)
		return "hello", nil
	})
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}
	h := newHarness(t, engine.Config{Model: model, Transcriber: transcriber})
	h.shutdownAtEnd(t)
	c := h.dial(t, headers())
	good := base64.StdEncoding.EncodeToString(make([]byte, 640))
	cases := []struct {
		name string
		msg  map[string]any
		code string
	}{
		{"bad base64", map[string]any{"type": "audio", "chunk": "!!not base64!!"}, engine.CodeInvalidAudio},
		{"half a sample", map[string]any{"type": "audio", "chunk": base64.StdEncoding.EncodeToString([]byte{1, 2, 3})}, engine.CodeInvalidAudio},
		{"wrong sample rate", map[string]any{"type": "audio", "chunk": good, "sampleRate": 22050}, engine.CodeInvalidAudio},
		{"no chunk", map[string]any{"type": "audio"}, engine.CodeInvalidRequest},
		{"chunk of the wrong type", map[string]any{"type": "audio", "chunk": 12}, engine.CodeInvalidRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			c.send(map[string]any{"type": "audio", "chunk": good}) // a good start…
			c.send(tc.msg)                                         // …spoilt
			if m := c.expect("error"); m.Error.Code != tc.code || m.Error.Message == "" || m.Error.Retryable {
				t.Errorf("error %s, want %s", m.raw, tc.code)
			}
			c.send(map[string]any{"type": "audio", "chunk": good}) // dropped with the utterance
			c.send(map[string]any{"type": "end_of_speech"})        // ends it, silently
			c.send(map[string]any{"type": "text", "transcript": "still there?"})
			if r := c.turn(); r.transcript != "still there?" {
				t.Errorf("next turn heard %q", r.transcript)
			}
		})
	}
	if calls.Load() != 0 {
		t.Errorf("refused audio was transcribed %d times", calls.Load())
	}
}

func TestStreamUtteranceTooLong(t *testing.T) {
	checkLeaks(t)
	var calls atomic.Int64
	transcriber := transcriberFunc(func(_ context.Context, pcm []int16, _ int, _ string) (string, error) {
		calls.Add(1)
		return "hello", nil
	})
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}, Transcriber: transcriber})
	h.shutdownAtEnd(t)
	c := h.dial(t, headers())
	second := base64.StdEncoding.EncodeToString(audio.AppendPCM(nil, voiced(16000))) // one second in one frame
	for range 61 {
		c.send(map[string]any{"type": "audio", "chunk": second})
	}
	c.send(map[string]any{"type": "end_of_speech"})
	if m := c.expect("error"); m.Error.Code != engine.CodeUtteranceTooLong {
		t.Errorf("got %s", m.raw)
	}
	// Exactly 60 seconds is one utterance.
	for range 60 {
		c.send(map[string]any{"type": "audio", "chunk": second})
	}
	c.send(map[string]any{"type": "end_of_speech"})
	if r := c.turn(); r.transcript != "hello" {
		t.Errorf("transcript %q", r.transcript)
	}
	if calls.Load() != 1 {
		t.Errorf("%d transcriptions, want the one of 60 seconds", calls.Load())
	}
}

func TestStreamSilentUtterance(t *testing.T) {
	checkLeaks(t)
	h := newDemoHarness(t, engine.Config{})
	h.shutdownAtEnd(t)
	c := h.dial(t, demoHeaders())
	c.sendAudio(make([]int16, 16000), nil)
	c.send(map[string]any{"type": "end_of_speech"})
	if m := c.expect("error"); m.Error.Code != engine.CodeNoSpeech {
		t.Errorf("a second of silence: %s", m.raw)
	}
	c.send(map[string]any{"type": "end_of_speech"})
	if m := c.expect("error"); m.Error.Code != engine.CodeNoSpeech {
		t.Errorf("end_of_speech without audio: %s", m.raw)
	}
	c.send(map[string]any{"type": "text", "transcript": "what's my balance"})
	if r := c.turn(); len(r.spec.Widgets) != 1 {
		t.Errorf("the socket does not answer after silence: %+v", r.spec)
	}
}

func TestStreamOversizeFrame(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}})
	h.shutdownAtEnd(t)
	c := h.dial(t, headers())
	big := map[string]any{"type": "audio", "chunk": base64.StdEncoding.EncodeToString(make([]byte, 50<<10))} // 68 KiB of JSON
	c.send(big)
	if code := c.closeCode(); code != websocket.StatusMessageTooBig {
		t.Errorf("close %d, want 1009", code)
	}
}

func TestStreamMessagesTheClientGetsWrong(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}})
	h.shutdownAtEnd(t)
	c := h.dial(t, headers())
	for _, tc := range []struct{ msg, code, detail string }{
		{`not json`, engine.CodeInvalidRequest, "not valid JSON"},
		{`{"type":"dance"}`, engine.CodeInvalidRequest, "type"},
		{`{}`, engine.CodeInvalidRequest, "type"},
		{`{"type":"text"}`, engine.CodeInvalidRequest, "transcript"},
		{`{"type":"text","transcript":"   "}`, engine.CodeInvalidRequest, "transcript"},
		{`{"type":"text","transcript":7}`, engine.CodeInvalidRequest, "transcript"},
		{`{"type":"text","transcript":"hi","context":{"locale":"not a locale"}}`, engine.CodeInvalidRequest, "context.locale"},
		{`{"type":"text","transcript":"hi","context":{"sessionId":"no spaces allowed"}}`, engine.CodeInvalidRequest, "context.sessionId"},
		{`{"type":"text","transcript":"hi","context":[]}`, engine.CodeInvalidRequest, "context"},
		{`{"type":"end_of_speech"}`, engine.CodeNoSpeech, "without audio"},
	} {
		if err := c.ws.Write(t.Context(), websocket.MessageText, []byte(tc.msg)); err != nil {
			t.Fatal(err)
		}
		m := c.expect("error")
		if m.Error.Code != tc.code || !strings.Contains(m.Error.Message, tc.detail) {
			t.Errorf("%s: got %s, want %s naming %q", tc.msg, m.raw, tc.code, tc.detail)
		}
	}
	// A turn without any context works, with the tenant's locale and a new conversation.
	c.send(map[string]any{"type": "text", "transcript": "hello"})
	if r := c.turn(); r.spec.Meta.Locale != "en" || r.spec.Meta.ConversationID == "" {
		t.Errorf("meta %+v", r.spec.Meta)
	}
	if err := c.ws.Write(t.Context(), websocket.MessageBinary, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if code := c.closeCode(); code != websocket.StatusUnsupportedData {
		t.Errorf("a binary message: close %d, want 1003", code)
	}
}

func TestStreamUpgradeRequest(t *testing.T) {
	checkLeaks(t)
	h := newHarnessWith(t, engine.Config{Model: &enginetest.ScriptedModel{}}, &voice.Options{OriginPatterns: []string{"app.example.com", "https://*.trusted.example"}})
	h.shutdownAtEnd(t)
	dial := func(hdr http.Header) (*websocket.Conn, *http.Response, error) {
		ws, resp, err := websocket.Dial(t.Context(), h.wsURL(), &websocket.DialOptions{HTTPHeader: hdr})
		if ws != nil {
			ws.CloseNow()
		}
		return ws, resp, err
	}
	refused := []struct {
		name   string
		change func(http.Header)
		status int
		code   string
	}{
		{"no engine key", func(h http.Header) { h.Del("X-Engine-Key") }, 401, engine.CodeUnknownEngineKey},
		{"no user token", func(h http.Header) { h.Del("X-Token") }, 401, engine.CodeMissingUserToken},
		{"bad request id", func(h http.Header) { h.Set("X-Request-Id", "nope") }, 400, engine.CodeInvalidRequestID},
		{"another origin", func(h http.Header) { h.Set("Origin", "https://evil.example") }, 403, engine.CodeOriginNotAllowed},
		{"a pattern's scheme", func(h http.Header) { h.Set("Origin", "http://a.trusted.example") }, 403, engine.CodeOriginNotAllowed},
		{"a malformed origin", func(h http.Header) { h.Set("Origin", "::") }, 403, engine.CodeOriginNotAllowed},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			hdr := headers()
			tc.change(hdr)
			_, resp, err := dial(hdr)
			if err == nil || resp == nil {
				t.Fatalf("the upgrade passed: %v", err)
			}
			var p engine.Problem
			json.NewDecoder(resp.Body).Decode(&p)
			if resp.StatusCode != tc.status || p.Code != tc.code || resp.Header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("got %d %q (%s)", resp.StatusCode, p.Code, resp.Header.Get("Content-Type"))
			}
		})
	}
	for _, origin := range []string{"", "https://app.example.com", "https://x.trusted.example", "http://" + strings.TrimPrefix(h.srv.URL, "http://")} {
		hdr := headers()
		if origin != "" {
			hdr.Set("Origin", origin)
		}
		if _, resp, err := dial(hdr); err != nil {
			t.Errorf("origin %q: %v", origin, err)
		} else if resp.Header.Get("X-Request-Id") != "prod-test-1" {
			t.Errorf("origin %q: the upgrade does not echo the request id", origin)
		}
	}
	if _, err := voice.New(h.engine, &voice.Options{OriginPatterns: []string{"[bad"}}); !errors.Is(err, engine.ErrConfig) {
		t.Errorf("a malformed origin pattern: %v", err)
	}
}

func TestStreamIdleClose(t *testing.T) {
	checkLeaks(t)
	h := newHarnessWith(t, engine.Config{Model: &enginetest.ScriptedModel{}}, &voice.Options{IdleTimeout: 200 * time.Millisecond})
	h.shutdownAtEnd(t)
	c := h.dial(t, headers())
	if code := c.closeCode(); code != websocket.StatusNormalClosure {
		t.Errorf("close %d, want 1000", code)
	}
}

func TestStreamPings(t *testing.T) {
	checkLeaks(t)
	h := newHarnessWith(t, engine.Config{Model: &enginetest.ScriptedModel{}}, &voice.Options{PingInterval: 20 * time.Millisecond})
	h.shutdownAtEnd(t)

	// A client that reads answers the pings and stays.
	var pings atomic.Int64
	ws, _, err := websocket.Dial(t.Context(), h.wsURL(), &websocket.DialOptions{HTTPHeader: headers(),
		OnPingReceived: func(context.Context, []byte) bool { pings.Add(1); return true }})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	readCtx := ws.CloseRead(t.Context())
	waitFor(t, "five pings arrive", func() bool { return pings.Load() >= 5 })
	if readCtx.Err() != nil {
		t.Error("the socket of a client that answers pings was closed")
	}

	// A client that never reads does not answer, and is let go.
	mute := h.dial(t, headers())
	_ = mute
	waitFor(t, "a ping fails", func() bool { return strings.Contains(h.logs.String(), "voice socket ping failed") })
}

func TestStreamClientThatNeverReads(t *testing.T) {
	checkLeaks(t)
	synth := &fakeSynthesizer{Rate: 22050, Endless: true}
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{threeSentences()}}
	h := newHarnessWith(t, engine.Config{Model: model, Synthesizer: synth}, &voice.Options{WriteTimeout: 300 * time.Millisecond, SendQueue: 4})
	h.shutdownAtEnd(t)
	c := h.dial(t, headers())
	c.send(map[string]any{"type": "text", "transcript": "talk forever"})
	// The synthesizer would speak forever; the server reads it only as fast as the client
	// takes it, and lets the client go when it stops taking.
	waitFor(t, "the server gives up on the client", func() bool { return synth.Closed.Load() >= 1 })
	const bound = 64 << 20
	if n := synth.Read.Load(); n > bound {
		t.Errorf("the server read %d MiB of audio for a client that reads nothing", n>>20)
	}
	waitFor(t, "the socket is closed", func() bool { return strings.Contains(h.logs.String(), `"msg":"voice socket closed"`) })
	t.Logf("read %.1f MiB of audio before the client was let go", float64(synth.Read.Load())/(1<<20))
}

func TestStreamDisconnectLeavesNothingBehind(t *testing.T) {
	checkLeaks(t)
	model := &enginetest.ScriptedModel{Delay: 20 * time.Millisecond, Steps: [][]engine.ModelEvent{longAnswer(30)}}
	h := newDemoHarness(t, engine.Config{Model: model})
	h.shutdownAtEnd(t)

	// Mid-answer, with espeak-ng speaking.
	c := h.dial(t, demoHeaders())
	c.send(map[string]any{"type": "text", "transcript": "talk to me"})
	for c.next().Type != "audio" {
	}
	c.ws.CloseNow()
	waitFor(t, "the model stops", func() bool { return model.Cancelled() == 1 })
	proc.NoChildren(t, testkit.SpeechPrograms...)

	// While pocketsphinx listens.
	c = h.dial(t, demoHeaders())
	c.sendAudio(say(t, "What is my balance?"), nil)
	c.send(map[string]any{"type": "end_of_speech"})
	waitFor(t, "pocketsphinx starts", func() bool { return len(proc.Children("pocketsphinx_continuous")) > 0 })
	c.ws.CloseNow()
	proc.NoChildren(t, testkit.SpeechPrograms...)
}

func TestStreamShutdown(t *testing.T) {
	checkLeaks(t)
	model := &enginetest.ScriptedModel{Delay: 30 * time.Millisecond, Steps: [][]engine.ModelEvent{threeSentences()}}
	h := newHarness(t, engine.Config{Model: model, Synthesizer: &fakeSynthesizer{Rate: 22050, Seconds: 0.1}})

	idle := h.dial(t, headers())
	busy := h.dial(t, headers())
	busy.send(map[string]any{"type": "text", "transcript": "hi"})
	busy.expect("transcript")

	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- h.engine.Shutdown(ctx)
	}()
	if code := idle.closeCode(); code != websocket.StatusServiceRestart {
		t.Errorf("idle socket: close %d, want 1012", code)
	}
	// A new turn asked for meanwhile is told the engine is shutting down.
	busy.send(map[string]any{"type": "text", "transcript": "one more"})
	// The running turn is answered in full before its socket goes.
	var (
		types   []string
		refused int
	)
	for {
		m, err := busy.read(10 * time.Second)
		if err != nil {
			if code := websocket.CloseStatus(err); code != websocket.StatusServiceRestart {
				t.Errorf("busy socket: %v, want close 1012", err)
			}
			break
		}
		if m.Type == "error" {
			if m.Error.Code == engine.CodeShuttingDown {
				refused++
			}
			continue
		}
		types = append(types, m.Type)
	}
	if n := len(types); n < 2 || types[n-2] != "spec" || types[n-1] != "done" {
		t.Errorf("the busy socket got %v before it closed", types)
	}
	if refused != 1 {
		t.Errorf("a turn asked for during shutdown: %d shutting_down errors", refused)
	}
	if err := <-done; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	_, resp, err := websocket.Dial(t.Context(), h.wsURL(), &websocket.DialOptions{HTTPHeader: headers()})
	if err == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a socket after shutdown: %v", err)
	}
	h.srv.Close()
}

func TestStreamShutdownDeadline(t *testing.T) {
	checkLeaks(t)
	model := &enginetest.ScriptedModel{Delay: time.Second, Steps: [][]engine.ModelEvent{longAnswer(30)}}
	h := newHarness(t, engine.Config{Model: model})
	c := h.dial(t, headers())
	c.send(map[string]any{"type": "text", "transcript": "hi"})
	c.expect("transcript")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.engine.Shutdown(ctx) }()
	if code := c.closeCode(); code != websocket.StatusServiceRestart {
		t.Errorf("close %d, want 1012", code)
	}
	if err := <-done; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown: %v", err)
	}
	if model.Cancelled() != 1 {
		t.Error("the running turn was not cancelled")
	}
	h.srv.Close()
}

func TestStreamWithoutSpeechParts(t *testing.T) {
	checkLeaks(t)
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{threeSentences()}}

	t.Run("no synthesizer", func(t *testing.T) {
		h := newHarness(t, engine.Config{Model: model})
		h.shutdownAtEnd(t)
		c := h.dial(t, headers())
		c.send(map[string]any{"type": "text", "transcript": "hi"})
		if r := c.turn(); len(r.audio) != 0 || r.spec.Speak == "" {
			t.Errorf("%d samples, speak %q", len(r.audio), r.spec.Speak)
		}
	})
	t.Run("no transcriber", func(t *testing.T) {
		h := newHarness(t, engine.Config{Model: model})
		h.shutdownAtEnd(t)
		c := h.dial(t, headers())
		c.sendAudio(voiced(8000), nil)
		c.send(map[string]any{"type": "end_of_speech"})
		if m := c.expect("error"); m.Error.Code != engine.CodeTranscriberUnavailable || !m.Error.Retryable {
			t.Errorf("got %s", m.raw)
		}
	})
	t.Run("the tenant's voice is unknown", func(t *testing.T) {
		tenant := testTenant()
		tenant.Voice = "nope"
		h := newHarness(t, engine.Config{Model: model, Synthesizer: &fakeSynthesizer{Rate: 22050, Seconds: 0.1}}, tenant)
		h.shutdownAtEnd(t)
		c := h.dial(t, headers())
		c.send(map[string]any{"type": "text", "transcript": "hi"})
		if r := c.turn(); len(r.audio) != 0 || r.spec.Speak == "" {
			t.Errorf("%d samples, speak %q", len(r.audio), r.spec.Speak)
		}
		if !strings.Contains(h.logs.String(), "speech synthesis failed") {
			t.Error("the failure is not logged")
		}
	})
}

func TestStreamModelFailureIsSpokenAndReported(t *testing.T) {
	checkLeaks(t)
	model := modelSeq(func(yield func(engine.ModelEvent, error) bool) {
		if yield(engine.TextEvent("Let me check. Your balance"), nil) {
			yield(engine.ModelEvent{}, errors.New("upstream fell over"))
		}
	})
	synth := &fakeSynthesizer{Rate: 22050, Seconds: 0.1}
	h := newHarness(t, engine.Config{Model: model, Synthesizer: synth})
	h.shutdownAtEnd(t)
	c := h.dial(t, headers())
	c.send(map[string]any{"type": "text", "transcript": "hi"})
	var types []string
	var deltas strings.Builder
	for {
		m := c.next()
		types = append(types, m.Type)
		deltas.WriteString(m.Delta)
		if m.Type == "error" && (m.Error.Code != engine.CodeModelError || !m.Error.Retryable || m.TurnID == "") {
			t.Errorf("error %s", m.raw)
		}
		if m.Type == "spec" && (m.Spec.Meta.Error != engine.CodeModelError || m.Spec.Speak != "Let me check. Your balance… Sorry, something went wrong. Please try again." ||
			m.Spec.Speak != deltas.String()) {
			t.Errorf("spec %s after the deltas %q", m.raw, deltas.String())
		}
		if m.Type == "done" {
			break
		}
	}
	got := strings.Join(types, ",")
	if !strings.Contains(got, "error,speak") || !strings.HasSuffix(got, "audio,spec,done") {
		t.Errorf("messages %s: want the error, then the apology's delta and audio, spec and done", got)
	}
}

// panickySynthesizer panics, as a broken provider might.
type panickySynthesizer struct{}

func (panickySynthesizer) Synthesize(context.Context, string, string) (*engine.Audio, error) {
	panic("synthesizer exploded")
}

func TestStreamSurvivesPanickingSpeechParts(t *testing.T) {
	checkLeaks(t)
	transcriber := transcriberFunc(func(context.Context, []int16, int, string) (string, error) {
		panic("transcriber exploded")
	})
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{threeSentences()}}
	h := newHarness(t, engine.Config{Model: model, Synthesizer: panickySynthesizer{}, Transcriber: transcriber})
	h.shutdownAtEnd(t)
	c := h.dial(t, headers())
	c.send(map[string]any{"type": "text", "transcript": "hi"})
	if r := c.turn(); len(r.audio) != 0 || r.spec.Speak == "" {
		t.Errorf("%d samples, speak %q", len(r.audio), r.spec.Speak)
	}
	c.sendAudio(voiced(8000), nil)
	c.send(map[string]any{"type": "end_of_speech"})
	if m := c.expect("error"); m.Error.Code != engine.CodeInternal {
		t.Errorf("got %s", m.raw)
	}
	c.send(map[string]any{"type": "text", "transcript": "still there?"})
	c.turn()
}
