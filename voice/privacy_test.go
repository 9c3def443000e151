package voice_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/pii"
)

// saying records the text of every line a synthesizer is asked to say.
type saying struct {
	testkit.FakeSynthesizer
	mu    sync.Mutex
	lines []string
}

func (s *saying) Synthesize(ctx context.Context, text, voice string) (*engine.Audio, error) {
	s.mu.Lock()
	s.lines = append(s.lines, text)
	s.mu.Unlock()
	return s.FakeSynthesizer.Synthesize(ctx, text, voice)
}

// TestSocketKeepsCardNumbersPrivate: a user says a card number on the voice socket, then types
// an IBAN. The model sees placeholders, in the later turn's history too; the transcript the
// socket echoes, the speech, the spec and what the synthesizer is asked to say hold them
// masked, and the synthesizer says the last digits one by one.
func TestSocketKeepsCardNumbersPrivate(t *testing.T) {
	checkLeaks(t)
	tn := testTenant()
	tn.Privacy = json.RawMessage(`{"preset":"banking"}`)
	privacy, err := pii.NewPrivacy(nil)
	if err != nil {
		t.Fatal(err)
	}
	model := &enginetest.RecordingModel{Answer: func(*engine.ModelRequest) []engine.ModelEvent {
		return enginetest.Text("Noted: card [CARD_1].")
	}}
	hears := testkit.TranscriberFunc(func(context.Context, []int16, int, string) (string, error) {
		return "my card is four one one one, one one one one, one one one one, one one one one", nil
	})
	synth := &saying{FakeSynthesizer: testkit.FakeSynthesizer{Rate: 16000, Seconds: 0.05}}
	h := newHarness(t, engine.Config{Model: model, Transcriber: hears, Synthesizer: synth, Privacy: privacy}, tn)
	h.shutdownAtEnd(t)

	c := h.dial(t, headers())
	c.sayHi()
	spoken := c.turn()
	c.send(map[string]any{"type": "text", "transcript": "and my IBAN is GB82 WEST 1234 5698 7654 32"})
	typed := c.turn()

	if spoken.transcript != "my card is •••• 1111" || typed.transcript != "and my IBAN is GB•• •••• … 5432" {
		t.Errorf("transcripts echoed %q and %q", spoken.transcript, typed.transcript)
	}
	if spoken.speak != "Noted: card •••• 1111." || spoken.spec.Speak != spoken.speak {
		t.Errorf("speech %q, spec %q", spoken.speak, spoken.spec.Speak)
	}
	requests := model.Requests()
	if len(requests) != 2 || !strings.Contains(requests[0], "my card is [CARD_1]") || !strings.Contains(requests[1], "[IBAN_1]") {
		t.Fatalf("the model saw %q", requests)
	}
	for i, r := range requests {
		if strings.Contains(r, "one one one") || strings.Contains(r, "WEST") || strings.Contains(strings.ReplaceAll(r, " ", ""), "4111111111111111") {
			t.Errorf("model request %d holds a value: %s", i+1, r)
		}
	}
	synth.mu.Lock()
	defer synth.mu.Unlock()
	said := strings.Join(synth.lines, " | ")
	if strings.Contains(said, "•") || strings.Contains(said, "4111") || !strings.Contains(said, "one one one one") {
		t.Errorf("the synthesizer was asked to say %q", said)
	}
}
