package azurespeech

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/cloudspeech"
)

// SampleRate is the rate of the audio asked for and sent: 16 kHz.
const SampleRate = 16000

// DefaultVoice is spoken when neither the options, the tenant nor the request name a voice.
const DefaultVoice = "en-US-AvaMultilingualNeural"

// Options configure a [Transcriber] or a [Synthesizer]. The zero value of each field is its
// default.
type Options struct {
	// Key is the Speech resource's key; required.
	Key engine.Secret
	// Region is the resource's region ("westeurope"); required unless Endpoint is set.
	Region string
	// Endpoint is the scheme and host of a private endpoint, which replaces the region's.
	Endpoint string
	// Tokens exchanges the key for bearer tokens instead of sending it with each request.
	Tokens bool
	// Voice is the voice spoken by default: DefaultVoice.
	Voice string
	// Simple asks recognition for format=simple (DisplayText) rather than detailed (NBest).
	Simple bool
	// MaxCharacters is the most text one synthesis request takes: 3 000, well within the
	// API's 64 KiB of SSML and 10 minutes of audio. Longer text is spoken in pieces.
	MaxCharacters int
	// HTTPClient sends the requests: http.DefaultClient.
	HTTPClient *http.Client
	// Timeout bounds the wait for an answer: 10 s.
	Timeout time.Duration
	// ReadTimeout bounds each wait for the next audio once the answer started: 10 s.
	ReadTimeout time.Duration
	// MaxAudio bounds the audio of one line, in seconds: 600 (the API's 10 minutes).
	MaxAudio int
}

// regionName is the form of Azure's region names.
var regionName = regexp.MustCompile(`^[a-z][a-z0-9]{1,39}$`)

// client is what the transcriber and the synthesizer share: the endpoints and the key.
type client struct {
	o             Options
	stt, tts, sts string

	mu      sync.Mutex
	token   string
	expires time.Time
}

func newClient(opts *Options) (*client, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Key == "" {
		return nil, errors.New("azurespeech: a key is required")
	}
	c := &client{}
	switch {
	case o.Endpoint != "":
		base, err := cloudspeech.BaseURL(o.Endpoint, "https://westeurope.stt.speech.microsoft.com")
		if err != nil {
			return nil, fmt.Errorf("azurespeech: endpoint: %w", err)
		}
		c.stt, c.tts, c.sts = base, base, base
	case !regionName.MatchString(o.Region):
		return nil, fmt.Errorf("azurespeech: %q is not an Azure region name (such as westeurope)", cloudspeech.Printable(o.Region, 40))
	default:
		c.stt = "https://" + o.Region + ".stt.speech.microsoft.com"
		c.tts = "https://" + o.Region + ".tts.speech.microsoft.com"
		c.sts = "https://" + o.Region + ".api.cognitive.microsoft.com"
	}
	if o.Voice == "" {
		o.Voice = DefaultVoice
	}
	if _, ok := voiceLocale(o.Voice); !ok {
		return nil, fmt.Errorf("azurespeech: %q is not a voice name (such as de-DE-KatjaNeural)", cloudspeech.Printable(o.Voice, 64))
	}
	if o.MaxCharacters <= 0 {
		o.MaxCharacters = 3000
	}
	cloudspeech.Defaults(&o.HTTPClient, &o.Timeout, &o.ReadTimeout, &o.MaxAudio)
	c.o = o
	return c, nil
}

// authorize sets the request's credentials: the key, or a token it was exchanged for.
func (c *client) authorize(ctx context.Context, req *http.Request) error {
	if !c.o.Tokens {
		req.Header.Set("Ocp-Apim-Subscription-Key", c.o.Key.Reveal())
		return nil
	}
	token, err := c.bearer(ctx)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return nil
}

// bearer returns a token of the key, exchanging it when the last is nine minutes old: Azure's
// last ten.
func (c *client) bearer(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" && time.Now().Before(c.expires) {
		return c.token, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.sts+"/sts/v1.0/issueToken", nil)
	if err != nil {
		return "", fmt.Errorf("azurespeech: %w", err)
	}
	req.Header.Set("Ocp-Apim-Subscription-Key", c.o.Key.Reveal())
	resp, err := cloudspeech.Do(ctx, c.o.HTTPClient, req, c.o.Timeout)
	if err != nil {
		return "", fmt.Errorf("azurespeech: token: %w", err)
	}
	if err := cloudspeech.Check("azurespeech", resp, errorCode); err != nil {
		return "", fmt.Errorf("azurespeech: token: %w", err)
	}
	defer resp.Body.Close()
	b, err := cloudspeech.ReadAll(resp.Body, 16<<10)
	token := strings.TrimSpace(string(b))
	if err != nil || token == "" || strings.ContainsAny(token, " \r\n") {
		return "", errors.New("azurespeech: token: the answer is not a token")
	}
	c.token, c.expires = token, time.Now().Add(9*time.Minute)
	return token, nil
}

// errorCode is the code of Azure's JSON error bodies, {"error":{"code":"…","message":"…"}},
// when it sends one (most statuses come with no body).
func errorCode(body []byte) string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return e.Error.Code
}

// voiceForm is the form of Azure's voice names: a locale, then a name ("de-DE-KatjaNeural",
// "zh-CN-shaanxi-XiaoniNeural").
var voiceForm = regexp.MustCompile(`^([a-z]{2,3}-[A-Z]{2})(-[a-z]{2,12})?-[A-Za-z0-9]{1,64}$`)

// voiceLocale returns the locale of a voice name.
func voiceLocale(v string) (string, bool) {
	m := voiceForm.FindStringSubmatch(v)
	if m == nil {
		return "", false
	}
	return m[1], true
}
