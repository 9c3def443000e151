package voice_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/internal/testkit"
)

// TestSocketUtteranceDeadline: a voice socket's utterance is transcribed within the turn's time
// limit too: past it the socket gets a transcriber_unavailable error message instead of waiting
// on, and answers the next message.
func TestSocketUtteranceDeadline(t *testing.T) {
	slow := testkit.NewSlowTranscriber()
	tenant := testTenant()
	tenant.Limits.TurnTimeout = engine.Duration(300 * time.Millisecond)
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Your", " balance.")}}
	h := newHarness(t, engine.Config{Model: model, Transcriber: slow}, tenant)
	h.shutdownAtEnd(t)
	t.Cleanup(slow.Release) // before the server waits for its handlers
	c := h.dial(t, headers())
	c.sendAudio(voiced(16000), nil)
	c.send(map[string]any{"type": "end_of_speech"})
	if m := c.expect("error"); m.Error.Code != engine.CodeTranscriberUnavailable {
		t.Fatalf("an utterance past the turn's time limit: %s", m.raw)
	}
	c.send(map[string]any{"type": "text", "transcript": "hi"})
	if v := c.turn(); v.spec.Speak != "Your balance." {
		t.Errorf("the socket's next turn: %+v", v.spec)
	}
}

// TestHostileSocketFlood sends 10 000 small frames down one voice socket as fast as the client
// can write them. The server answers them or lets the client go (1008), stays bounded, and keeps
// serving other sockets and turns meanwhile.
func TestHostileSocketFlood(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}})
	h.shutdownAtEnd(t)
	baseline := runtime.NumGoroutine()

	flood := h.dial(t, headers())
	var (
		mu       sync.Mutex
		answers  int
		sawDone  bool
		closeErr error
	)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			_, b, err := flood.ws.Read(context.Background())
			if err != nil {
				mu.Lock()
				closeErr = err
				mu.Unlock()
				return
			}
			mu.Lock()
			answers++
			if strings.Contains(string(b), `"type":"done"`) {
				sawDone = true
			}
			mu.Unlock()
		}
	}()
	const frames = 10_000
	frame := [][]byte{[]byte(`not json`), []byte(`{"type":"cancel"}`), []byte(`{"type":"dance"}`)}
	sent, peak := 0, 0
	othersServed := false
	serveOthers := func() {
		// Meanwhile, another user's turn and socket are served.
		othersServed = true
		h.turn(helloTurn)
		other := h.dial(t, headers())
		other.send(map[string]any{"type": "text", "transcript": "hello"})
		if r := other.turn(); r.spec.Speak != "Hi." {
			t.Errorf("another socket during the flood got %q", r.spec.Speak)
		}
		other.ws.Close(websocket.StatusNormalClosure, "")
	}
	start := time.Now()
	for i := range frames {
		if err := flood.ws.Write(t.Context(), websocket.MessageText, frame[i%len(frame)]); err != nil {
			break
		}
		sent++
		if i%100 == 0 {
			peak = max(peak, runtime.NumGoroutine())
		}
		if i == 100 {
			serveOthers()
		}
	}
	elapsed := time.Since(start)
	if !othersServed {
		serveOthers()
	}
	if peak > baseline+64 {
		t.Errorf("%d goroutines during the flood, %d before", peak, baseline)
	}
	mu.Lock()
	closed := closeErr
	mu.Unlock()
	if closed == nil {
		waitFor(t, "every frame is answered", func() bool { mu.Lock(); defer mu.Unlock(); return answers >= sent || closeErr != nil })
		// The engine may have let the socket go (1008) a moment before its reader saw it: a
		// write that fails then finds it closed, which the check below expects.
		if flood.ws.Write(t.Context(), websocket.MessageText, []byte(`{"type":"text","transcript":"hello"}`)) == nil {
			waitFor(t, "the flooding socket answers a turn", func() bool { mu.Lock(); defer mu.Unlock(); return sawDone || closeErr != nil })
		}
	}
	flood.ws.Close(websocket.StatusNormalClosure, "")
	<-readerDone
	mu.Lock()
	defer mu.Unlock()
	if code := websocket.CloseStatus(closeErr); !sawDone && code != websocket.StatusPolicyViolation {
		t.Errorf("the flooding socket neither kept working nor was let go with 1008: %v", closeErr)
	}
	t.Logf("%d frames sent in %v, %d answers, closed with %v; goroutines %d before and at most %d during",
		sent, elapsed.Round(time.Millisecond), answers, websocket.CloseStatus(closeErr), baseline, peak)
}

// TestStreamUnclearSpeech: speech the transcriber heard but did not understand is answered
// "Sorry, I didn't catch that" over the socket, as over SSE, without asking the model.
func TestStreamUnclearSpeech(t *testing.T) {
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{{engine.TextEvent("This must not be said.")}}}
	unclear := transcriberFunc(func(context.Context, []int16, int, string) (string, error) {
		return "", fmt.Errorf("%w: a grammar heard %q", engine.ErrNotUnderstood, "pay taylor eleven")
	})
	h := newHarness(t, engine.Config{Model: model, Transcriber: unclear})
	h.shutdownAtEnd(t)
	c := h.dial(t, headers())
	c.sendAudio(voiced(16000), nil)
	c.send(map[string]any{"type": "end_of_speech"})
	v := c.turn()
	if v.spec.Speak != "Sorry, I didn't catch that. Could you say it again?" || len(v.spec.Widgets) != 0 {
		t.Errorf("socket: %+v", v.spec)
	}
	if n := model.Calls(); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
}

// TestStreamTranscriptionBounds: an utterance that finds every transcription of
// Config.MaxConcurrentTranscriptions taken is refused with a retryable overloaded error message
// at once, and the socket stays: its typed turn is answered.
func TestStreamTranscriptionBounds(t *testing.T) {
	slow := testkit.NewSlowTranscriber()
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Your", " balance.")}}
	h := newHarness(t, engine.Config{Model: model, Transcriber: slow, MaxConcurrentTranscriptions: 1})
	h.shutdownAtEnd(t)
	t.Cleanup(slow.Release) // before the server waits for its handlers
	busy := h.dial(t, userHeaders("user-1"))
	busy.sendAudio(voiced(16000), nil)
	busy.send(map[string]any{"type": "end_of_speech"})
	slow.WaitEntered(t, 1)

	c := h.dial(t, userHeaders("user-2"))
	c.sendAudio(voiced(16000), nil)
	c.send(map[string]any{"type": "end_of_speech"})
	if m := c.expect("error"); m.Error.Code != engine.CodeOverloaded || !m.Error.Retryable {
		t.Errorf("the utterance past the bound: %s", m.raw)
	}
	c.send(map[string]any{"type": "text", "transcript": "hi"})
	if v := c.turn(); v.spec.Speak != "Your balance." {
		t.Errorf("the socket's text turn: %+v", v.spec)
	}
	slow.Release()
	if v := busy.turn(); v.spec.Meta.Transcript != "what's my balance" {
		t.Errorf("the utterance heard once the transcriber was free: %+v", v.spec)
	}
}
