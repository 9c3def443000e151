package elevenlabs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/cloudspeech"
)

// DefaultBaseURL is ElevenLabs' API.
const DefaultBaseURL = "https://api.elevenlabs.io"

// DefaultVoice is the stock voice of ElevenLabs' own examples ("George"), spoken when neither
// the options, the tenant nor the request name one.
const DefaultVoice = "JBFqnCBsd6RMkjVDRZzb"

// SampleRate is the rate of the audio asked for (output_format=pcm_16000).
const SampleRate = 16000

// Options configure a [Synthesizer]. The zero value of each field is its default.
type Options struct {
	// APIKey is the ElevenLabs key; required.
	APIKey engine.Secret
	// BaseURL is the scheme and host of the API: DefaultBaseURL, or a private endpoint's. The
	// WebSocket URL is derived from it (https becomes wss).
	BaseURL string
	// Voice is the voice id spoken by default: DefaultVoice.
	Voice string
	// Model is the model id: "eleven_flash_v2_5", ElevenLabs' lowest-latency model.
	Model string
	// MaxCharacters is the most text one request takes: 40 000, eleven_flash_v2_5's limit
	// (eleven_multilingual_v2 takes 10 000). Longer text is spoken in pieces.
	MaxCharacters int
	// HTTPClient sends the requests: http.DefaultClient.
	HTTPClient *http.Client
	// Timeout bounds the wait for an answer, and the opening of a WebSocket: 10 s.
	Timeout time.Duration
	// ReadTimeout bounds each wait for the next audio once the answer started: 10 s.
	ReadTimeout time.Duration
	// MaxAudio bounds the audio of one line, in seconds: 600.
	MaxAudio int
}

// Synthesizer speaks with ElevenLabs. It is safe for concurrent use.
type Synthesizer struct {
	o    Options
	base string
}

var _ engine.Synthesizer = (*Synthesizer)(nil)

// New returns a synthesizer configured by opts.
func New(opts *Options) (*Synthesizer, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.APIKey == "" {
		return nil, errors.New("elevenlabs: an API key is required")
	}
	base, err := cloudspeech.BaseURL(o.BaseURL, DefaultBaseURL)
	if err != nil {
		return nil, fmt.Errorf("elevenlabs: %w", err)
	}
	if o.Voice == "" {
		o.Voice = DefaultVoice
	}
	if !voiceID.MatchString(o.Voice) {
		return nil, fmt.Errorf("elevenlabs: %q is not a voice id", cloudspeech.Printable(o.Voice, 64))
	}
	if o.Model == "" {
		o.Model = "eleven_flash_v2_5"
	}
	if o.MaxCharacters <= 0 {
		o.MaxCharacters = 40000
	}
	cloudspeech.Defaults(&o.HTTPClient, &o.Timeout, &o.ReadTimeout, &o.MaxAudio)
	return &Synthesizer{o: o, base: base}, nil
}

// voiceID is the form of ElevenLabs' voice ids; anything else never reaches a URL.
var voiceID = regexp.MustCompile(`^[A-Za-z0-9]{1,64}$`)

func (s *Synthesizer) voice(v string) (string, error) {
	if v == "" {
		return s.o.Voice, nil
	}
	if !voiceID.MatchString(v) {
		return "", fmt.Errorf("%w: %q is not an ElevenLabs voice id", engine.ErrUnknownVoice, cloudspeech.Printable(v, 64))
	}
	return v, nil
}

// Synthesize implements [engine.Synthesizer]: it returns once ElevenLabs starts answering, the
// PCM (16 kHz) streaming as it comes.
func (s *Synthesizer) Synthesize(ctx context.Context, text, voice string) (*engine.Audio, error) {
	v, err := s.voice(voice)
	if err != nil {
		return nil, err
	}
	pieces := cloudspeech.Pieces(text, s.o.MaxCharacters)
	if len(pieces) == 0 {
		return nil, errors.New("elevenlabs: no text to synthesize")
	}
	first, err := s.request(ctx, pieces[0], v)
	if err != nil {
		return nil, err
	}
	cloudspeech.Name(ctx, "elevenlabs")
	next := func(text string) (io.ReadCloser, error) { return s.request(ctx, text, v) }
	return &engine.Audio{SampleRate: SampleRate, PCM: cloudspeech.Sequence(first, pieces[1:], next)}, nil
}

// request asks for one piece of text and returns its audio as it streams.
func (s *Synthesizer) request(ctx context.Context, text, voice string) (io.ReadCloser, error) {
	body, _ := json.Marshal(map[string]any{"text": text, "model_id": s.o.Model})
	u := s.base + "/v1/text-to-speech/" + voice + "/stream?" + url.Values{"output_format": {"pcm_16000"}}.Encode()
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("elevenlabs: %w", err)
	}
	req.Header.Set("xi-api-key", s.o.APIKey.Reveal())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "audio/pcm")
	resp, err := cloudspeech.Do(ctx, s.o.HTTPClient, req, s.o.Timeout)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("elevenlabs: %w", err)
	}
	if err := cloudspeech.Check("elevenlabs", resp, errorCode); err != nil {
		cancel()
		var se *cloudspeech.StatusError
		if errors.As(err, &se) && (se.Code == "voice_not_found" || se.Status == http.StatusNotFound) {
			return nil, fmt.Errorf("%w: ElevenLabs has no voice %q", engine.ErrUnknownVoice, voice)
		}
		return nil, err
	}
	return cloudspeech.IdleBody(resp.Body, cancel, s.o.ReadTimeout, int64(2*SampleRate*s.o.MaxAudio)), nil
}

// errorCode is the status of ElevenLabs' error bodies: {"detail":{"status":"invalid_api_key","message":"…"}}.
func errorCode(body []byte) string {
	var e struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	var d struct {
		Status string `json:"status"`
		Code   string `json:"code"`
	}
	if json.Unmarshal(e.Detail, &d) != nil {
		return ""
	}
	return strings.TrimSpace(d.Status + d.Code)
}
