package engine

import (
	"context"
	"io"
)

// A Synthesizer turns a line of text into speech. It is called from many goroutines at once and
// must stop when ctx is cancelled.
type Synthesizer interface {
	Synthesize(ctx context.Context, text, voice string) (*Audio, error)
}

// Audio is synthesized speech: 16-bit little-endian mono PCM at SampleRate. PCM streams as it is
// produced; the caller closes it when done, also after reading it to the end, so that what
// produces it (a process, a connection) is released.
type Audio struct {
	SampleRate int
	PCM        io.ReadCloser
}

// A Transcriber turns speech into text: pcm is 16-bit mono samples at rate, locale a BCP 47
// tag. It is called from many goroutines at once and must stop when ctx is cancelled. pcm is
// the caller's again once Transcribe returns: the engine reuses its memory for later
// utterances, so a Transcriber that keeps samples beyond the call copies them.
type Transcriber interface {
	Transcribe(ctx context.Context, pcm []int16, rate int, locale string) (string, error)
}
