package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
)

// pcmRate is the sample rate of the speech endpoint's raw PCM.
const pcmRate = 24000

// ErrNoText is returned by [Synthesizer.Synthesize] for text with nothing to say.
var ErrNoText = errors.New("openai: no text to synthesize")

// Synthesizer is an [engine.Synthesizer] over the speech endpoint (audio/speech) of OpenAI or a
// compatible server. It is safe for concurrent use.
type Synthesizer struct {
	s      *settings
	speech openai.AudioSpeechService
}

var _ engine.Synthesizer = (*Synthesizer)(nil)

// NewSynthesizer returns a synthesizer configured by opts; nil means the defaults.
func NewSynthesizer(opts *Options) (*Synthesizer, error) {
	s, err := newSettings(opts)
	if err != nil {
		return nil, err
	}
	return &Synthesizer{s: s, speech: openai.NewAudioSpeechService(s.requestOptions()...)}, nil
}

// Synthesize implements [engine.Synthesizer]: it asks for text spoken by voice (Options.Voice
// when empty) and returns as soon as the server starts answering. The audio's PCM streams from
// the response as the server produces it; the caller must close it. Failures before the audio
// starts are retried as [Options] says.
func (y *Synthesizer) Synthesize(ctx context.Context, text, voice string) (*engine.Audio, error) {
	if strings.TrimSpace(text) == "" {
		return nil, ErrNoText
	}
	if voice == "" {
		voice = y.s.Voice
	}
	p := openai.AudioSpeechNewParams{
		Input:          text,
		Model:          y.s.SpeechModel,
		Voice:          openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String(voice)},
		ResponseFormat: openai.AudioSpeechNewParamsResponseFormat(y.s.SpeechFormat),
	}
	var speech *engine.Audio
	err := y.s.retry(ctx, func(ctx context.Context, a *attempt) error {
		var raw *http.Response
		resp, err := y.speech.New(ctx, p, option.WithResponseInto(&raw))
		if err != nil {
			return statusError(err, raw)
		}
		a.answered()
		body := &releaser{ReadCloser: resp.Body, release: a.keep()}
		rate := pcmRate
		if y.s.SpeechFormat == FormatWAV {
			if rate, err = speechRate(body); err != nil {
				body.Close()
				return final{err}
			}
		}
		speech = &engine.Audio{SampleRate: rate, PCM: body}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("openai: speech: %w", err)
	}
	return speech, nil
}

// releaser is a response body that releases its request's context once closed.
type releaser struct {
	io.ReadCloser
	release func()
	once    sync.Once
}

func (r *releaser) Close() error {
	err := r.ReadCloser.Close()
	r.once.Do(r.release)
	return err
}

// speechRate reads the WAV header of a speech answer, up to its first sample, and returns the
// sample rate. The samples must be 16-bit mono; they run to the end of the body whatever the
// header's sizes say, for a streamed WAV carries placeholders.
func speechRate(r io.Reader) (int, error) {
	h, err := audio.ReadWAVHeader(r)
	switch {
	case err != nil:
		return 0, fmt.Errorf("openai: the speech: %w", err)
	case h.Channels != 1 || h.BitsPerSample != 16:
		return 0, fmt.Errorf("openai: the speech has %d channels of %d bits; it must be 16-bit mono", h.Channels, h.BitsPerSample)
	}
	return h.SampleRate, nil
}
