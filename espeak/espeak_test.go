package espeak_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/espeak"
	"github.com/convengine/engine/internal/proc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newSynthesizer returns a Synthesizer over the installed espeak-ng.
func newSynthesizer(t *testing.T, opts *espeak.Options) *espeak.Synthesizer {
	t.Helper()
	if testing.Short() {
		t.Skip("drives espeak-ng")
	}
	s, err := espeak.New(opts)
	if errors.Is(err, espeak.ErrNotInstalled) {
		t.Fatalf("%v: install it with apt-get install espeak-ng", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proc.NoChildren(t, "espeak-ng") })
	return s
}

func speak(t *testing.T, s *espeak.Synthesizer, text, voice string) (int, []int16) {
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
	if len(b)%2 != 0 {
		t.Errorf("%d bytes of 16-bit samples", len(b))
	}
	return a.SampleRate, audio.PCMFromBytes(b)
}

func TestSynthesize(t *testing.T) {
	s := newSynthesizer(t, nil)
	for _, voice := range []string{"", "en-us", "EN-US", "English_(America)", "gmw/en-US", "en-us+f3", "es+Annie", "ar"} {
		t.Run(voice, func(t *testing.T) {
			rate, pcm := speak(t, s, "Hello there. Your balance is $1,234.56.", voice)
			if rate != 22050 {
				t.Errorf("sample rate %d", rate)
			}
			if secs := float64(len(pcm)) / float64(rate); secs < 1 || secs > 10 {
				t.Errorf("%.2f s of audio for two sentences", secs)
			}
			if loudest(pcm) < 1000 {
				t.Error("the audio is silent")
			}
		})
	}
}

func TestRateAndPitch(t *testing.T) {
	text := "The quick brown fox jumps over the lazy dog."
	_, normal := speak(t, newSynthesizer(t, nil), text, "en-us")
	_, fast := speak(t, newSynthesizer(t, &espeak.Options{Rate: 350, Pitch: 80}), text, "en-us")
	if len(fast) >= len(normal)*3/4 {
		t.Errorf("350 words per minute gave %d samples, the default %d", len(fast), len(normal))
	}
	if _, err := espeak.New(&espeak.Options{Rate: 1000}); err == nil {
		t.Error("a rate of 1000 was accepted")
	}
	if _, err := espeak.New(&espeak.Options{Pitch: 100}); err == nil {
		t.Error("a pitch of 100 was accepted")
	}
}

func TestUnknownVoice(t *testing.T) {
	s := newSynthesizer(t, nil)
	for _, voice := range []string{"nope", "en-us+nope", "-w /tmp/x", "--stdout", "English (America)", "en-us+", strings.Repeat("a", 200)} {
		_, err := s.Synthesize(t.Context(), "hello", voice)
		if !errors.Is(err, engine.ErrUnknownVoice) {
			t.Errorf("voice %q: err %v, want ErrUnknownVoice", voice, err)
		}
	}
}

func TestTextCannotBecomeOptions(t *testing.T) {
	s := newSynthesizer(t, nil)
	out := filepath.Join(t.TempDir(), "out.wav")
	_, pcm := speak(t, s, "-w "+out+" --help -v nope", "")
	if len(pcm) == 0 {
		t.Error("no audio for text that looks like options")
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("text was read as the -w option")
	}
}

func TestNothingToSay(t *testing.T) {
	s := newSynthesizer(t, nil)
	for _, text := range []string{"", "   ", "\x00\x01\x02", "\xff\xfe"} {
		rate, pcm := speak(t, s, text, "")
		if rate <= 0 || len(pcm) != 0 {
			t.Errorf("%q: %d samples at %d Hz", text, len(pcm), rate)
		}
	}
}

func longText() string {
	return strings.Repeat("This sentence is here to keep the synthesizer busy for a while. ", 200)
}

func TestAudioStreamsWhileTheProgramRuns(t *testing.T) {
	s := newSynthesizer(t, nil)
	a, err := s.Synthesize(t.Context(), longText(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.PCM.Close()
	if _, err := io.ReadFull(a.PCM, make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	if len(proc.Children("espeak-ng")) == 0 {
		t.Error("the first samples arrived only after espeak-ng had finished")
	}
}

func TestCloseKillsTheProcess(t *testing.T) {
	s := newSynthesizer(t, nil)
	a, err := s.Synthesize(t.Context(), longText(), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(a.PCM, make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	a.PCM.Close()
	proc.NoChildren(t, "espeak-ng")
}

func TestCancelKillsTheProcess(t *testing.T) {
	s := newSynthesizer(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	a, err := s.Synthesize(ctx, longText(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.PCM.Close()
	cancel()
	if _, err := io.Copy(io.Discard, a.PCM); !errors.Is(err, context.Canceled) {
		t.Errorf("reading after cancel: %v, want context.Canceled", err)
	}
	proc.NoChildren(t, "espeak-ng")
}

func TestVoiceFor(t *testing.T) {
	s := newSynthesizer(t, nil)
	for locale, want := range map[string]string{
		"en-US": "en-us", "en-GB": "en-gb", "en": "en-gb", "es": "es", "es-MX": "es-419",
		"fr": "fr-fr", "ar": "ar", "ar-EG": "ar", "pt-BR": "pt-br", "zz": "",
	} {
		if got := s.VoiceFor(locale); got != want {
			t.Errorf("VoiceFor(%q) = %q, want %q", locale, got, want)
		}
	}
}

func TestNotInstalled(t *testing.T) {
	_, err := espeak.New(&espeak.Options{Program: "espeak-ng-that-is-not-there"})
	if !errors.Is(err, espeak.ErrNotInstalled) || !strings.Contains(err.Error(), "Debian package espeak-ng") {
		t.Errorf("err %v", err)
	}
	var notFound *exec.Error
	if !errors.As(err, &notFound) {
		t.Errorf("err %v does not carry the lookup error", err)
	}
}

func loudest(pcm []int16) int {
	m := 0
	for _, s := range pcm {
		m = max(m, int(s), -int(s))
	}
	return m
}
