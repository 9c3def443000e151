package engine_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

// heardStream is a streaming recognition whose Finish answers text or err.
type heardStream struct {
	text   string
	err    error
	closed bool
}

func (h *heardStream) Write([]int16) error                    { return nil }
func (h *heardStream) Heard() (string, bool)                  { return h.text, false }
func (h *heardStream) Finish(context.Context) (string, error) { return h.text, h.err }
func (h *heardStream) Close() error                           { h.closed = true; return nil }

// A turn of samples with their streaming recognition takes its transcript from it; when the
// stream failed (a provider gone mid-utterance), the recording is transcribed instead.
func TestTurnListening(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream *heardStream
		want   string
	}{
		{"streamed", &heardStream{text: "show my transactions"}, "show my transactions"},
		{"stream failed", &heardStream{err: errors.New("deepgram: the connection closed before the final result")}, "what is my balance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tenants, err := engine.NewStaticTenants(&engine.Tenant{Key: "pk_listen", Name: "Listen",
				Environments: map[string]*engine.Environment{engine.EnvProduction: {BackendURL: "https://api.example.com"}}})
			if err != nil {
				t.Fatal(err)
			}
			eng, err := engine.New(engine.Config{Tenants: tenants, SigningKey: testSigningKey,
				Model:       &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Sure.")}},
				Transcriber: phoneRecognizer{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			pcm := make([]int16, 16000)
			for i := 4000; i < 12000; i++ {
				pcm[i] = int16(4000 * math.Sin(2*math.Pi*140*float64(i)/16000))
			}
			heard := ""
			caller := &engine.Caller{EngineKey: "pk_listen", UserToken: "u"}
			for ev, err := range eng.Turn(context.Background(), caller, &engine.TurnInput{Samples: pcm, Listening: tc.stream, Mode: engine.ModeVoice}) {
				if err != nil {
					t.Fatal(err)
				}
				if ev.Type == engine.EventStart {
					heard = ev.Transcript
				}
			}
			if heard != tc.want || !tc.stream.closed {
				t.Errorf("heard %q (closed %v), want %q", heard, tc.stream.closed, tc.want)
			}
		})
	}
}
