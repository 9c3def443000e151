package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/widgets"
)

// problemOf returns err as a problem, failing the test when it is another error.
func problemOf(t *testing.T, err error) *engine.Problem {
	t.Helper()
	var p *engine.Problem
	if err != nil && !errors.As(err, &p) {
		t.Fatalf("%T %v is not a problem", err, err)
	}
	return p
}

// TestActionInProcess: a session, a turn that proposes a transfer in it, and the transfer
// confirmed, all without HTTP; the action runs once, and only for its own session and user.
func TestActionInProcess(t *testing.T) {
	var transfers atomic.Int32
	tools := &enginetest.FuncToolset{
		ToolList: []engine.Tool{{Name: "transfer", Action: true, Parameters: json.RawMessage(`{"type":"object"}`)}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"transfer": func(_ context.Context, env *engine.ToolEnv, _ engine.ToolCall) (engine.ToolResult, error) {
				transfers.Add(1)
				return engine.ToolResult{Content: json.RawMessage(`{"status":"sent"}`)}, nil
			},
		},
	}
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{{engine.TextEvent("Sending."), call("1", "transfer", `{"amount":20,"to":"Alex"}`)}}}
	h := newHarness(t, engine.Config{Model: model, Toolset: tools})
	caller := &engine.Caller{EngineKey: testKey, UserToken: testToken}

	s, err := h.engine.CreateSession(t.Context(), caller, nil)
	if err != nil || s.ID == "" || s.Token == "" || !s.ExpiresAt.After(s.CreatedAt) || string(s.Theme) != `{"primary":"#0B5FFF"}` {
		t.Fatalf("CreateSession: %+v, %v", s, err)
	}
	inSession := *caller
	inSession.SessionID = s.ID
	evs, p := inProcess(t, h.engine, &inSession, &engine.TurnInput{Transcript: "send 20 to Alex"})
	if p != nil {
		t.Fatal(p)
	}
	var confirm *widgets.Confirm
	for _, w := range evs[len(evs)-1].Spec.Widgets {
		if c, ok := w.(widgets.Confirm); ok {
			confirm = &c
		}
	}
	if confirm == nil {
		t.Fatalf("no confirm widget: %+v", evs[len(evs)-1].Spec)
	}
	in := &engine.ExecuteInput{Execute: confirm.Execute, Method: "faceid", VerifiedAt: time.Now()}

	// Not in the session the confirm was made for, or by another user: refused, nothing runs.
	if _, err := h.engine.Execute(t.Context(), caller, in); problemOf(t, err) == nil || problemOf(t, err).Code != engine.CodeInvalidActionToken {
		t.Errorf("outside the session: %v", err)
	}
	other := inSession
	other.UserToken = "someone-else"
	if _, err := h.engine.Execute(t.Context(), &other, in); problemOf(t, err) == nil || problemOf(t, err).Code != engine.CodeInvalidActionToken {
		t.Errorf("another user: %v", err)
	}
	stale := *in
	stale.VerifiedAt = time.Now().Add(-time.Hour)
	if _, err := h.engine.Execute(t.Context(), &inSession, &stale); problemOf(t, err) == nil || problemOf(t, err).Code != engine.CodeVerificationStale {
		t.Errorf("a stale verification: %v", err)
	}
	if transfers.Load() != 0 {
		t.Fatalf("%d transfers ran for refused executes", transfers.Load())
	}

	first, err := h.engine.Execute(t.Context(), &inSession, in)
	if err != nil || first.Done.Type != "success" || first.Speak == "" || first.Replayed {
		t.Fatalf("Execute: %+v, %v", first, err)
	}
	// Again: the first result, told apart as a replay.
	again, err := h.engine.Execute(t.Context(), &inSession, in)
	if err != nil || again.Done != first.Done || again.Speak != first.Speak || !again.Replayed || transfers.Load() != 1 {
		t.Errorf("executed again: %+v, %v; %d transfers", again, err, transfers.Load())
	}

	// A session of another tenant, or none at all, is refused.
	if _, p := inProcess(t, h.engine, &engine.Caller{EngineKey: testKey, UserToken: testToken, SessionID: "made-up"},
		&engine.TurnInput{Transcript: "hi"}); p == nil || p.Code != engine.CodeInvalidSession {
		t.Errorf("a made-up session: %v", p)
	}
}

// TestSynthesizeInProcess: speech comes back as a stream that holds a synthesis slot until it
// is closed; bad text is the endpoint's problem.
func TestSynthesizeInProcess(t *testing.T) {
	synth := &enginetest.BenchSynthesizer{Duration: 200 * time.Millisecond}
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hi.")}}
	h := newHarness(t, engine.Config{Model: model, Synthesizer: synth, MaxConcurrentSyntheses: 1})
	caller := &engine.Caller{EngineKey: testKey, UserToken: testToken}

	speech, err := h.engine.Synthesize(t.Context(), caller, "Your balance is $20.00.", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.engine.Synthesize(t.Context(), caller, "And more.", ""); problemOf(t, err) == nil || problemOf(t, err).Code != engine.CodeOverloaded {
		t.Errorf("a second synthesis while the first is open: %v", err)
	}
	pcm, err := io.ReadAll(speech.PCM)
	speech.PCM.Close()
	if err != nil || len(pcm) < speech.SampleRate/10 {
		t.Errorf("read %d bytes at %d Hz: %v", len(pcm), speech.SampleRate, err)
	}
	again, err := h.engine.Synthesize(t.Context(), caller, "And more.", "")
	if err != nil {
		t.Fatalf("after the first was closed: %v", err)
	}
	again.PCM.Close()

	for text, field := range map[string]string{"": "text", "   ": "text", string([]byte{0xff}): "text"} {
		_, err := h.engine.Synthesize(t.Context(), caller, text, "")
		if p := problemOf(t, err); p == nil || p.Code != engine.CodeInvalidRequest || p.Field != field {
			t.Errorf("text %q: %v", text, err)
		}
	}
	if _, err := h.engine.Synthesize(t.Context(), &engine.Caller{EngineKey: testKey}, "Hi.", ""); problemOf(t, err) == nil || problemOf(t, err).Code != engine.CodeMissingUserToken {
		t.Errorf("without a user token: %v", err)
	}
}
