package voice_test

import (
	"context"
	"encoding/base64"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/voice"
)

// TestStreamNoiseNeverBargesIn: an open microphone sending room noise while the answer plays
// does not cancel it; speech does.
func TestStreamNoiseNeverBargesIn(t *testing.T) {
	checkLeaks(t)
	model := &enginetest.ScriptedModel{Delay: 20 * time.Millisecond, Steps: [][]engine.ModelEvent{longAnswer(20)}}
	h := newHarness(t, engine.Config{Model: model, Transcriber: hearsHi})
	h.shutdownAtEnd(t)
	c := h.dial(t, headers())
	c.send(map[string]any{"type": "text", "transcript": "talk to me"})
	c.expect("transcript")
	c.sendAudio(roomNoise(16000*2, 1), nil) // two seconds while the answer streams
	for m := c.next(); m.Type != "done"; m = c.next() {
		if m.Type == "cancelled" || m.Type == "error" {
			t.Fatalf("room noise cut the answer off: %s", m.raw)
		}
	}
	if model.Cancelled() != 0 {
		t.Fatal("the model was cancelled")
	}
	c.send(map[string]any{"type": "end_of_speech"})
	if m := c.expect("error"); m.Error.Code != engine.CodeNoSpeech {
		t.Errorf("noise alone: %s", m.raw)
	}

	// Speech over the next answer, after some room noise, cancels it. (It is synthesized first:
	// on a busy machine espeak-ng can take longer than the answer streams.)
	stop := inRoom(say(t, "wait, stop"), 0.5, 0, 2)
	model.Steps = [][]engine.ModelEvent{longAnswer(20)}
	c.send(map[string]any{"type": "text", "transcript": "talk to me again"})
	c.expect("transcript")
	c.sendAudio(stop, nil)
	for m := c.next(); m.Type != "cancelled"; m = c.next() {
		if m.Type == "done" {
			t.Fatal("speech over the answer did not cancel it")
		}
	}
}

// TestStreamServerEndOfSpeech: with Options.EndOfSpeech, silence after speech ends the
// utterance without the client's end_of_speech; noise alone never starts a turn.
func TestStreamServerEndOfSpeech(t *testing.T) {
	checkLeaks(t)
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hello.")}}
	h := newHarnessWith(t, engine.Config{Model: model, Transcriber: hearsHi}, &voice.Options{EndOfSpeech: 500 * time.Millisecond})
	h.shutdownAtEnd(t)
	c := h.dial(t, headers())
	c.sendAudio(inRoom(say(t, "what is my balance"), 3, 1, 3), nil)
	if r := c.turn(); r.transcript != "hi" || r.spec.Speak != "Hello." {
		t.Errorf("the turn the silence ended: %q %q", r.transcript, r.spec.Speak)
	}
	if model.Calls() != 1 {
		t.Errorf("%d turns", model.Calls())
	}
	// The client's own end of that utterance, after the silence that ended it, is no new one.
	c.send(map[string]any{"type": "end_of_speech"})
	c.send(map[string]any{"type": "text", "transcript": "and now?"})
	if m := c.next(); m.Type != "transcript" {
		t.Errorf("the client's end_of_speech after the engine's was answered %s %s", m.Type, m.Error.Code)
	}
	for m := c.next(); m.Type != "done"; m = c.next() {
	}

	// Ended by the engine again, then audio refused (a wrong rate): the client's end_of_speech
	// ends the refusal, and its next utterance is heard.
	c.sendAudio(inRoom(say(t, "what is my balance"), 0.5, 1, 4), nil)
	if r := c.turn(); r.transcript != "hi" {
		t.Fatalf("the second turn the silence ended: %q", r.transcript)
	}
	c.send(map[string]any{"type": "audio", "chunk": base64.StdEncoding.EncodeToString(make([]byte, 640)), "sampleRate": 8000})
	if m := c.next(); m.Type != "error" || m.Error.Code != engine.CodeInvalidAudio {
		t.Fatalf("audio at 8 kHz: %s", m.Type)
	}
	c.send(map[string]any{"type": "end_of_speech"})
	c.sendAudio(say(t, "what is my balance"), nil)
	c.send(map[string]any{"type": "end_of_speech"})
	if r := c.turn(); r.transcript != "hi" {
		t.Errorf("the utterance after a refused one: %q", r.transcript)
	}
}

// TestStreamOpenMicrophone: a microphone left open in a quiet room for longer than an
// utterance may last is not an utterance too long; its noise is let go as it comes.
func TestStreamOpenMicrophone(t *testing.T) {
	checkLeaks(t)
	var heard int
	transcriber := transcriberFunc(func(_ context.Context, pcm []int16, _ int, _ string) (string, error) {
		heard = len(pcm)
		return "hi", nil
	})
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hello.")}}
	h := newHarness(t, engine.Config{Model: model, Transcriber: transcriber})
	h.shutdownAtEnd(t)
	c := h.dial(t, headers())
	c.sendAudio(roomNoise(16000*70, 5), nil) // seventy seconds
	speech := say(t, "what is my balance")
	c.sendAudio(speech, nil)
	c.send(map[string]any{"type": "end_of_speech"})
	if r := c.turn(); r.transcript != "hi" {
		t.Errorf("transcript %q", r.transcript)
	}
	if heard > len(speech)+16000 {
		t.Errorf("the transcriber got %.1f s for %.1f s of speech", float64(heard)/16000, float64(len(speech))/16000)
	}
}
