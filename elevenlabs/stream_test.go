package elevenlabs_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/elevenlabs"
	"github.com/convengine/engine/elevenlabs/elevenlabstest"
)

// readAll speaks text on syn and reads its audio to the end.
func readAll(ctx context.Context, syn engine.Synthesizer, text string) (int, error) {
	a, err := syn.Synthesize(ctx, text, "")
	if err != nil {
		return 0, err
	}
	defer a.PCM.Close()
	b, err := io.ReadAll(a.PCM)
	return len(b), err
}

// An answer's sentences go over one input stream, each with its own audio: the whole of what
// ElevenLabs spoke for it, no more.
func TestStreamInput(t *testing.T) {
	srv := elevenlabstest.New(key)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := newSynth(t, srv, 0).Stream(ctx, "")
	sentences := []string{"Your balance is fine.", "You spent one hundred dollars.", "Anything else?"}
	for _, s := range sentences {
		n, err := readAll(ctx, stream, s)
		if want := len(elevenlabstest.Tone(len(s) + 1)); err != nil || n != want {
			t.Errorf("%q: %d bytes, %v; want %d", s, n, err, want)
		}
	}
	if srv.Streams() != 1 || strings.Join(srv.Texts(), "") != strings.Join(sentences, " ")+" " {
		t.Errorf("%d streams said %q", srv.Streams(), srv.Texts())
	}
}

// A sentence left before its end (the user spoke over the answer) leaves the stream: the next
// sentences are spoken over HTTP, each with its own audio, not the rest of the one before.
func TestStreamInputSentenceLeftEarly(t *testing.T) {
	srv := elevenlabstest.New(key)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := newSynth(t, srv, 0).Stream(ctx, "")
	a, err := stream.Synthesize(ctx, "A rather long first sentence of the answer.", "")
	if err != nil {
		t.Fatal(err)
	}
	a.PCM.Read(make([]byte, 100))
	a.PCM.Close()
	n, err := readAll(ctx, stream, "Next one.")
	if want := len(elevenlabstest.Tone(len("Next one."))); err != nil || n != want {
		t.Errorf("%d bytes, %v; want %d, spoken over HTTP", n, err, want)
	}
}

// A voice the stream was not opened for, or a line longer than the model takes, is spoken over
// HTTP, whole.
func TestStreamInputOtherVoice(t *testing.T) {
	srv := elevenlabstest.New(key)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := newSynth(t, srv, 0).Stream(ctx, "")
	a, err := stream.Synthesize(ctx, "Hello.", "21m00Tcm4TlvDq8ikWAM")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(a.PCM)
	a.PCM.Close()
	if err != nil || len(b) != len(elevenlabstest.Tone(len("Hello."))) {
		t.Errorf("%d bytes, %v", len(b), err)
	}
	if _, err := stream.Synthesize(ctx, "Hello.", "../x"); err == nil {
		t.Error("a voice that is not one was taken")
	}
	_ = elevenlabs.SampleRate
}
