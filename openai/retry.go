package openai

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/convengine/engine/internal/failover"
)

// retryable reports whether a failed attempt may succeed if sent again: a rate limit or a
// server error, whatever its body, a server's error in a stream that is not the request's
// fault, a broken connection or a time-out; never another client error, nor a stream that
// cannot be read.
func retryable(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.shouldRetry != "false" && (ae.StatusCode == http.StatusTooManyRequests || ae.StatusCode >= 500)
	}
	var se *StreamError
	if errors.As(err, &se) {
		return !se.clientError()
	}
	var (
		ue *url.Error
		ne net.Error
	)
	return errors.Is(err, ErrNoAnswer) || errors.Is(err, ErrStreamCut) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &ue) || errors.As(err, &ne)
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
	// retries counts the attempts of the request that failed before this one.
	retries int
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
	retries := s.MaxRetries
	if failover.Once(ctx) {
		retries = 0 // a fallback chain tries its next model instead
	}
	for n := 0; ; n++ {
		err := s.try(ctx, n, do)
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
		if n >= retries || !retryable(err) {
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

func (s *settings) try(ctx context.Context, n int, do func(ctx context.Context, a *attempt) error) error {
	actx, cancel := context.WithCancelCause(ctx)
	a := &attempt{cancel: cancel, retries: n}
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
