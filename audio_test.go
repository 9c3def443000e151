package engine_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/widgets"
)

// audioBody is a turn body carrying pcm as a 16 kHz WAV file.
func audioBody(pcm []int16, rate int, extra map[string]any) string {
	m := map[string]any{"audio_base64": base64.StdEncoding.EncodeToString(audio.EncodeWAV(pcm, rate)), "mode": "voice"}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func TestAudioTurn(t *testing.T) {
	h := newDemoHarness(t, engine.Config{})
	for _, tc := range []struct{ say, heard, widget string }{
		{"What's my balance?", "what's my balance", widgets.TypeStat},
		{"Send 20 dollars to Alex", "send twenty dollars to alex", widgets.TypeConfirm},
	} {
		t.Run(tc.heard, func(t *testing.T) {
			r := h.turnWith(demoHeaders(), audioBody(say(t, tc.say), 16000, nil))
			if r.spec.Meta.Transcript != tc.heard {
				t.Errorf("transcript %q, want %q", r.spec.Meta.Transcript, tc.heard)
			}
			if len(r.spec.Widgets) != 1 || r.spec.Widgets[0].WidgetType() != tc.widget {
				t.Errorf("widgets %+v", r.spec.Widgets)
			}
		})
	}
}

// TestAudioTurnInARoom: speech recorded as people record it, with a second of silence or of
// room noise around it, is heard as well as without.
func TestAudioTurnInARoom(t *testing.T) {
	h := newDemoHarness(t, engine.Config{})
	speech := say(t, "What's my balance?")
	for name, pcm := range map[string][]int16{
		"a second of silence around it": append(append(make([]int16, 16000), speech...), make([]int16, 16000)...),
		"in room noise":                 inRoom(speech, 1, 1, 8),
	} {
		r := h.turnWith(demoHeaders(), audioBody(pcm, 16000, nil))
		if r.spec.Meta.Transcript != "what's my balance" {
			t.Errorf("%s: heard %q", name, r.spec.Meta.Transcript)
		}
	}
}

func TestAudioTurnFailures(t *testing.T) {
	h := newDemoHarness(t, engine.Config{})
	speech := say(t, "What's my balance?")
	for _, tc := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"22050 Hz", audioBody(audio.Resample(speech, 16000, 22050), 22050, nil), 422, engine.CodeInvalidAudio},
		{"silence", audioBody(make([]int16, 16000), 16000, nil), 422, engine.CodeNoSpeech},
		{"room noise", audioBody(roomNoise(3*16000, 7), 16000, nil), 422, engine.CodeNoSpeech},
		{"a click", audioBody(append(make([]int16, 8000), 30000, -30000, 30000), 16000, nil), 422, engine.CodeNoSpeech},
		{"a language without a model", audioBody(speech, 16000, map[string]any{"meta": map[string]string{"locale": "fr-FR"}}), 422, engine.CodeUnsupportedLocale},
		{"not base64", `{"audio_base64":"%%%"}`, 422, engine.CodeInvalidAudio},
		{"not WAV", `{"audio_base64":"` + base64.StdEncoding.EncodeToString([]byte("ID3 an mp3")) + `"}`, 422, engine.CodeInvalidAudio},
		{"61 seconds", audioBody(make([]int16, 61*16000), 16000, nil), 413, engine.CodePayloadTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := h.do(t.Context(), http.MethodPost, engine.PathTurn, demoHeaders(), tc.body)
			p := readProblem(t, resp)
			if resp.StatusCode != tc.status || p.Code != tc.code {
				t.Errorf("got %d %s (%s)", resp.StatusCode, p.Code, p.Detail)
			}
		})
	}
	// Under the body limit, 61 seconds are refused by the WAV check.
	big := newDemoHarness(t, engine.Config{MaxTurnBody: 4 << 20})
	resp := big.do(t.Context(), http.MethodPost, engine.PathTurn, demoHeaders(), audioBody(make([]int16, 61*16000), 16000, nil))
	if p := readProblem(t, resp); p.Code != engine.CodeInvalidAudio {
		t.Errorf("61 seconds: %s (%s)", p.Code, p.Detail)
	}
}

func TestAudioProblemDetail(t *testing.T) {
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{},
		Transcriber: transcriberFunc(func(context.Context, []int16, int, string) (string, error) { return "hi", nil })})
	resp := h.do(t.Context(), http.MethodPost, engine.PathTurn, headers(), audioBody(make([]int16, 100), 44100, nil))
	if p := readProblem(t, resp); p.Detail != "the sample rate is 44100 Hz; it must be 16000 Hz" {
		t.Errorf("detail %q", p.Detail)
	}
}

// TestUnclearSpeech: speech the transcriber heard but did not understand is answered "Sorry, I
// didn't catch that" in the user's language, without asking the model: a mumble never becomes
// an action. (Package voice's TestStreamUnclearSpeech does the same over the socket.)
func TestUnclearSpeech(t *testing.T) {
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{{engine.TextEvent("This must not be said.")}}}
	unclear := transcriberFunc(func(context.Context, []int16, int, string) (string, error) {
		return "", fmt.Errorf("%w: a grammar heard %q", engine.ErrNotUnderstood, "pay taylor eleven")
	})
	h := newHarness(t, engine.Config{Model: model, Transcriber: unclear})
	r := h.turnWith(headers(), audioBody(voiced(16000), 16000, nil))
	if r.spec.Speak != "Sorry, I didn't catch that. Could you say it again?" ||
		len(r.spec.Widgets) != 0 || r.spec.Meta.Transcript != "" {
		t.Errorf("SSE: %+v", r.spec)
	}
	r = h.turnWith(headers(), audioBody(voiced(16000), 16000, map[string]any{"meta": map[string]string{"locale": "es"}}))
	if r.spec.Speak != "Perdona, no te he entendido. ¿Puedes repetirlo?" {
		t.Errorf("in Spanish: %q", r.spec.Speak)
	}

	if n := model.Calls(); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
}
