package testkit

import (
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/espeak"
	"github.com/convengine/engine/flite"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/internal/proc"
	"github.com/convengine/engine/sphinx"
)

// SpeechPrograms are the programs the speech tests drive; none may outlive a test.
var SpeechPrograms = []string{"espeak-ng", "flite", "pocketsphinx_continuous"}

// RequireSpeech skips in -short mode, and checks that the test leaves no speech program running.
func RequireSpeech(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("drives the speech programs (espeak-ng, flite, pocketsphinx)")
	}
	t.Cleanup(func() { proc.NoChildren(t, SpeechPrograms...) })
}

// Espeak returns espeak-ng's synthesizer, or fails naming the Debian package.
func Espeak(t testing.TB) *espeak.Synthesizer {
	t.Helper()
	RequireSpeech(t)
	s, err := espeak.New(nil)
	if err != nil {
		t.Fatalf("%v: install it with apt-get install espeak-ng", err)
	}
	return s
}

// Flite returns flite's synthesizer, or fails naming the Debian package: a test that speaks in
// one of its voices (kal16) asks for it first.
func Flite(t testing.TB) *flite.Synthesizer {
	t.Helper()
	RequireSpeech(t)
	s, err := flite.New(nil)
	if err != nil {
		t.Fatalf("%v: install it with apt-get install flite", err)
	}
	return s
}

// Sphinx returns pocketsphinx with the grammar of each tenant's intents, or fails naming the
// Debian packages.
func Sphinx(t testing.TB) *sphinx.Transcriber {
	t.Helper()
	RequireSpeech(t)
	s, err := sphinx.New(&sphinx.Options{Grammar: func(tenant *engine.Tenant, known func(string) bool) (string, error) {
		return intent.Grammar(tenant.Intents, &intent.GrammarOptions{Known: known})
	}})
	if err != nil {
		t.Fatalf("%v: install them with apt-get install pocketsphinx pocketsphinx-en-us", err)
	}
	return s
}

// WithSpeech fills in cfg's Synthesizer and Transcriber with espeak-ng and pocketsphinx.
func WithSpeech(t testing.TB, cfg engine.Config) engine.Config {
	t.Helper()
	if cfg.Synthesizer == nil {
		cfg.Synthesizer = Espeak(t)
	}
	if cfg.Transcriber == nil {
		cfg.Transcriber = Sphinx(t)
	}
	return cfg
}

// Say speaks text with espeak-ng's US English voice, resampled to 16 kHz as a client sends it.
func Say(t testing.TB, text string) []int16 {
	t.Helper()
	s := Espeak(t)
	a, err := s.Synthesize(context.Background(), text, "en-us")
	if err != nil {
		t.Fatal(err)
	}
	defer a.PCM.Close()
	b, err := io.ReadAll(a.PCM)
	if err != nil {
		t.Fatal(err)
	}
	return audio.Resample(audio.PCMFromBytes(b), a.SampleRate, 16000)
}

// TranscriberFunc is a Transcriber made of a function.
type TranscriberFunc func(ctx context.Context, pcm []int16, rate int, locale string) (string, error)

func (f TranscriberFunc) Transcribe(ctx context.Context, pcm []int16, rate int, locale string) (string, error) {
	return f(ctx, pcm, rate, locale)
}

// FakeSynthesizer speaks every line as a tone of a fixed length, without a program, and
// records the voices it was asked for. With Endless set, a line never ends. The voice "nope"
// is unknown.
type FakeSynthesizer struct {
	Rate    int
	Seconds float64
	Endless bool

	mu     sync.Mutex
	voices []string
	Read   atomic.Int64 // bytes of audio read from it
	Closed atomic.Int64 // audio streams closed
}

func (f *FakeSynthesizer) Synthesize(ctx context.Context, text, voice string) (*engine.Audio, error) {
	if voice == "nope" {
		return nil, errors.Join(engine.ErrUnknownVoice, errors.New("no voice nope"))
	}
	f.mu.Lock()
	f.voices = append(f.voices, voice)
	f.mu.Unlock()
	n := int64(f.Seconds * float64(f.Rate) * 2)
	return &engine.Audio{SampleRate: f.Rate, PCM: &toneReader{ctx: ctx, f: f, left: n, endless: f.Endless}}, nil
}

// LastVoice is the voice of the last line spoken.
func (f *FakeSynthesizer) LastVoice() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.voices) == 0 {
		return ""
	}
	return f.voices[len(f.voices)-1]
}

type toneReader struct {
	ctx     context.Context
	f       *FakeSynthesizer
	left    int64
	endless bool
	pos     int
}

func (r *toneReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	if !r.endless && r.left <= 0 {
		return 0, io.EOF
	}
	n := len(p)
	if !r.endless {
		n = int(min(int64(n), r.left))
		r.left -= int64(n)
	}
	for i := range n {
		p[i] = byte(r.pos * 7)
		r.pos++
	}
	r.f.Read.Add(int64(n))
	return n, nil
}

func (r *toneReader) Close() error {
	r.f.Closed.Add(1)
	return nil
}

// Voiced returns n samples at 16 kHz that the engine's speech detector takes for speech: a
// vowel-like sound (a 140 Hz voice with its harmonics) between two quarters of silence. Tests
// of the engine's machinery send it where a transcriber, not the audio, is what they test.
func Voiced(n int) []int16 {
	pcm := make([]int16, n)
	for i := n / 4; i < n-n/4; i++ {
		t := float64(i) / 16000
		var v float64
		for h := 1; h <= 12; h++ {
			v += math.Sin(2*math.Pi*140*float64(h)*t) / float64(h)
		}
		pcm[i] = int16(4000 * v)
	}
	return pcm
}

// RoomNoise returns n samples of steady background noise at about -45 dBFS, the hiss of a
// quiet room through a laptop's microphone.
func RoomNoise(n int, seed uint64) []int16 {
	r := rand.New(rand.NewPCG(seed, 1))
	pcm := make([]int16, n)
	var lp float64
	for i := range pcm {
		lp = 0.7*lp + 0.3*r.NormFloat64()*300 // a little low-passed, as rooms are
		pcm[i] = int16(lp)
	}
	return pcm
}

// InRoom returns speech as a microphone in that room hears it: after and before some seconds
// of its noise, and over it.
func InRoom(speech []int16, before, after float64, seed uint64) []int16 {
	lead := int(before * 16000)
	pcm := RoomNoise(lead+len(speech)+int(after*16000), seed)
	for i, s := range speech {
		pcm[lead+i] = int16(max(-32768, min(32767, int(pcm[lead+i])+int(s))))
	}
	return pcm
}

// Loudest is the largest magnitude of a sample of pcm.
func Loudest(pcm []int16) int {
	m := 0
	for _, s := range pcm {
		m = max(m, int(s), -int(s))
	}
	return m
}

// SlowTranscriber hears every recording only when free is closed, or gives up when its ctx
// ends, as a recogniser busy with a long queue would; it records when each call started and
// returned.
type SlowTranscriber struct {
	free    chan struct{}
	entered chan struct{}
	// Returned receives when each call returned.
	Returned chan time.Time
}

// NewSlowTranscriber returns a SlowTranscriber; a test frees it (Release) before its server
// waits for the handlers.
func NewSlowTranscriber() *SlowTranscriber {
	return &SlowTranscriber{free: make(chan struct{}), entered: make(chan struct{}, 64), Returned: make(chan time.Time, 64)}
}

func (s *SlowTranscriber) Release() {
	select {
	case <-s.free:
	default:
		close(s.free)
	}
}

func (s *SlowTranscriber) Transcribe(ctx context.Context, _ []int16, _ int, _ string) (string, error) {
	s.entered <- struct{}{}
	defer func() { s.Returned <- time.Now() }()
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case <-s.free:
		return "what's my balance", nil
	}
}

// WaitEntered waits until n more transcriptions have started.
func (s *SlowTranscriber) WaitEntered(t testing.TB, n int) {
	t.Helper()
	for range n {
		select {
		case <-s.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("the transcriber was not asked")
		}
	}
}
