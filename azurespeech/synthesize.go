package azurespeech

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/cloudspeech"
)

// Synthesizer speaks with Azure's text-to-speech REST API. It is safe for concurrent use.
type Synthesizer struct{ c *client }

var (
	_ engine.Synthesizer  = (*Synthesizer)(nil)
	_ engine.VoiceChooser = (*Synthesizer)(nil)
)

// NewSynthesizer returns a synthesizer configured by opts.
func NewSynthesizer(opts *Options) (*Synthesizer, error) {
	c, err := newClient(opts)
	if err != nil {
		return nil, err
	}
	return &Synthesizer{c: c}, nil
}

// voices are the voices spoken for a language when neither the tenant nor the request name
// one: Azure's multilingual or usual neural voice of the language.
var voices = map[string]string{
	"ar": "ar-SA-ZariyahNeural", "de": "de-DE-SeraphinaMultilingualNeural", "en": DefaultVoice,
	"es": "es-ES-ElviraNeural", "fr": "fr-FR-VivienneMultilingualNeural", "it": "it-IT-ElsaNeural",
}

// VoiceFor implements [engine.VoiceChooser]: a voice of locale's language, "" for the default.
func (s *Synthesizer) VoiceFor(locale string) string {
	lang, _, _ := strings.Cut(strings.ToLower(locale), "-")
	return voices[lang]
}

// Synthesize implements [engine.Synthesizer]: it returns once Azure starts answering, the PCM
// (16 kHz) streaming as it comes.
func (s *Synthesizer) Synthesize(ctx context.Context, text, voice string) (*engine.Audio, error) {
	if voice == "" {
		voice = s.c.o.Voice
	}
	locale, ok := voiceLocale(voice)
	if !ok {
		return nil, fmt.Errorf("%w: %q is not an Azure voice name", engine.ErrUnknownVoice, cloudspeech.Printable(voice, 64))
	}
	parts := cloudspeech.Pieces(text, s.c.o.MaxCharacters)
	if len(parts) == 0 {
		return nil, errors.New("azurespeech: no text to synthesize")
	}
	next := func(text string) (io.ReadCloser, error) { return s.request(ctx, text, voice, locale) }
	first, err := next(parts[0])
	if err != nil {
		return nil, err
	}
	cloudspeech.Name(ctx, "azure")
	return &engine.Audio{SampleRate: SampleRate, PCM: cloudspeech.Sequence(first, parts[1:], next)}, nil
}

// SSML is the document a line is spoken from: the voice, its locale, the text escaped.
func SSML(text, voice, locale string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `<speak version="1.0" xmlns="http://www.w3.org/2001/10/synthesis" xml:lang="%s"><voice name="%s">`, locale, voice)
	xml.EscapeText(&b, []byte(text))
	b.WriteString(`</voice></speak>`)
	return b.Bytes()
}

// request asks for a piece of text and returns its audio as it streams.
func (s *Synthesizer) request(ctx context.Context, text, voice, locale string) (io.ReadCloser, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.c.tts+"/cognitiveservices/v1", bytes.NewReader(SSML(text, voice, locale)))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("azurespeech: %w", err)
	}
	if err := s.c.authorize(ctx, req); err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Content-Type", "application/ssml+xml")
	req.Header.Set("X-Microsoft-OutputFormat", "raw-16khz-16bit-mono-pcm")
	req.Header.Set("User-Agent", "convengine")
	resp, err := cloudspeech.Do(ctx, s.c.o.HTTPClient, req, s.c.o.Timeout)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("azurespeech: synthesis: %w", err)
	}
	if err := cloudspeech.Check("azurespeech", resp, errorCode); err != nil {
		cancel()
		return nil, err
	}
	return cloudspeech.IdleBody(resp.Body, cancel, s.c.o.ReadTimeout, int64(2*SampleRate*s.c.o.MaxAudio)), nil
}
