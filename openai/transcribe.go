package openai

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
)

// Transcriber is an [engine.Transcriber] over the transcriptions endpoint
// (audio/transcriptions) of OpenAI or a compatible server, such as a Whisper server. It is safe
// for concurrent use.
type Transcriber struct {
	s  *settings
	tr openai.AudioTranscriptionService
}

var _ engine.Transcriber = (*Transcriber)(nil)

// NewTranscriber returns a transcriber configured by opts; nil means the defaults.
func NewTranscriber(opts *Options) (*Transcriber, error) {
	s, err := newSettings(opts)
	if err != nil {
		return nil, err
	}
	return &Transcriber{s: s, tr: openai.NewAudioTranscriptionService(s.requestOptions()...)}, nil
}

// Transcribe implements [engine.Transcriber]: it uploads the samples as a WAV file, with the
// language of locale as a hint, and returns the text heard. Silence-only or empty audio may
// give an empty text. Failures are retried as [Options] says.
func (x *Transcriber) Transcribe(ctx context.Context, pcm []int16, rate int, locale string) (string, error) {
	if rate < 8000 || rate > 192000 {
		return "", fmt.Errorf("openai: transcription: a sample rate of %d Hz", rate)
	}
	if len(pcm) == 0 {
		return "", nil
	}
	wav := audio.EncodeWAV(pcm, rate)
	var text string
	err := x.s.retry(ctx, func(ctx context.Context, a *attempt) error {
		p := openai.AudioTranscriptionNewParams{
			File:           openai.File(bytes.NewReader(wav), "speech.wav", "audio/wav"),
			Model:          x.s.TranscriptionModel,
			ResponseFormat: openai.AudioResponseFormatJSON,
		}
		if lang := language(locale); lang != "" {
			p.Language = openai.String(lang)
		}
		var resp *http.Response
		res, err := x.tr.New(ctx, p, option.WithResponseInto(&resp))
		if err != nil {
			return statusError(err, resp)
		}
		a.answered()
		text = strings.TrimSpace(res.Text)
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("openai: transcription: %w", err)
	}
	return text, nil
}

// language is the ISO 639-1 code of a BCP 47 locale ("es-MX" is "es"), or "" when it has none.
func language(locale string) string {
	base, _, _ := strings.Cut(locale, "-")
	base, _, _ = strings.Cut(base, "_")
	if len(base) != 2 {
		return ""
	}
	return strings.ToLower(base)
}
