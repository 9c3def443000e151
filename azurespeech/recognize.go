package azurespeech

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/internal/cloudspeech"
)

// maxSeconds is the most audio the REST API for short audio takes.
const maxSeconds = 60

// Transcriber hears speech with Azure's REST API for short audio. It is safe for concurrent use.
type Transcriber struct{ c *client }

var _ engine.Transcriber = (*Transcriber)(nil)

// NewTranscriber returns a transcriber configured by opts.
func NewTranscriber(opts *Options) (*Transcriber, error) {
	c, err := newClient(opts)
	if err != nil {
		return nil, err
	}
	return &Transcriber{c: c}, nil
}

// phrase is the answer of the REST API for short audio, simple or detailed.
type phrase struct {
	RecognitionStatus string `json:"RecognitionStatus"`
	DisplayText       string `json:"DisplayText"`
	NBest             []struct {
		Confidence float64 `json:"Confidence"`
		Display    string  `json:"Display"`
		Lexical    string  `json:"Lexical"`
	} `json:"NBest"`
}

// Locales Azure is asked for when the engine gives a language alone.
var defaultRegions = map[string]string{
	"ar": "ar-SA", "de": "de-DE", "en": "en-US", "es": "es-ES", "fr": "fr-FR", "it": "it-IT",
	"ja": "ja-JP", "nl": "nl-NL", "pl": "pl-PL", "pt": "pt-BR", "sv": "sv-SE", "zh": "zh-CN",
}

// azureLocale is the locale Azure is asked to hear: a BCP 47 tag with its region, the
// language's usual one when it has none.
func azureLocale(locale string) (string, bool) {
	if locale == "" {
		return "en-US", true
	}
	lang, region, _ := strings.Cut(locale, "-")
	lang = strings.ToLower(lang)
	if region == "" {
		l, ok := defaultRegions[lang]
		return l, ok
	}
	if len(lang) < 2 || len(lang) > 3 || len(region) != 2 || strings.Trim(lang+region, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		return "", false
	}
	return lang + "-" + strings.ToUpper(region), true
}

// Transcribe implements [engine.Transcriber].
func (t *Transcriber) Transcribe(ctx context.Context, pcm []int16, rate int, locale string) (string, error) {
	lang, ok := azureLocale(locale)
	if !ok {
		return "", fmt.Errorf("%w: azurespeech: %q", engine.ErrUnsupportedLocale, cloudspeech.Printable(locale, 35))
	}
	if rate < 8000 || rate > 48000 {
		return "", fmt.Errorf("azurespeech: a sample rate of %d Hz is outside 8000 to 48000 Hz", rate)
	}
	if rate != SampleRate {
		pcm = audio.Resample(pcm, rate, SampleRate)
	}
	if len(pcm) > maxSeconds*SampleRate {
		return "", fmt.Errorf("azurespeech: %d seconds of audio is over the %d the REST API for short audio takes", len(pcm)/SampleRate, maxSeconds)
	}
	q := url.Values{"language": {lang}, "format": {"detailed"}, "profanity": {"raw"}}
	if t.c.o.Simple {
		q.Set("format", "simple")
	}
	u := t.c.stt + "/speech/recognition/conversation/cognitiveservices/v1?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(audio.EncodeWAV(pcm, SampleRate)))
	if err != nil {
		return "", fmt.Errorf("azurespeech: %w", err)
	}
	if err := t.c.authorize(ctx, req); err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "audio/wav; codecs=audio/pcm; samplerate=16000")
	req.Header.Set("Accept", "application/json")
	body, err := cloudspeech.Answer(ctx, t.c.o.HTTPClient, req, t.c.o.Timeout, "azurespeech", errorCode)
	if err != nil {
		return "", fmt.Errorf("azurespeech: recognition: %w", err)
	}
	text, err := parsePhrase(body)
	if err == nil {
		cloudspeech.Name(ctx, "azure")
	}
	return text, err
}

// ErrRecognition is wrapped by the error of an answer whose RecognitionStatus is Error or
// TooManyRequests, or that is not the API's.
var ErrRecognition = errors.New("azurespeech: recognition failed")

// parsePhrase reads an answer of the REST API for short audio.
func parsePhrase(body []byte) (string, error) {
	var p phrase
	if err := json.Unmarshal(body, &p); err != nil {
		return "", fmt.Errorf("%w: the answer is not the REST API's JSON", ErrRecognition)
	}
	switch p.RecognitionStatus {
	case "Success":
		if len(p.NBest) > 0 {
			return strings.TrimSpace(p.NBest[0].Display), nil
		}
		return strings.TrimSpace(p.DisplayText), nil
	case "InitialSilenceTimeout":
		return "", nil // no speech
	case "NoMatch", "BabbleTimeout":
		return "", fmt.Errorf("%w: azurespeech: %s", engine.ErrNotUnderstood, p.RecognitionStatus)
	default:
		return "", fmt.Errorf("%w: RecognitionStatus %q", ErrRecognition, cloudspeech.Printable(p.RecognitionStatus, 40))
	}
}
