package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"strings"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

// A host's own transport, such as a telephony bridge, runs a caller's utterance through the
// engine's exported API, as package voice does: admitted first (rate limits and a turn slot),
// so that a refusal is answered before anything is done for it, then a turn from the
// utterance's 16 kHz samples, whose answer a Speaker speaks sentence by sentence.
func ExampleEngine_Admit() {
	tenants, err := engine.NewStaticTenants(&engine.Tenant{
		Key:          "pk_example",
		Name:         "Example",
		Environments: map[string]*engine.Environment{engine.EnvProduction: {BackendURL: "https://api.example.com"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	eng, err := engine.New(engine.Config{
		Tenants:     tenants,
		Model:       &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Your balance is fine. ", "Anything else?")}},
		SigningKey:  bytes.Repeat([]byte("k"), 32),
		Transcriber: phoneRecognizer{},  // the host's engine.Transcriber
		Synthesizer: phoneSynthesizer{}, // the host's engine.Synthesizer
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	caller := &engine.Caller{EngineKey: "pk_example", UserToken: "the-callers-backend-token"}
	// One second the phone line heard, at 16 kHz: a vowel-like sound between two quarters of
	// silence.
	utterance := make([]int16, 16000)
	for i := 4000; i < 12000; i++ {
		for h := 1.0; h <= 12; h++ {
			utterance[i] += int16(4000 * math.Sin(2*math.Pi*140*h*float64(i)/16000) / h)
		}
	}

	admission, err := eng.Admit(ctx, caller, engine.Work{Kind: engine.WorkTurn})
	if err != nil {
		log.Fatal(err) // say "try again later" on the line
	}
	defer admission.Release()
	var speaker *engine.Speaker
	for ev, err := range eng.Turn(ctx, caller, &engine.TurnInput{Samples: utterance, Mode: engine.ModeVoice, Admission: admission}) {
		if err != nil {
			log.Fatal(err)
		}
		switch ev.Type {
		case engine.EventStart:
			fmt.Println("heard:", ev.Transcript)
			speaker = eng.Speaker(ctx, caller, ev.Locale)
		case engine.EventSpeak:
			// A real bridge cuts the deltas into sentences and speaks each as soon as it ends.
			audio, err := speaker.Say(ctx, ev.Delta)
			if err != nil {
				log.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, audio.PCM) // to the line
			audio.PCM.Close()
			fmt.Printf("said %q in %.1f s of audio\n", ev.Delta, float64(n)/2/float64(audio.SampleRate))
		case engine.EventDone:
			fmt.Println("done")
		}
	}
	// Output:
	// heard: what is my balance
	// said "Your balance is fine. " in 0.5 s of audio
	// said "Anything else?" in 0.5 s of audio
	// done
}

// phoneRecognizer hears every utterance as the same question.
type phoneRecognizer struct{}

func (phoneRecognizer) Transcribe(context.Context, []int16, int, string) (string, error) {
	return "what is my balance", nil
}

// phoneSynthesizer speaks every line as half a second of 8 kHz silence.
type phoneSynthesizer struct{}

func (phoneSynthesizer) Synthesize(context.Context, string, string) (*engine.Audio, error) {
	return &engine.Audio{SampleRate: 8000, PCM: io.NopCloser(strings.NewReader(strings.Repeat("\x00", 8000)))}, nil
}
