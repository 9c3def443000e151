package engine

import (
	"context"
	"errors"
)

// ErrUnknownVoice is wrapped by the error a [Synthesizer] returns for a voice it does not have.
// The engine answers it with 400 unknown_voice.
var ErrUnknownVoice = errors.New("engine: unknown voice")

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
