package voice_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/usage"
	"github.com/convengine/engine/voice"
)

// expectRefused reads an error message with code, retryable and about no turn, and checks that
// the socket is still open by answering a cancel.
func (c *voiceClient) expectRefused(code string) {
	c.t.Helper()
	m := c.expect("error")
	if m.Error.Code != code || !m.Error.Retryable || m.TurnID != "" || m.Error.Message == "" {
		c.t.Errorf("got %s, want a retryable %s about no turn", m.raw, code)
	}
	c.send(map[string]any{"type": "cancel"})
	c.expect("cancelled")
}

// sayHi sends a short utterance, which hearsHi transcribes as "hi".
func (c *voiceClient) sayHi() {
	c.t.Helper()
	c.sendAudio(voiced(8000), nil)
	c.send(map[string]any{"type": "end_of_speech"})
}

// waitForFreeSlot waits until the process takes a turn again: a turn that ended has sent its
// last message a moment before it gives its slot back. The probe is a turn whose body is
// refused (400) once it has a slot, and that is overloaded (503) while none is free.
func (h *harness) waitForFreeSlot(t *testing.T) {
	t.Helper()
	waitFor(t, "a turn slot is free", func() bool {
		resp := h.do(t.Context(), http.MethodPost, engine.PathTurn, headers(), `{}`)
		resp.Body.Close()
		return resp.StatusCode == http.StatusBadRequest
	})
}

var hearsHi = transcriberFunc(func(context.Context, []int16, int, string) (string, error) { return "hi", nil })

// TestSocketTurnsShareTheTurnBound runs a process that may run one turn: while a turn of
// POST /engine runs, a socket's typed and spoken turns are refused as overloaded and the
// socket stays; while a socket's turn runs, a turn of POST /engine and another socket's turn
// are refused. Once the running turn ended, the others are served.
func TestSocketTurnsShareTheTurnBound(t *testing.T) {
	checkLeaks(t)
	m := &blockingModel{started: make(chan struct{}, 4), release: make(chan struct{})}
	h := newHarness(t, engine.Config{Model: m, Transcriber: hearsHi, MaxConcurrentTurns: 1})
	h.shutdownAtEnd(t)

	t.Run("an SSE turn runs", func(t *testing.T) {
		c := h.dial(t, headers())
		var wg sync.WaitGroup
		wg.Go(func() { h.turn(helloTurn) })
		<-m.started
		c.send(map[string]any{"type": "text", "transcript": "hi"})
		c.expectRefused(engine.CodeOverloaded)
		c.sayHi()
		c.expectRefused(engine.CodeOverloaded)
		m.release <- struct{}{}
		wg.Wait()
		h.waitForFreeSlot(t)

		go func() { <-m.started; m.release <- struct{}{} }()
		c.send(map[string]any{"type": "text", "transcript": "hi"})
		if r := c.turn(); r.spec.Speak != "Done." {
			t.Errorf("after the SSE turn the socket's answer is %q", r.spec.Speak)
		}
	})

	t.Run("a socket turn runs", func(t *testing.T) {
		h.waitForFreeSlot(t) // the last turn's, given back a moment after its done
		busy, other := h.dial(t, headers()), h.dial(t, headers())
		busy.sayHi()
		busy.expect("transcript")
		<-m.started

		resp := h.do(t.Context(), http.MethodPost, engine.PathTurn, headers(), helloTurn)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
			t.Errorf("status %d, Retry-After %q; want 503 and 1", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		if p := readProblem(t, resp); p.Code != engine.CodeOverloaded || !p.Retryable {
			t.Errorf("problem %+v, want a retryable overloaded", p)
		}
		other.send(map[string]any{"type": "text", "transcript": "hi"})
		other.expectRefused(engine.CodeOverloaded)

		m.release <- struct{}{}
		for busy.next().Type != "done" {
		}
		h.waitForFreeSlot(t)
		go func() { <-m.started; m.release <- struct{}{} }()
		if res := h.turn(helloTurn); res.turn.Spec.Speak != "Done." {
			t.Errorf("after the socket's turn the SSE answer is %q", res.turn.Spec.Speak)
		}
	})

	t.Run("a cancelled turn frees its slot", func(t *testing.T) {
		h.waitForFreeSlot(t)
		c := h.dial(t, headers())
		c.send(map[string]any{"type": "text", "transcript": "hi"})
		c.expect("transcript")
		<-m.started
		c.send(map[string]any{"type": "cancel"})
		c.expect("cancelled")
		go func() { <-m.started; m.release <- struct{}{} }()
		if res := h.turn(helloTurn); res.turn.Spec.Speak != "Done." {
			t.Errorf("after the cancel the SSE answer is %q", res.turn.Spec.Speak)
		}
	})
}

// TestSocketTurnsAreRateLimited gives the user a burst of two and a request a second: the
// upgrade takes one, the first turn the other, and the second turn is refused as rate_limited
// on a socket that stays open; a second later the user may go on.
func TestSocketTurnsAreRateLimited(t *testing.T) {
	checkLeaks(t)
	clock := enginetest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	tn := testTenant()
	tn.Limits.UserPerMinute, tn.Limits.UserBurst = 60, 2
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}
	h := newHarness(t, engine.Config{Model: model, Transcriber: hearsHi, Now: clock.Now}, tn)
	h.shutdownAtEnd(t)

	c := h.dial(t, headers())
	c.send(map[string]any{"type": "text", "transcript": "hi"})
	c.turn()
	c.send(map[string]any{"type": "text", "transcript": "hi again"})
	c.expectRefused(engine.CodeRateLimited)
	c.sayHi()
	c.expectRefused(engine.CodeRateLimited)
	if n := model.Calls(); n != 1 {
		t.Errorf("the model was asked %d times, want once", n)
	}

	// Another user of the tenant is not limited by this one.
	other := h.dial(t, userHeaders("another-users-token"))
	other.send(map[string]any{"type": "text", "transcript": "hi"})
	other.turn()

	clock.Add(time.Second)
	c.sayHi()
	if r := c.turn(); r.transcript != "hi" || r.spec.Speak != "Hi." {
		t.Errorf("a second later: transcript %q, answer %q", r.transcript, r.spec.Speak)
	}
}

// dialRefused opens the voice socket with hdr and returns the problem it was refused with.
func (h *harness) dialRefused(t *testing.T, hdr http.Header) (*http.Response, engine.Problem) {
	t.Helper()
	ws, resp, err := websocket.Dial(t.Context(), h.wsURL(), &websocket.DialOptions{HTTPHeader: hdr})
	if err == nil {
		ws.CloseNow()
		t.Fatal("the socket opened")
	}
	if resp == nil {
		t.Fatalf("dial: %v", err)
	}
	return resp, readProblem(t, resp)
}

// TestSocketBounds: a user may hold MaxSocketsPerUser sockets and the process MaxSockets;
// past them the upgrade is answered 429 rate_limited or 503 overloaded with Retry-After, the
// observer counts each refusal, and a socket that closes makes room again.
func TestSocketBounds(t *testing.T) {
	checkLeaks(t)
	var mu sync.Mutex
	refused := map[string]int{}
	obs := &engine.Observer{Overload: func(_ context.Context, e engine.OverloadEvent) {
		mu.Lock()
		refused[e.Bound]++
		mu.Unlock()
	}}
	h := newHarnessWith(t, engine.Config{Model: &enginetest.ScriptedModel{}, Observer: obs}, &voice.Options{MaxSockets: 3, MaxSocketsPerUser: 2})
	h.shutdownAtEnd(t)

	a1 := h.dial(t, userHeaders("user-a"))
	h.dial(t, userHeaders("user-a"))
	resp, p := h.dialRefused(t, userHeaders("user-a"))
	if resp.StatusCode != http.StatusTooManyRequests || p.Code != engine.CodeRateLimited || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a user's third socket: %d %s, Retry-After %q", resp.StatusCode, p.Code, resp.Header.Get("Retry-After"))
	}
	h.dial(t, userHeaders("user-b"))
	resp, p = h.dialRefused(t, userHeaders("user-c"))
	if resp.StatusCode != http.StatusServiceUnavailable || p.Code != engine.CodeOverloaded || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("the process's fourth socket: %d %s, Retry-After %q", resp.StatusCode, p.Code, resp.Header.Get("Retry-After"))
	}
	mu.Lock()
	if refused[engine.BoundUserSockets] != 1 || refused[engine.BoundSockets] != 1 {
		t.Errorf("refusals counted: %v", refused)
	}
	mu.Unlock()

	a1.ws.Close(websocket.StatusNormalClosure, "")
	waitFor(t, "the closed socket's room is given back", func() bool {
		ws, _, err := websocket.Dial(t.Context(), h.wsURL(), &websocket.DialOptions{HTTPHeader: userHeaders("user-c")})
		if err != nil {
			return false
		}
		t.Cleanup(func() { ws.CloseNow() })
		return true
	})
}

// TestAudioMemoryBound: the audio that all sockets hold before transcription shares one
// budget. The utterance that would pass it is refused as overloaded, retryable, and the socket
// stays; once the other socket's audio is let go, the same user is heard.
func TestAudioMemoryBound(t *testing.T) {
	checkLeaks(t)
	var overloads atomic.Int32
	obs := &engine.Observer{Overload: func(_ context.Context, e engine.OverloadEvent) {
		if e.Bound == engine.BoundAudioMemory {
			overloads.Add(1)
		}
	}}
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hello.")}}
	const second = 16000 * 2 // bytes of one second of 16 kHz audio
	h := newHarnessWith(t, engine.Config{Model: model, Transcriber: hearsHi, Observer: obs}, &voice.Options{AudioMemory: 2 * second})
	h.shutdownAtEnd(t)

	talker, other := h.dial(t, userHeaders("user-a")), h.dial(t, userHeaders("user-b"))
	talker.sendAudio(voiced(16000*3/2), nil)      // 1.5 s, held until end_of_speech
	talker.send(map[string]any{"type": "cancel"}) // read in order: the audio is all taken first
	talker.expect("cancelled")
	talker.sendAudio(voiced(16000*3/2), nil)
	talker.send(map[string]any{"type": "noise"}) // answered once the audio before it is taken
	talker.expect("error")
	other.sendAudio(voiced(16000), nil) // 1 s more than the budget has left
	other.expectRefused(engine.CodeOverloaded)
	if overloads.Load() != 1 {
		t.Errorf("%d refusals counted", overloads.Load())
	}

	talker.send(map[string]any{"type": "end_of_speech"})
	if r := talker.turn(); r.spec.Speak != "Hello." {
		t.Fatalf("the talker's turn: %q", r.spec.Speak)
	}
	other.sendAudio(voiced(16000*3/2), nil) // the transcribed audio was given back
	other.send(map[string]any{"type": "end_of_speech"})
	if r := other.turn(); r.spec.Speak != "Hello." {
		t.Fatalf("after the talker's turn: %q", r.spec.Speak)
	}
}

// TestSocketTurnsKeepTheBudget: a user with two turns a day has the third refused as
// quota_exceeded, spoken or typed, before its audio is heard or the model asked, on a socket
// that stays open for another user's turns.
func TestSocketTurnsKeepTheBudget(t *testing.T) {
	checkLeaks(t)
	tn := testTenant()
	tn.Limits.TurnsPerUserPerDay = 2
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}
	var heard atomic.Int64
	hears := testkit.TranscriberFunc(func(context.Context, []int16, int, string) (string, error) {
		heard.Add(1)
		return "hi", nil
	})
	h := newHarness(t, engine.Config{Model: model, Transcriber: hears, Budget: &usage.MemoryBudget{}}, tn)
	h.shutdownAtEnd(t)

	c := h.dial(t, headers())
	c.send(map[string]any{"type": "text", "transcript": "hi"})
	c.turn()
	c.sayHi()
	c.turn()
	c.send(map[string]any{"type": "text", "transcript": "hi again"})
	c.expectQuotaExceeded()
	c.sayHi()
	c.expectQuotaExceeded()
	if n, h := model.Calls(), heard.Load(); n != 2 || h != 1 {
		t.Errorf("the model was asked %d times and the audio heard %d times, want 2 and 1", n, h)
	}
	other := h.dial(t, userHeaders("another-users-token"))
	other.send(map[string]any{"type": "text", "transcript": "hi"})
	other.turn()
}

// expectQuotaExceeded reads the error message of a turn its tenant's budget refused: retryable,
// about the turn it refused.
func (c *voiceClient) expectQuotaExceeded() {
	c.t.Helper()
	m := c.expect("error")
	if m.Error.Code != engine.CodeQuotaExceeded || !m.Error.Retryable || m.TurnID == "" || m.Error.Message == "" {
		c.t.Errorf("got %s, want a retryable quota_exceeded about the turn", m.raw)
	}
}
