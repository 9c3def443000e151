package openai

import (
	"context"
	"errors"
	"io"
	"iter"
	"net/http"
	"sync/atomic"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/failover"
)

// Model is an [engine.Model] over the Chat Completions API of OpenAI or of any compatible
// server. It is safe for concurrent use. The only state it keeps between completions is the
// optional request members the server refused (stream_options where a server does not take it),
// which it leaves out from then on.
type Model struct {
	s    *settings
	chat openai.ChatCompletionService
	// refused are the optional request members the server refused (a set of optional); they
	// are left out.
	refused atomic.Uint32
}

var (
	_ engine.Model  = (*Model)(nil)
	_ engine.Warmer = (*Model)(nil)
)

// NewModel returns a model configured by opts; nil means the defaults (OpenAI's API,
// [DefaultModel], no API key).
func NewModel(opts *Options) (*Model, error) {
	s, err := newSettings(opts)
	if err != nil {
		return nil, err
	}
	return &Model{s: s, chat: openai.NewChatCompletionService(s.requestOptions()...)}, nil
}

// Stream implements [engine.Model]: one streamed chat completion. Text deltas are yielded as
// they arrive; the tool calls, assembled from their deltas, follow the last of them; a finish
// event with the reason, the usage, the model the server named and the count of failed attempts
// before the one that answered ends the sequence. Failures before the first event are
// retried as [Options] says; a failure after it is yielded as the sequence's last value.
// Cancelling ctx, or stopping the range early, closes the HTTP stream at once.
func (m *Model) Stream(ctx context.Context, req *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	return func(yield func(engine.ModelEvent, error) bool) {
		m.stream(ctx, m.params(req), yield)
	}
}

// errStopped ends an attempt whose caller stopped ranging.
var errStopped = errors.New("openai: the caller stopped reading")

func (m *Model) stream(ctx context.Context, p openai.ChatCompletionNewParams, yield func(engine.ModelEvent, error) bool) {
	stopped := false
	once := func(ev engine.ModelEvent, err error) bool {
		stopped = stopped || !yield(ev, err)
		return !stopped
	}
	err := m.s.retry(ctx, func(ctx context.Context, a *attempt) error {
		for {
			err := m.attempt(ctx, a, p, once)
			refused := refusedBy(err, &p)
			if refused == 0 {
				return err
			}
			// Sent again at once without what the server refuses, and never again with it.
			m.refused.Or(uint32(refused))
			p = without(p, refused)
			a.retries++
		}
	})
	switch {
	case stopped, err == nil:
		// A caller that stopped ranging must not be yielded to again.
	case ctx.Err() != nil:
		yield(engine.ModelEvent{}, ctx.Err())
	default:
		yield(engine.ModelEvent{}, &completionError{err})
	}
}

// attempt sends the request once and yields what it streams. Its errors are final once text
// was yielded. The SDK builds and sends the request; the answer is read here, because servers
// that speak the API stream in more shapes than the SDK's decoder and accumulator accept.
func (m *Model) attempt(ctx context.Context, a *attempt, p openai.ChatCompletionNewParams, yield func(engine.ModelEvent, error) bool) error {
	var body, resp *http.Response
	_, err := m.chat.New(ctx, p, option.WithJSONSet("stream", true), option.WithResponseBodyInto(&body), option.WithResponseInto(&resp))
	if err != nil {
		return statusError(err, resp)
	}
	defer body.Body.Close()
	a.answered()
	c := &completion{yield: yield, retries: a.retries}
	fail := func(err error) error {
		if c.yielded || c.stopped {
			return final{err}
		}
		return err
	}
	answered := a.answered
	if beat := failover.Heartbeat(ctx); beat != nil {
		answered = func() { a.answered(); beat() }
	}
	if isJSON(body.Header) {
		err = c.readWhole(body.Body)
	} else {
		err = c.readStream(body.Body, answered)
	}
	if c.stopped {
		return final{errStopped}
	}
	if err != nil && (ctx.Err() != nil || c.finish == "" || !errors.Is(err, io.ErrUnexpectedEOF)) {
		// A connection lost after the finish reason only loses the usage report.
		return fail(err)
	}
	if err := c.end(); err != nil {
		return fail(err)
	}
	return nil
}
