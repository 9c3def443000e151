package engine

import (
	"context"
	"errors"
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

// A StreamingSynthesizer speaks one answer's sentences over one connection, opened before the
// first is written: [Engine.Speaker] opens one for each answer, whose Say speaks on it. ctx bounds it.
type StreamingSynthesizer interface {
	Stream(ctx context.Context, voice string) Synthesizer
}

// SpeechEventOf returns, within a call of the Synthesizer or Transcriber (or of Listening.Finish), the
// Observer's event of it: whose speech it is, and its Provider, set by one that chooses a provider.
func SpeechEventOf(ctx context.Context) *SpeechEvent {
	ev, _ := ctx.Value(speechEventKey{}).(*SpeechEvent)
	return ev
}

type speechEventKey struct{}

// ErrUnknownVoice is wrapped by the error a [Synthesizer] returns for a voice it does not have.
// The engine answers it with 400 unknown_voice.
var ErrUnknownVoice = errors.New("engine: unknown voice")

// ErrNotUnderstood is wrapped by the error a [Transcriber] returns when it heard speech but
// not clearly enough to act on, so that a mumble, or a request it has no words for, is never
// turned into an action. The engine answers the turn with "Sorry, I didn't catch that" in the
// user's language, without asking the model.
var ErrNotUnderstood = errors.New("engine: speech not understood")

// ErrUnsupportedLocale is wrapped by the error a [Transcriber] returns for a language it cannot
// hear. The engine answers it with 422 unsupported_locale, which a retry does not cure.
var ErrUnsupportedLocale = errors.New("engine: unsupported locale")

// A VoiceChooser is a [Synthesizer] with voices for several languages. When neither a request
// nor its tenant names a voice, the engine asks it for the voice of the answer's locale, a
// BCP 47 tag; "" means the synthesizer's default voice. It is called from many goroutines at
// once.
type VoiceChooser interface {
	VoiceFor(locale string) string
}

// A TenantTranscriber is a [Transcriber] that adapts to the tenant addressed, for example by
// listening only for the tenant's own phrases. The engine calls TranscribeFor instead of
// Transcribe when the Transcriber has it. It is called from many goroutines at once and must
// stop when ctx is cancelled.
type TenantTranscriber interface {
	TranscribeFor(ctx context.Context, t *Tenant, pcm []int16, rate int, locale string) (string, error)
}

// A StreamingTranscriber is a [Transcriber] that hears an utterance while it is spoken, as the
// live APIs of cloud recognisers do: a transport (package voice) starts a [Listening] when the
// user starts speaking, writes the audio as it arrives and hands it to the turn
// ([TurnInput].Listening), whose transcript is then ready at the end of speech rather than a
// recognition later. Transcribe still serves audio that comes whole. Listen is called from
// many goroutines at once; ctx bounds the whole utterance.
type StreamingTranscriber interface {
	Transcriber
	Listen(ctx context.Context, t *Tenant, rate int, locale string) (Listening, error)
}

// Listening is one utterance being heard by a [StreamingTranscriber]. Write, Heard and Finish
// are called from one goroutine at a time, in that order; Close at any time, more than once.
type Listening interface {
	// Write sends samples (16-bit mono at the Listen rate) without waiting for the provider;
	// it copies them.
	Write(pcm []int16) error
	// Heard is the provider's hypothesis so far and whether its endpointing found the end of
	// the utterance.
	Heard() (text string, ended bool)
	// Finish ends the audio and returns the final transcript, with the errors of Transcribe.
	Finish(ctx context.Context) (string, error)
	// Close lets the provider's connection go.
	Close() error
}
