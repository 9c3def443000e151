package engine_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/internal/testkit"
)

// userN returns the headers of the nth other user of the test tenant.
func userN(n int) http.Header { return userHeaders(fmt.Sprintf("another-user-%d", n)) }

// upload is an audio turn running in the background.
type upload struct {
	cancel context.CancelFunc
	done   chan *http.Response // the response, or nil when the request failed
}

func startUpload(t *testing.T, h *harness, hdr http.Header) *upload {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	u := &upload{cancel: cancel, done: make(chan *http.Response, 1)}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.srv.URL+engine.PathTurn, strings.NewReader(audioBody(voiced(16000), 16000, nil)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = hdr
	go func() {
		resp, err := h.srv.Client().Do(req)
		if err != nil {
			resp = nil
		}
		u.done <- resp
	}()
	t.Cleanup(cancel)
	return u
}

// TestAbandonedAudioTurn: with a turn log, which keeps a started turn running after its client
// left, an audio turn whose client leaves while its audio waits for the transcriber gives up
// the transcriber at once: the turn had not started.
func TestAbandonedAudioTurn(t *testing.T) {
	slow := testkit.NewSlowTranscriber()
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, TurnLog: &engine.MemoryTurnLog{}, Transcriber: slow})
	t.Cleanup(slow.Release) // before the server waits for its handlers
	u := startUpload(t, h, headers())
	slow.WaitEntered(t, 1)
	left := time.Now()
	u.cancel()
	select {
	case at := <-slow.Returned:
		if d := at.Sub(left); d > time.Second {
			t.Errorf("the transcription ended %v after the client left", d)
		}
		t.Logf("the transcription ended %v after the client left", at.Sub(left))
	case <-time.After(5 * time.Second):
		t.Fatal("the transcription went on 5 s after the client left")
	}
}

// TestAudioTurnDeadline: the turn's deadline covers the transcription of its audio; audio still
// not heard at the deadline is answered 503 transcriber_unavailable.
func TestAudioTurnDeadline(t *testing.T) {
	slow := testkit.NewSlowTranscriber()
	tenant := testTenant()
	tenant.Limits.TurnTimeout = engine.Duration(300 * time.Millisecond)
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, TurnLog: &engine.MemoryTurnLog{}, Transcriber: slow}, tenant)
	t.Cleanup(slow.Release) // before the server waits for its handlers
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	resp := h.do(ctx, http.MethodPost, engine.PathTurn, headers(), audioBody(voiced(16000), 16000, nil))
	if p := readProblem(t, resp); resp.StatusCode != http.StatusServiceUnavailable || p.Code != engine.CodeTranscriberUnavailable {
		t.Errorf("got %d %s (%s)", resp.StatusCode, p.Code, p.Detail)
	}
}

// TestTranscriptionBounds: with 16 recordings of 16 users waiting for a busy transcriber, those
// past Config.MaxConcurrentTranscriptions (default 8) are refused 503 overloaded at once, while
// a text turn is answered; the others are heard once the transcriber is free. (A voice socket's
// utterance meets the same bound: package voice's TestStreamTranscriptionBounds.)
func TestTranscriptionBounds(t *testing.T) {
	var overloads [2]atomic.Int32 // transcriptions, user transcriptions
	slow := testkit.NewSlowTranscriber()
	obs := &engine.Observer{Overload: func(_ context.Context, e engine.OverloadEvent) {
		switch e.Bound {
		case engine.BoundTranscriptions:
			overloads[0].Add(1)
		case engine.BoundUserTranscriptions:
			overloads[1].Add(1)
		}
	}}
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Your", " balance.")}}
	h := newHarness(t, engine.Config{Model: model, TurnLog: &engine.MemoryTurnLog{}, Transcriber: slow, Observer: obs})
	t.Cleanup(slow.Release) // before the server waits for its handlers

	var uploads []*upload
	for i := range 16 {
		uploads = append(uploads, startUpload(t, h, userN(i)))
	}
	slow.WaitEntered(t, 8)
	refused, waiting := 0, map[*upload]bool{}
	for _, u := range uploads {
		waiting[u] = true
	}
	deadline := time.After(5 * time.Second)
	for refused < 8 {
		select {
		case <-deadline:
			t.Fatalf("%d of the 8 recordings past the bound were refused; the others wait", refused)
		case <-time.After(10 * time.Millisecond):
		}
		for u := range waiting {
			select {
			case resp := <-u.done:
				delete(waiting, u)
				if resp == nil {
					t.Fatal("an upload failed")
				}
				p := readProblem(t, resp)
				if resp.StatusCode != http.StatusServiceUnavailable || p.Code != engine.CodeOverloaded || resp.Header.Get("Retry-After") != "1" {
					t.Errorf("refused with %d %s, Retry-After %q", resp.StatusCode, p.Code, resp.Header.Get("Retry-After"))
				}
				refused++
			default:
			}
		}
	}

	// A text turn is answered meanwhile.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	resp := h.doStreaming(ctx, http.MethodPost, engine.PathTurn, userN(100), `{"transcript":"hi"}`)
	turn, err := enginetest.ReadTurn(resp.Body)
	resp.Body.Close()
	if err != nil || turn.Spec.Speak != "Your balance." {
		t.Fatalf("the text turn while 16 recordings wait: %v %+v", err, turn)
	}

	if n, m := overloads[0].Load(), overloads[1].Load(); n != 8 || m != 0 {
		t.Errorf("overloads counted: %d transcriptions, %d user transcriptions", n, m)
	}

	slow.Release()
	for u := range waiting {
		resp := <-u.done
		if resp == nil {
			t.Fatal("a waiting upload failed")
		}
		turn, err := enginetest.ReadTurn(resp.Body)
		resp.Body.Close()
		if err != nil || turn.Spec.Meta.Transcript != "what's my balance" {
			t.Errorf("a waiting upload: %v %+v", err, turn.Spec)
		}
	}
}

// TestTranscriptionsPerUser: a user holds Config.MaxTranscriptionsPerUser transcriptions at
// most (default 2); the next is answered 429 rate_limited with Retry-After at once, while
// another user's audio is heard.
func TestTranscriptionsPerUser(t *testing.T) {
	slow := testkit.NewSlowTranscriber()
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, TurnLog: &engine.MemoryTurnLog{}, Transcriber: slow})
	t.Cleanup(slow.Release) // before the server waits for its handlers
	startUpload(t, h, headers())
	startUpload(t, h, headers())
	slow.WaitEntered(t, 2)

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	resp := h.do(ctx, http.MethodPost, engine.PathTurn, headers(), audioBody(voiced(16000), 16000, nil))
	p := readProblem(t, resp)
	if secs, _ := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != http.StatusTooManyRequests || p.Code != engine.CodeRateLimited || secs < 1 {
		t.Errorf("the user's third recording: %d %s, Retry-After %q", resp.StatusCode, p.Code, resp.Header.Get("Retry-After"))
	}
	other := startUpload(t, h, userN(1))
	slow.WaitEntered(t, 1)
	slow.Release()
	if resp := <-other.done; resp == nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("another user's recording: %v", resp)
	} else {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// TestTurnBodyDeadline: the turn's deadline covers the reading of its body: a body that
// trickles in slower than that is answered 408 invalid_request, and its turn slot is free.
func TestTurnBodyDeadline(t *testing.T) {
	tenant := testTenant()
	tenant.Limits.TurnTimeout = engine.Duration(300 * time.Millisecond)
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, TurnLog: &engine.MemoryTurnLog{}, MaxConcurrentTurns: 1}, tenant)
	conn, err := net.Dial("tcp", h.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var req strings.Builder
	fmt.Fprintf(&req, "POST %s HTTP/1.1\r\nHost: engine\r\nContent-Length: 1000\r\n", engine.PathTurn)
	for name, vals := range headers() {
		fmt.Fprintf(&req, "%s: %s\r\n", name, vals[0])
	}
	req.WriteString("\r\n" + `{"transcript":"`) // and nothing more
	if _, err := io.WriteString(conn, req.String()); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a body that does not arrive: %v", err)
	}
	if p := readProblem(t, resp); resp.StatusCode != http.StatusRequestTimeout || p.Code != engine.CodeInvalidRequest {
		t.Errorf("got %d %s (%s)", resp.StatusCode, p.Code, p.Detail)
	}
	if r := h.turn(`{"transcript":"hi"}`); r.spec.Meta.Error != "" {
		t.Errorf("the next turn: %+v", r.spec)
	}
}
