package flite_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/flite"
	"github.com/convengine/engine/internal/proc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newSynthesizer(t *testing.T) *flite.Synthesizer {
	t.Helper()
	if testing.Short() {
		t.Skip("drives flite")
	}
	s, err := flite.New(nil)
	switch {
	case errors.Is(err, flite.ErrNotInstalled):
		t.Fatalf("%v: install it with apt-get install flite", err)
	case err != nil:
		t.Fatal(err)
	}
	t.Cleanup(func() { proc.NoChildren(t, "flite") })
	return s
}

func speak(t *testing.T, s *flite.Synthesizer, text, voice string) (int, []int16) {
	t.Helper()
	a, err := s.Synthesize(t.Context(), text, voice)
	if err != nil {
		t.Fatal(err)
	}
	defer a.PCM.Close()
	b, err := io.ReadAll(a.PCM)
	if err != nil {
		t.Fatal(err)
	}
	return a.SampleRate, audio.PCMFromBytes(b)
}

func loudest(pcm []int16) int {
	m := 0
	for _, s := range pcm {
		m = max(m, int(s), -int(s))
	}
	return m
}

func TestSynthesize(t *testing.T) {
	s := newSynthesizer(t)
	for _, voice := range []string{"", "slt", "kal16"} {
		rate, pcm := speak(t, s, "Your balance is twenty dollars.", voice)
		if secs := float64(len(pcm)) / float64(rate); rate != 16000 || secs < 0.8 || secs > 5 || loudest(pcm) < 1000 {
			t.Errorf("voice %q: %d Hz, %.2f s, loudest %d", voice, rate, secs, loudest(pcm))
		}
	}
	// Text that looks like an option is said, not obeyed; accents are dropped, not spelt.
	if _, pcm := speak(t, s, "-o /tmp/x --help Zoë", ""); len(pcm) < 8000 {
		t.Errorf("%d samples for a text beginning with a dash", len(pcm))
	}
	if _, pcm := speak(t, s, " \x00\x07 ", ""); len(pcm) != 0 {
		t.Errorf("%d samples for nothing to say", len(pcm))
	}
}

func TestVoices(t *testing.T) {
	s := newSynthesizer(t)
	if !s.Has("slt") || !s.Has(flite.DefaultVoice) || s.Has("en-us") {
		t.Errorf("voices %v", s.Voices())
	}
	for locale, want := range map[string]string{"en": flite.DefaultVoice, "en-GB": flite.DefaultVoice, "es": "", "ar": ""} {
		if got := s.VoiceFor(locale); got != want {
			t.Errorf("VoiceFor(%q) = %q, want %q", locale, got, want)
		}
	}
	if _, err := s.Synthesize(t.Context(), "hello", "en-us"); !errors.Is(err, engine.ErrUnknownVoice) {
		t.Errorf("an espeak-ng voice: %v", err)
	}
	if _, err := flite.New(&flite.Options{Voice: "nobody"}); !errors.Is(err, engine.ErrUnknownVoice) {
		t.Errorf("an unknown default voice: %v", err)
	}
	if _, err := flite.New(&flite.Options{Program: "/nonexistent/flite"}); !errors.Is(err, flite.ErrNotInstalled) {
		t.Errorf("a missing program: %v", err)
	}
}

// TestCancel: cancelling the context, or closing the audio before its end, stops flite.
func TestCancel(t *testing.T) {
	s := newSynthesizer(t)
	long := ""
	for range 200 {
		long += "This is a long answer that takes a while to say. "
	}
	ctx, cancel := context.WithCancel(t.Context())
	a, err := s.Synthesize(ctx, long, "")
	if err == nil {
		cancel()
		_, err = io.ReadAll(a.PCM)
		a.PCM.Close()
	}
	cancel()
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	a, err = s.Synthesize(t.Context(), long, "")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	a.PCM.Read(buf)
	done := make(chan struct{})
	go func() { a.PCM.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not stop flite")
	}
}

// BenchmarkSynthesize reports how many seconds of speech flite makes per second.
func BenchmarkSynthesize(b *testing.B) {
	s, err := flite.New(nil)
	if err != nil {
		b.Fatalf("%v: install it with apt-get install flite", err)
	}
	var seconds float64
	start := time.Now()
	for b.Loop() {
		a, err := s.Synthesize(context.Background(), "I can send twenty dollars to Alex. Please confirm.", "")
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, a.PCM)
		a.PCM.Close()
		seconds += float64(n/2) / float64(a.SampleRate)
	}
	b.ReportMetric(seconds/time.Since(start).Seconds(), "x-realtime")
}
