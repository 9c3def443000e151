package sphinx_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"sigs.k8s.io/yaml"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/espeak"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/internal/proc"
	"github.com/convengine/engine/sphinx"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func requireInstalled(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("drives pocketsphinx and espeak-ng")
	}
	t.Cleanup(func() { proc.NoChildren(t, "pocketsphinx_continuous", "espeak-ng") })
}

// newTranscriber returns a Transcriber over the installed pocketsphinx, with the grammar of
// the demo bank's intents.
func newTranscriber(t testing.TB, opts *sphinx.Options) *sphinx.Transcriber {
	t.Helper()
	requireInstalled(t)
	if opts == nil {
		opts = &sphinx.Options{Grammar: intentGrammar}
	}
	s, err := sphinx.New(opts)
	switch {
	case errors.Is(err, sphinx.ErrNotInstalled):
		t.Fatalf("%v: install it with apt-get install pocketsphinx pocketsphinx-en-us", err)
	case errors.Is(err, sphinx.ErrNoModel):
		t.Fatalf("%v: install it with apt-get install pocketsphinx-en-us", err)
	case err != nil:
		t.Fatal(err)
	}
	return s
}

func intentGrammar(t *engine.Tenant, known func(string) bool) (string, error) {
	return intent.Grammar(t.Intents, &intent.GrammarOptions{Known: known})
}

func demoTenant(t testing.TB) *engine.Tenant {
	t.Helper()
	y, err := os.ReadFile("../examples/demobank/intents.yaml")
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	return &engine.Tenant{Key: "pk_demo", Intents: j}
}

// say speaks text with espeak-ng's US English voice and returns the samples and their rate.
func say(t testing.TB, text string) ([]int16, int) {
	t.Helper()
	s, err := espeak.New(nil)
	if err != nil {
		t.Fatalf("%v: install it with apt-get install espeak-ng", err)
	}
	a, err := s.Synthesize(t.Context(), text, "en-us")
	if err != nil {
		t.Fatal(err)
	}
	defer a.PCM.Close()
	b, err := io.ReadAll(a.PCM)
	if err != nil {
		t.Fatal(err)
	}
	return audio.PCMFromBytes(b), a.SampleRate
}

func say16k(t testing.TB, text string) []int16 {
	pcm, rate := say(t, text)
	return audio.Resample(pcm, rate, 16000)
}

func TestGrammarHearsTheDemoPhrases(t *testing.T) {
	s := newTranscriber(t, nil)
	tenant := demoTenant(t)
	for _, tc := range []struct{ say, want string }{
		{"What is my balance?", "what is my balance"},
		{"What's my balance?", "what's my balance"},
		{"Show my recent transactions", "show my recent transactions"},
		{"How close am I to my savings goal?", "how close am i to my savings goal"},
		{"Send 20 dollars to Alex", "send twenty dollars to alex"},
		{"Transfer fifty dollars to Sam", "transfer fifty dollars to sam"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			got, err := s.TranscribeFor(t.Context(), tenant, say16k(t, tc.say), 16000, "en-US")
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("heard %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSilenceAroundSpeech: speech with a second of silence, or of noise, on each side is
// heard as well as without; pocketsphinx's own detection refused most such phrases.
func TestSilenceAroundSpeech(t *testing.T) {
	s := newTranscriber(t, nil)
	tenant := demoTenant(t)
	speech := say16k(t, "What is my balance?")
	for name, pad := range map[string][]int16{"silence": make([]int16, 16000), "dither": dither(16000)} {
		for _, ms := range []int{50, 300, 1000} {
			n := 16 * ms
			pcm := append(append(append([]int16(nil), pad[:n]...), speech...), pad[:n]...)
			got, err := s.TranscribeFor(t.Context(), tenant, pcm, 16000, "en-US")
			if err != nil || got != "what is my balance" {
				t.Errorf("%d ms of %s on each side: heard %q, %v", ms, name, got, err)
			}
		}
	}
}

// dither is n samples of the faint noise of a digital recording.
func dither(n int) []int16 {
	pcm := make([]int16, n)
	x := uint32(1)
	for i := range pcm {
		x = x*1664525 + 1013904223
		pcm[i] = int16(x>>30) - 2
	}
	return pcm
}

// TestConfirmRefusesWhatItDidNotHear: a grammar makes the recogniser hear one of its phrases
// in any speech; with Confirm, a heard amount a free-form pass does not also hear is refused
// as not understood, and one it hears is kept.
func TestConfirmRefusesWhatItDidNotHear(t *testing.T) {
	s := newTranscriber(t, &sphinx.Options{Grammar: intentGrammar, Confirm: intent.NumberWords})
	tenant := demoTenant(t)
	for _, tc := range []struct{ say, want string }{
		{"Tell me my balance", ""},
		{"What is the weather tomorrow?", ""},
		{"Send 20 dollars to Alex", "send twenty dollars to alex"},
		{"What is my balance?", "what is my balance"}, // no amount: no second pass
	} {
		got, err := s.TranscribeFor(t.Context(), tenant, say16k(t, tc.say), 16000, "en-US")
		switch {
		case tc.want == "" && !errors.Is(err, engine.ErrNotUnderstood):
			t.Errorf("%q: heard %q, %v; want it not understood", tc.say, got, err)
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("%q: heard %q, %v; want %q", tc.say, got, err, tc.want)
		}
	}
}

// TestUnconfirmedKeepsTheRequest: with Unconfirmed, a result whose amount the free-form pass
// did not hear becomes the request without it, and one it heard stays whole.
func TestUnconfirmedKeepsTheRequest(t *testing.T) {
	s := newTranscriber(t, &sphinx.Options{Grammar: intentGrammar, Confirm: intent.NumberWords,
		Unconfirmed: intent.WithoutAmounts})
	tenant := demoTenant(t)
	got, err := s.TranscribeFor(t.Context(), tenant, say16k(t, "Send 20 dollars to Alex"), 16000, "en-US")
	if err != nil || got != "send twenty dollars to alex" {
		t.Errorf("a clear amount: heard %q, %v", got, err)
	}
	// Speech the grammar hears as a transfer whose amount the free-form pass does not share
	// (TestConfirmRefusesWhatItDidNotHear) keeps the request and loses the amount.
	for _, say := range []string{"Tell me my balance", "What is the weather tomorrow?"} {
		got, err := s.TranscribeFor(t.Context(), tenant, say16k(t, say), 16000, "en-US")
		if err != nil || len(intent.NumberWords(got)) > 0 || !strings.Contains(got, "money") {
			t.Errorf("%q: heard %q, %v; want a request for money without an amount", say, got, err)
		}
	}
}

func TestResamplesOtherRates(t *testing.T) {
	s := newTranscriber(t, nil)
	pcm, rate := say(t, "Check my balance")
	got, err := s.TranscribeFor(t.Context(), demoTenant(t), pcm, rate, "en")
	if err != nil || got != "check my balance" {
		t.Errorf("audio at %d Hz: heard %q, %v", rate, got, err)
	}
}

func TestFreeForm(t *testing.T) {
	s := newTranscriber(t, &sphinx.Options{})
	got, err := s.TranscribeFor(t.Context(), demoTenant(t), say16k(t, "Hello world, this is a test."), 16000, "en-US")
	if err != nil {
		t.Fatal(err)
	}
	if got == "" {
		t.Error("heard nothing with the language model")
	}
}

func TestSilence(t *testing.T) {
	s := newTranscriber(t, nil)
	for name, pcm := range map[string][]int16{"empty": nil, "two seconds of silence": make([]int16, 32000)} {
		got, err := s.TranscribeFor(t.Context(), demoTenant(t), pcm, 16000, "en")
		if err != nil || got != "" {
			t.Errorf("%s: heard %q, %v", name, got, err)
		}
	}
}

func TestLocales(t *testing.T) {
	s := newTranscriber(t, nil)
	var pcm []int16 // nothing to hear: the locale is checked, no process runs
	for _, loc := range []string{"en", "en-US", "en-GB", ""} {
		if _, err := s.Transcribe(t.Context(), pcm, 16000, loc); err != nil {
			t.Errorf("%q: %v", loc, err)
		}
	}
	for _, loc := range []string{"fr", "es-MX", "zz"} {
		_, err := s.Transcribe(t.Context(), pcm, 16000, loc)
		if !errors.Is(err, sphinx.ErrNoModel) || !errors.Is(err, engine.ErrUnsupportedLocale) {
			t.Errorf("%q: %v, want ErrNoModel and ErrUnsupportedLocale", loc, err)
		}
	}
	if got := strings.Join(s.Locales(), ","); got != "en-us" {
		t.Errorf("Locales() = %s", got)
	}
}

func TestKnownWords(t *testing.T) {
	var known func(string) bool
	s := newTranscriber(t, &sphinx.Options{Grammar: func(_ *engine.Tenant, k func(string) bool) (string, error) {
		known = k
		return "#JSGF V1.0;\ngrammar g;\npublic <a> = hello;\n", nil
	}})
	if _, err := s.TranscribeFor(t.Context(), demoTenant(t), make([]int16, 1600), 16000, "en"); err != nil {
		t.Fatal(err)
	}
	for w, want := range map[string]bool{"balance": true, "what's": true, "alex": true, "muéstrame": false, "saldo": false, "": false} {
		if known(w) != want {
			t.Errorf("known(%q) = %v", w, !want)
		}
	}
}

func TestGrammarErrors(t *testing.T) {
	calls := 0
	s := newTranscriber(t, &sphinx.Options{Grammar: func(*engine.Tenant, func(string) bool) (string, error) {
		calls++
		return "", errors.New("broken intents")
	}})
	tenant := demoTenant(t)
	for range 2 {
		if _, err := s.TranscribeFor(t.Context(), tenant, make([]int16, 1600), 16000, "en"); err == nil || !strings.Contains(err.Error(), "broken intents") {
			t.Errorf("err %v", err)
		}
	}
	if calls != 1 {
		t.Errorf("the grammar was written %d times for one tenant", calls)
	}
	bad := newTranscriber(t, &sphinx.Options{Grammar: func(*engine.Tenant, func(string) bool) (string, error) {
		return "#JSGF V1.0;\ngrammar g;\npublic <a> = zzyzx;\n", nil
	}})
	_, err := bad.TranscribeFor(t.Context(), tenant, say16k(t, "hello"), 16000, "en")
	if err == nil || !strings.Contains(err.Error(), "zzyzx") {
		t.Errorf("a grammar with a word outside the dictionary: %v", err)
	}
}

func TestCancelKillsTheProcess(t *testing.T) {
	s := newTranscriber(t, &sphinx.Options{}) // the language model is slow to load
	pcm := say16k(t, strings.Repeat("This is a long utterance that takes a while to recognise. ", 10))
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for len(proc.Children("pocketsphinx_continuous")) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	if _, err := s.Transcribe(ctx, pcm, 16000, "en"); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
}

func TestNotInstalled(t *testing.T) {
	_, err := sphinx.New(&sphinx.Options{Program: "pocketsphinx-that-is-not-there"})
	if !errors.Is(err, sphinx.ErrNotInstalled) || !strings.Contains(err.Error(), "Debian package pocketsphinx") {
		t.Errorf("err %v", err)
	}
	requireInstalled(t)
	empty := t.TempDir()
	os.Mkdir(filepath.Join(empty, "fr-fr"), 0o755)
	_, err = sphinx.New(&sphinx.Options{ModelDir: empty})
	if !errors.Is(err, sphinx.ErrNoModel) || !strings.Contains(err.Error(), "pocketsphinx-en-us") {
		t.Errorf("no model: %v", err)
	}
}

// BenchmarkTranscribeFor: one grammar run over a short question, as each voice turn makes.
func BenchmarkTranscribeFor(b *testing.B) {
	s := newTranscriber(b, nil)
	tenant := demoTenant(b)
	pcm := say16k(b, "What is my balance?")
	for b.Loop() {
		got, err := s.TranscribeFor(b.Context(), tenant, pcm, 16000, "en-US")
		if err != nil || got != "what is my balance" {
			b.Fatalf("heard %q, %v", got, err)
		}
	}
}
