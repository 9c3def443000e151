package enginetest_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

func TestBenchSynthesizer(t *testing.T) {
	s := &enginetest.BenchSynthesizer{Duration: 500 * time.Millisecond, SampleRate: 16000}
	for range 2 { // the shared samples are read whole each time
		a, err := s.Synthesize(t.Context(), "Hello.", "")
		if err != nil {
			t.Fatal(err)
		}
		pcm, err := io.ReadAll(a.PCM)
		a.PCM.Close()
		if err != nil || a.SampleRate != 16000 || len(pcm) != 16000 {
			t.Fatalf("%d Hz, %d bytes, %v", a.SampleRate, len(pcm), err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := (&enginetest.BenchSynthesizer{Delay: time.Hour}).Synthesize(ctx, "x", ""); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled synthesis returned %v", err)
	}
}

func TestBenchTranscriber(t *testing.T) {
	tr := &enginetest.BenchTranscriber{Transcript: "what is my balance"}
	if got, err := tr.Transcribe(t.Context(), make([]int16, 160), 16000, "en"); got != "what is my balance" || err != nil {
		t.Fatalf("%q, %v", got, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := (&enginetest.BenchTranscriber{Delay: time.Hour}).Transcribe(ctx, nil, 16000, "en"); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled transcription returned %v", err)
	}
}

// TestBenchModelSentences checks that the answer holds the sentences asked for, and the
// model's time to the end of the first.
func TestBenchModelSentences(t *testing.T) {
	for _, c := range []struct {
		deltas, sentences int
		firstEnds         int // the delta that ends the first sentence
	}{{9, 3, 3}, {10, 3, 4}, {4, 0, 4}, {2, 5, 1}, {40, 1, 40}} {
		m := &enginetest.BenchModel{Deltas: c.deltas, Sentences: c.sentences, FirstTokenDelay: time.Second, TokenInterval: time.Millisecond}
		var text strings.Builder
		for ev, err := range m.Stream(t.Context(), &engine.ModelRequest{}) {
			if err != nil {
				t.Fatal(err)
			}
			text.WriteString(ev.Text)
		}
		want := min(c.sentences, c.deltas)
		if got := strings.Count(text.String(), "."); got != want {
			t.Errorf("%d deltas, %d sentences: %d full stops in %q", c.deltas, c.sentences, got, text.String())
		}
		if got, want := m.FirstSentenceDelay(), time.Second+time.Duration(c.firstEnds-1)*time.Millisecond; got != want {
			t.Errorf("%d deltas, %d sentences: first sentence after %v, want %v", c.deltas, c.sentences, got, want)
		}
	}
}
