package voice_test

import (
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/widgets"
)

// TestVoiceSocketDemoPhrases speaks each demo phrase up the socket in 20 ms frames, one turn
// after another on one connection, and checks what comes back: the transcript, the spec with
// its widgets, and the answer's audio.
func TestVoiceSocketDemoPhrases(t *testing.T) {
	h := newDemoHarness(t, engine.Config{})
	c := h.dial(t, demoHeaders())
	cases := []struct {
		say, heard, widget string
	}{
		{"What is my balance?", "what is my balance", widgets.TypeStat},
		{"Show my recent transactions", "show my recent transactions", widgets.TypeList},
		{"How close am I to my savings goal?", "how close am i to my savings goal", widgets.TypeProgress},
		{"Send 20 dollars to Alex", "send twenty dollars to alex", widgets.TypeConfirm},
	}
	for i, tc := range cases {
		t.Run(tc.heard, func(t *testing.T) {
			c.t = t
			var ctx map[string]any
			if i == 0 {
				ctx = map[string]any{"sessionId": "conv-1", "locale": "en-US"}
			}
			c.sendAudio(say(t, tc.say), ctx)
			c.send(map[string]string{"type": "end_of_speech"})
			r := c.turn()
			if r.transcript != tc.heard || r.spec.Meta.Transcript != tc.heard {
				t.Errorf("transcript %q, spec's %q; want %q", r.transcript, r.spec.Meta.Transcript, tc.heard)
			}
			if r.spec.Speak == "" || r.spec.Speak != r.speak {
				t.Errorf("spec speak %q, deltas %q", r.spec.Speak, r.speak)
			}
			if len(r.spec.Widgets) == 0 || r.spec.Widgets[0].WidgetType() != tc.widget {
				t.Errorf("widgets %+v, want a %s", r.spec.Widgets, tc.widget)
			}
			if r.spec.Meta.ConversationID != "conv-1" || r.spec.Meta.Locale != "en-US" {
				t.Errorf("meta %+v", r.spec.Meta)
			}
			if r.sampleRate != 22050 {
				t.Errorf("audio at %d Hz", r.sampleRate)
			}
			// The conversation's first answer is said after the tenant's AI disclosure, which
			// its transcript message carries; the others are not.
			disclosure := r.msgs[0].Disclosure
			if r.msgs[0].Type != "transcript" || (i == 0) != (disclosure != "") {
				t.Errorf("turn %d's first message %+v: the disclosure belongs to the conversation's first turn alone", i, r.msgs[0])
			}
			// espeak-ng says about three words a second.
			words := len(splitWords(r.spec.Speak)) + len(splitWords(disclosure))
			if secs := float64(len(r.audio)) / float64(max(r.sampleRate, 1)); secs < float64(words)/6 || secs > float64(words) {
				t.Errorf("%.1f s of audio for %d words", secs, words)
			}
			if loudest(r.audio) < 1000 {
				t.Error("the audio is silent")
			}
			t.Logf("%s → %q: %d audio messages, %.1f s", r.transcript, r.spec.Speak, r.msgs[len(r.msgs)-3].Seq, float64(len(r.audio))/22050)
		})
	}
}

func splitWords(s string) []string {
	var out []string
	word := false
	for _, r := range s {
		if r == ' ' {
			word = false
			continue
		}
		if !word {
			out = append(out, "")
		}
		word = true
	}
	return out
}
