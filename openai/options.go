package openai

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/openai/openai-go/v3/option"

	"github.com/convengine/engine"
)

// Defaults of [Options].
const (
	DefaultBaseURL            = "https://api.openai.com/v1/"
	DefaultModel              = "gpt-4o-mini"
	DefaultSpeechModel        = "gpt-4o-mini-tts"
	DefaultVoice              = "alloy"
	DefaultTranscriptionModel = "gpt-4o-mini-transcribe"
	defaultMaxRetries         = 2
	defaultRetryDelay         = 500 * time.Millisecond
	maxRetryDelay             = 8 * time.Second
)

// Speech formats of [Options].SpeechFormat.
const (
	// FormatPCM is raw 16-bit little-endian mono PCM at 24 kHz, the lowest latency.
	FormatPCM = "pcm"
	// FormatWAV is the same audio in a WAV container; servers that cannot stream raw PCM often
	// support it.
	FormatWAV = "wav"
)

// ErrOptions is wrapped by the errors of the constructors for invalid [Options].
var ErrOptions = errors.New("openai: invalid options")

// Options configures a [Model], a [Synthesizer] or a [Transcriber]. A nil *Options and zero
// fields mean the defaults documented on each field. Nothing is read from the environment:
// OPENAI_API_KEY and the other variables the official SDK reads by itself are ignored, so that
// a process configures each client explicitly.
type Options struct {
	// APIKey is sent as a bearer token. Empty sends none, for local servers that need none. It
	// is never logged nor part of an error.
	APIKey engine.Secret
	// BaseURL is the API's base URL (default [DefaultBaseURL]). OpenAI-compatible servers are
	// reached through theirs, such as "http://localhost:11434/v1/" for Ollama.
	BaseURL string
	// Organization and Project are sent as the OpenAI-Organization and OpenAI-Project headers
	// when set.
	Organization string
	Project      string
	// HTTPClient sends the requests; nil means a client over http.DefaultTransport.
	HTTPClient *http.Client
	// RequestTimeout bounds each attempt until the server starts answering: the first chunk of
	// a completion or of speech, the whole answer of a transcription. An attempt that times out
	// is retried like a rate limit. Zero means no bound but the caller's context.
	RequestTimeout time.Duration
	// MaxRetries is how many times a request that failed before its first token is retried:
	// rate limits (429), server errors (5xx), time-outs and broken connections (default 2;
	// negative for none). Retries never wait past the caller's deadline.
	MaxRetries int
	// RetryDelay is the wait before the first retry, doubled for each next one up to 8 s
	// (default 500 ms). A Retry-After header from the server takes precedence.
	RetryDelay time.Duration

	// Model is the chat model (default [DefaultModel]); for Azure OpenAI, the deployment.
	Model string
	// Temperature is sent when set; nil leaves it to the server.
	Temperature *float64
	// MaxOutputTokens bounds each completion (max_completion_tokens); zero leaves it to the
	// server.
	MaxOutputTokens int
	// SequentialToolCalls asks for one tool call at a time (parallel_tool_calls false), for
	// models that mishandle parallel calls.
	SequentialToolCalls bool
	// SingleSystemMessage joins the stable prompt and the turn's context into one system
	// message, for chat templates that accept only one. The cached prefix then ends inside it.
	SingleSystemMessage bool

	// SpeechModel is the model of the speech endpoint (default [DefaultSpeechModel]).
	SpeechModel string
	// Voice is used when a synthesis names none (default [DefaultVoice]).
	Voice string
	// SpeechFormat is [FormatPCM] (default) or [FormatWAV].
	SpeechFormat string
	// TranscriptionModel is the model of the transcriptions endpoint (default
	// [DefaultTranscriptionModel]).
	TranscriptionModel string
}

// settings are Options with the defaults filled in.
type settings struct {
	Options
	base *url.URL
}

func newSettings(o *Options) (*settings, error) {
	s := &settings{}
	if o != nil {
		s.Options = *o
	}
	if s.BaseURL == "" {
		s.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(s.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: BaseURL must be an absolute http or https URL", ErrOptions)
	}
	s.base = u
	if s.HTTPClient == nil {
		s.HTTPClient = &http.Client{}
	}
	if s.MaxRetries == 0 {
		s.MaxRetries = defaultMaxRetries
	} else if s.MaxRetries < 0 {
		s.MaxRetries = 0
	}
	if s.RetryDelay <= 0 {
		s.RetryDelay = defaultRetryDelay
	}
	if s.RequestTimeout < 0 || s.MaxOutputTokens < 0 {
		return nil, fmt.Errorf("%w: RequestTimeout and MaxOutputTokens cannot be negative", ErrOptions)
	}
	if s.Model == "" {
		s.Model = DefaultModel
	}
	if s.SpeechModel == "" {
		s.SpeechModel = DefaultSpeechModel
	}
	if s.Voice == "" {
		s.Voice = DefaultVoice
	}
	switch s.SpeechFormat {
	case "":
		s.SpeechFormat = FormatPCM
	case FormatPCM, FormatWAV:
	default:
		return nil, fmt.Errorf("%w: SpeechFormat must be %q or %q", ErrOptions, FormatPCM, FormatWAV)
	}
	if s.TranscriptionModel == "" {
		s.TranscriptionModel = DefaultTranscriptionModel
	}
	return s, nil
}

// requestOptions are the SDK options of every request. Each one is set explicitly and the
// services are built without openai.NewClient, which would read OPENAI_* variables. The SDK
// does not retry: [settings.retry] does, bounded by the caller's deadline.
func (s *settings) requestOptions() []option.RequestOption {
	opts := []option.RequestOption{
		option.WithBaseURL(s.base.String()),
		option.WithHTTPClient(s.HTTPClient),
		option.WithMaxRetries(0),
	}
	if s.APIKey != "" {
		opts = append(opts, option.WithAPIKey(s.APIKey.Reveal()))
	}
	if s.Organization != "" {
		opts = append(opts, option.WithOrganization(s.Organization))
	}
	if s.Project != "" {
		opts = append(opts, option.WithProject(s.Project))
	}
	return opts
}
