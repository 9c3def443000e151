package enginetest

import (
	"bytes"
	"context"
	"io"
	"sync"
	"time"

	"github.com/convengine/engine"
)

// BenchTranscriber is an [engine.Transcriber] for measuring the engine itself: it hears a
// configured transcript after a configured delay, whatever the audio, so that the engine's
// share of a voice turn is what a measurement shows beyond that delay. It is safe for
// concurrent use; do not change its fields once it transcribed.
type BenchTranscriber struct {
	// Transcript is what it hears; empty hears nothing (the engine answers no_speech).
	Transcript string
	// Delay is waited before answering, or until ctx ends.
	Delay time.Duration
}

// Transcribe waits Delay and returns Transcript.
func (b *BenchTranscriber) Transcribe(ctx context.Context, pcm []int16, rate int, locale string) (string, error) {
	if err := sleep(ctx, b.Delay); err != nil {
		return "", err
	}
	return b.Transcript, nil
}

// BenchSynthesizer is an [engine.Synthesizer] for measuring the engine itself: for every
// sentence it returns Duration of silence at SampleRate after Delay. The samples are made
// once and shared, so that it costs next to nothing itself. It is safe for concurrent use; do
// not change its fields once it synthesized.
type BenchSynthesizer struct {
	// Delay is waited before the audio is returned, or until ctx ends.
	Delay time.Duration
	// Duration is the length of the audio of each sentence (default one second).
	Duration time.Duration
	// SampleRate is the rate of the audio (default 22 050 Hz, espeak-ng's).
	SampleRate int

	once sync.Once
	pcm  []byte
	rate int
}

func (b *BenchSynthesizer) init() {
	b.rate = b.SampleRate
	if b.rate <= 0 {
		b.rate = 22050
	}
	d := b.Duration
	if d <= 0 {
		d = time.Second
	}
	b.pcm = make([]byte, 2*int(d.Seconds()*float64(b.rate)))
}

// Synthesize waits Delay and returns the audio; text and voice are not looked at.
func (b *BenchSynthesizer) Synthesize(ctx context.Context, text, voice string) (*engine.Audio, error) {
	b.once.Do(b.init)
	if err := sleep(ctx, b.Delay); err != nil {
		return nil, err
	}
	return &engine.Audio{SampleRate: b.rate, PCM: io.NopCloser(bytes.NewReader(b.pcm))}, nil
}
