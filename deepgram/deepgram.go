package deepgram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/internal/cloudspeech"
)

// DefaultBaseURL is Deepgram's API.
const DefaultBaseURL = "https://api.deepgram.com"

// ErrNoFinal is wrapped by the error of Finish when Deepgram gave no final result in time, or
// closed the connection before it.
var ErrNoFinal = errors.New("deepgram: no final result")

// Options configure a [Transcriber]. The zero value of each field is its default.
type Options struct {
	// APIKey is the Deepgram key; required.
	APIKey engine.Secret
	// BaseURL is the scheme and host of the API: DefaultBaseURL, or a private endpoint's.
	// The WebSocket URL is derived from it (https becomes wss).
	BaseURL string
	// Model is Deepgram's model: "nova-3".
	Model string
	// Endpointing is the silence after which Deepgram marks a result speech_final: 300 ms.
	Endpointing time.Duration
	// UtteranceEnd is the gap after the last word that makes Deepgram send UtteranceEnd: 1 s.
	UtteranceEnd time.Duration
	// Keyterms returns the words and phrases of a tenant to listen for (payees, products),
	// sent as keyterm parameters; nil sends none. At most 100 are sent.
	Keyterms func(*engine.Tenant) []string
	// HTTPClient sends the pre-recorded requests: http.DefaultClient.
	HTTPClient *http.Client
	// Timeout bounds a connection's opening and a pre-recorded request's answer: 10 s.
	Timeout time.Duration
	// FinalTimeout bounds the wait for the final result after the end of speech: 3 s.
	FinalTimeout time.Duration
	// ReadTimeout bounds the silence of a live connection: no message for this long closes
	// it: 15 s.
	ReadTimeout time.Duration
	// MaxMessage bounds a message from Deepgram: 256 KiB.
	MaxMessage int64
}

// Transcriber hears speech with Deepgram. It is safe for concurrent use.
type Transcriber struct {
	o    Options
	base string
}

var _ engine.StreamingTranscriber = (*Transcriber)(nil)
var _ engine.TenantTranscriber = (*Transcriber)(nil)

// New returns a transcriber configured by opts.
func New(opts *Options) (*Transcriber, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.APIKey == "" {
		return nil, errors.New("deepgram: an API key is required")
	}
	base, err := cloudspeech.BaseURL(o.BaseURL, DefaultBaseURL)
	if err != nil {
		return nil, fmt.Errorf("deepgram: %w", err)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Endpointing, 300*time.Millisecond)
	def(&o.UtteranceEnd, time.Second)
	def(&o.Timeout, 10*time.Second)
	def(&o.FinalTimeout, 3*time.Second)
	def(&o.ReadTimeout, 15*time.Second)
	if o.Model == "" {
		o.Model = "nova-3"
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = 256 << 10
	}
	return &Transcriber{o: o, base: base}, nil
}

// Rates Deepgram is sent: linear16 between 8 and 48 kHz.
const (
	minRate = 8000
	maxRate = 48000
)

func checkRate(rate int) error {
	if rate < minRate || rate > maxRate {
		return fmt.Errorf("deepgram: a sample rate of %d Hz is outside 8000 to 48000 Hz", rate)
	}
	return nil
}

// query is the parameters common to both APIs.
func (t *Transcriber) query(tenant *engine.Tenant, rate int, locale string) url.Values {
	q := url.Values{}
	q.Set("model", t.o.Model)
	q.Set("encoding", "linear16")
	q.Set("sample_rate", strconv.Itoa(rate))
	q.Set("channels", "1")
	q.Set("smart_format", "true")
	if locale != "" {
		q.Set("language", locale)
	}
	if tenant != nil && t.o.Keyterms != nil {
		for i, k := range t.o.Keyterms(tenant) {
			if i == 100 {
				break
			}
			if k = strings.TrimSpace(k); k != "" {
				q.Add("keyterm", k)
			}
		}
	}
	return q
}

func (t *Transcriber) header() http.Header {
	return http.Header{"Authorization": {"Token " + t.o.APIKey.Reveal()}}
}

// Transcribe implements [engine.Transcriber] with the pre-recorded API.
func (t *Transcriber) Transcribe(ctx context.Context, pcm []int16, rate int, locale string) (string, error) {
	return t.TranscribeFor(ctx, nil, pcm, rate, locale)
}

// TranscribeFor implements [engine.TenantTranscriber]: the pre-recorded API, listening for the
// tenant's keyterms.
func (t *Transcriber) TranscribeFor(ctx context.Context, tenant *engine.Tenant, pcm []int16, rate int, locale string) (string, error) {
	if err := checkRate(rate); err != nil {
		return "", err
	}
	u := t.base + "/v1/listen?" + t.query(tenant, rate, locale).Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(audio.AppendPCM(nil, pcm)))
	if err != nil {
		return "", fmt.Errorf("deepgram: %w", err)
	}
	req.Header = t.header()
	req.Header.Set("Content-Type", "application/octet-stream")
	body, err := cloudspeech.Answer(ctx, t.o.HTTPClient, req, t.o.Timeout, "deepgram", errorCode)
	if err != nil {
		return "", fmt.Errorf("deepgram: pre-recorded request: %w", err)
	}
	// {"metadata":{…},"results":{"channels":[{"alternatives":[{"transcript":"…","confidence":0.99,"words":[…]}]}]}}
	// (developers.deepgram.com /reference/speech-to-text/listen-pre-recorded)
	var r struct {
		Results struct {
			Channels []struct {
				Alternatives []alternative `json:"alternatives"`
			} `json:"channels"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return "", fmt.Errorf("deepgram: the answer is not the pre-recorded API's JSON")
	}
	cloudspeech.Name(ctx, "deepgram")
	if len(r.Results.Channels) == 0 || len(r.Results.Channels[0].Alternatives) == 0 {
		return "", nil
	}
	return strings.TrimSpace(r.Results.Channels[0].Alternatives[0].Transcript), nil
}

type alternative struct {
	Transcript string  `json:"transcript"`
	Confidence float64 `json:"confidence"`
}

// errorCode is the code of Deepgram's error bodies: {"err_code":"INVALID_AUTH","err_msg":"…"}.
func errorCode(body []byte) string {
	var e struct {
		Code     string `json:"err_code"`
		Category string `json:"category"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	if e.Code != "" {
		return e.Code
	}
	return e.Category
}
