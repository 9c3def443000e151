package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// Errors of a request that got no usable answer.
var (
	// ErrNoAnswer: the server did not start answering within Options.RequestTimeout.
	ErrNoAnswer = errors.New("openai: the server did not start answering in time")
	// ErrStreamCut: the stream ended before the completion finished.
	ErrStreamCut = errors.New("openai: the stream ended before the completion finished")
)

// APIError is an error status the server answered with.
type APIError struct {
	StatusCode int
	// Code and Type classify the error, such as "rate_limit_exceeded" and "requests".
	Code string
	Type string
	// Message is the server's explanation. It may quote parts of the request, so Error does
	// not include it.
	Message string

	retryAfter    time.Duration
	hasRetryAfter bool
	shouldRetry   string // the x-should-retry header
}

// Error returns the status and the error code.
func (e *APIError) Error() string {
	s := fmt.Sprintf("openai: the server answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	return s
}

// apiError turns the SDK's error for a status into an [APIError] and leaves others alone.
func apiError(err error) error {
	var oe *openai.Error
	if !errors.As(err, &oe) {
		return err
	}
	ae := &APIError{StatusCode: oe.StatusCode, Code: oe.Code, Type: oe.Type, Message: oe.Message}
	if oe.Response != nil {
		ae.retryAfter, ae.hasRetryAfter = retryAfter(oe.Response.Header)
		ae.shouldRetry = oe.Response.Header.Get("X-Should-Retry")
	}
	return ae
}

// retryAfter reads retry-after-ms (OpenAI) or Retry-After, in seconds or as a date.
func retryAfter(h http.Header) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e9 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && s < 1e6 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

// retryable reports whether a failed attempt may succeed if sent again.
func retryable(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		switch ae.shouldRetry {
		case "true":
			return true
		case "false":
			return false
		}
		s := ae.StatusCode
		return s == http.StatusRequestTimeout || s == http.StatusConflict || s == http.StatusTooManyRequests || s >= 500
	}
	var (
		se *ssestream.StreamError
		ue *url.Error
		ne net.Error
	)
	return errors.Is(err, ErrNoAnswer) || errors.Is(err, ErrStreamCut) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &se) || errors.As(err, &ue) || errors.As(err, &ne)
}

// final marks the error of an attempt that already handed something to the caller: it cannot be
// retried without repeating it.
type final struct{ err error }

func (f final) Error() string { return f.err.Error() }
func (f final) Unwrap() error { return f.err }

// attempt is one try of a request.
type attempt struct {
	timer  *time.Timer
	cancel context.CancelCauseFunc
	kept   bool
}

// answered tells the attempt that the server started answering: RequestTimeout no longer
// applies.
func (a *attempt) answered() {
	if a.timer != nil {
		a.timer.Stop()
	}
}

// keep hands the attempt's context over to a response body that outlives the attempt; the
// function returned releases it and must be called once the body is done with.
func (a *attempt) keep() func() {
	a.kept = true
	return func() { a.cancel(nil) }
}

// retry runs do until it succeeds, fails for good, or the retries or ctx's deadline run out.
// Failures before the server answered are retried with backoff; errors do marks final are not.
func (s *settings) retry(ctx context.Context, do func(ctx context.Context, a *attempt) error) error {
	for n := 0; ; n++ {
		err := s.try(ctx, do)
		if err == nil {
			return nil
		}
		var f final
		if errors.As(err, &f) {
			return f.err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if n >= s.MaxRetries || !retryable(err) {
			return err
		}
		d := s.backoff(err, n)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			return err // waiting would only end in the deadline
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (s *settings) try(ctx context.Context, do func(ctx context.Context, a *attempt) error) error {
	actx, cancel := context.WithCancelCause(ctx)
	a := &attempt{cancel: cancel}
	defer func() {
		if !a.kept {
			cancel(nil)
		}
	}()
	if s.RequestTimeout > 0 {
		a.timer = time.AfterFunc(s.RequestTimeout, func() { cancel(ErrNoAnswer) })
		defer a.timer.Stop()
	}
	err := do(actx, a)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), ErrNoAnswer) {
		var f final
		if errors.As(err, &f) {
			return final{ErrNoAnswer}
		}
		return ErrNoAnswer
	}
	return err
}

// backoff is the wait before retry n+1.
func (s *settings) backoff(err error, n int) time.Duration {
	var ae *APIError
	if errors.As(err, &ae) && ae.hasRetryAfter {
		return ae.retryAfter
	}
	d := s.RetryDelay << min(n, 16)
	if d <= 0 || d > maxRetryDelay {
		d = maxRetryDelay
	}
	return d - rand.N(d/4+1)
}
