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

// A stream that fails is given up: what it fails with is the sentence's error, which names the
// provider's reason and never the key, and a stream that cannot open speaks over HTTP.
func TestStreamInputFaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  elevenlabstest.Fault
		status int
		want   string
	}{
		{"wrong key", elevenlabstest.None, 0, "invalid_api_key"},
		{"rate limited", elevenlabstest.Status, 429, "429 Too Many Requests"},
		{"stalled", elevenlabstest.Stall, 0, "sent nothing for too long"},
		{"cut off", elevenlabstest.CutOff, 0, "closed with status 1011"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := elevenlabstest.New(key)
			defer srv.Close()
			srv.Fault, srv.Status = tc.fault, tc.status
			if tc.name == "wrong key" {
				srv.Key = "another"
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, err := readAll(ctx, newSynth(t, srv, 0).Stream(ctx, ""), "Hello there.")
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), key) {
				t.Errorf("error %v, want one saying %q without the key", err, tc.want)
			}
		})
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
