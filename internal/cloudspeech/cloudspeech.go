// Package cloudspeech holds what the adapters of cloud speech providers (deepgram, elevenlabs,
// azurespeech) share: their base URLs and the WebSocket URLs derived from them, bounded reads of
// a provider's answers, and the errors its HTTP statuses make, which never hold a key; and the
// tone their stand-ins speak.
package cloudspeech

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/convengine/engine"
)

// ErrRefused is wrapped by the error of a provider that answered with an HTTP error status.
var ErrRefused = errors.New("refused the request")

// StatusError is a provider's HTTP error status: 401 for a wrong key, 429 when it is over its
// rate or concurrency, 5xx when it failed. Its message names the provider, the status and the
// provider's own error code when it gave one, never the request's key.
type StatusError struct {
	Provider string
	Status   int
	Code     string // the provider's error code, at most 64 printable characters
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("%s: %s %d %s", e.Provider, ErrRefused, e.Status, http.StatusText(e.Status))
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	return s
}

func (e *StatusError) Unwrap() error { return ErrRefused }

// Retryable reports whether the same request may succeed later: 408, 429 and 5xx.
func (e *StatusError) Retryable() bool {
	return e.Status == http.StatusRequestTimeout || e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// Printable keeps the first n printable ASCII characters of s: what a provider says goes to
// logs only so trimmed.
func Printable(s string, n int) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= n {
			break
		}
		if r >= 0x20 && r < 0x7f {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// BaseURL checks a provider's base URL, the scheme and host only ("https://api.deepgram.com",
// no path), and returns it without a trailing slash; "" gives def.
func BaseURL(raw, def string) (string, error) {
	if raw == "" {
		raw = def
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", fmt.Errorf("base URL %q: not a URL", Printable(raw, 200))
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("base URL %q: the scheme must be http or https", Printable(raw, 200))
	case u.Host == "":
		return "", fmt.Errorf("base URL %q: has no host", Printable(raw, 200))
	case strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.User != nil:
		return "", fmt.Errorf("base URL %q: must be the scheme and host only, such as %s", Printable(raw, 200), def)
	}
	return u.Scheme + "://" + u.Host, nil
}

// WebSocketURL is the WebSocket URL of path on base: http becomes ws, https wss.
func WebSocketURL(base, path string) string {
	if rest, ok := strings.CutPrefix(base, "https://"); ok {
		return "wss://" + rest + path
	}
	return "ws://" + strings.TrimPrefix(base, "http://") + path
}

// MaxAnswer bounds what is read of a provider's JSON answer or error body.
const MaxAnswer = 1 << 20

// ReadAll reads r to its end, at most max bytes: more is an error.
func ReadAll(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("the answer is longer than %d bytes", max)
	}
	return b, err
}

// Check returns nil for a 2xx response, else its *StatusError, with code the provider's error
// code found in its body by code (nil: none), the body read at most 64 KiB and closed.
func Check(provider string, resp *http.Response, code func([]byte) string) error {
	if resp.StatusCode/100 == 2 {
		return nil
	}
	defer resp.Body.Close()
	e := &StatusError{Provider: provider, Status: resp.StatusCode}
	if body, _ := ReadAll(resp.Body, 64<<10); code != nil && len(body) > 0 {
		e.Code = Printable(code(body), 64)
	}
	return e
}

// Do sends req with a deadline of timeout for the response's headers; the body is then read
// under ctx alone, as it streams.
func Do(ctx context.Context, client *http.Client, req *http.Request, timeout time.Duration) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	t := time.AfterFunc(timeout, func() { cancel(fmt.Errorf("no answer within %s", timeout)) })
	resp, err := client.Do(req.WithContext(ctx))
	if !t.Stop() && err != nil {
		cancel(nil)
		return nil, context.Cause(ctx)
	}
	if err != nil {
		cancel(nil)
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: func() { cancel(nil) }}
	return resp, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel func()
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// ErrStalled is the error of a streamed answer that sent nothing for its idle time-out.
var ErrStalled = errors.New("the provider sent nothing for too long")

// IdleBody returns body read with a time-out on each read: a provider that sends nothing for
// idle has the read fail with ErrStalled, and cancel is called to abandon its request.
// At most max bytes are read; more is an error.
func IdleBody(body io.ReadCloser, cancel func(), idle time.Duration, max int64) io.ReadCloser {
	b := &idleBody{body: body, cancel: cancel, left: max}
	b.timer = time.AfterFunc(idle, func() { b.stalled.Store(true); cancel() })
	b.idle = idle
	return b
}

type idleBody struct {
	body    io.ReadCloser
	cancel  func()
	timer   *time.Timer
	idle    time.Duration
	left    int64
	stalled atomic.Bool
}

func (b *idleBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errors.New("the provider's audio is longer than its bound")
	}
	p = p[:min(int64(len(p)), b.left)]
	n, err := b.body.Read(p)
	b.left -= int64(n)
	if b.stalled.Load() {
		return n, ErrStalled
	}
	b.timer.Reset(b.idle)
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	err := b.body.Close()
	b.cancel()
	return err
}

// Pieces cuts text into pieces of at most limit characters, at sentence ends where it can, else
// at spaces, else anywhere: for a provider that takes at most limit characters a request.
func Pieces(text string, limit int) []string {
	var out []string
	for utf8.RuneCountInString(text) > limit {
		r := []rune(text)
		cut := -1
		for i := limit - 1; i > 0; i-- {
			if strings.ContainsRune(".!?。", r[i-1]) && unicode.IsSpace(r[i]) {
				cut = i
				break
			}
		}
		if cut < 0 {
			for i := limit; i > 0; i-- {
				if unicode.IsSpace(r[i]) {
					cut = i
					break
				}
			}
		}
		if cut <= 0 {
			cut = limit
		}
		out = append(out, string(r[:cut]))
		text = strings.TrimLeftFunc(string(r[cut:]), unicode.IsSpace)
	}
	if strings.TrimSpace(text) != "" {
		out = append(out, text)
	}
	return out
}

// Name names provider as the one that did the work of the engine's call in ctx, for the
// Observer's speech event and the usage meter ([engine.SpeechEventOf]).
func Name(ctx context.Context, provider string) {
	if ev := engine.SpeechEventOf(ctx); ev != nil {
		ev.Provider = provider
	}
}

// Sequence reads the audio of a line's pieces (Pieces) one after the other: first, then that of
// each of rest, which request asks for when the audio before it has ended.
func Sequence(first io.ReadCloser, rest []string, request func(text string) (io.ReadCloser, error)) io.ReadCloser {
	return &sequence{cur: first, rest: rest, request: request}
}

type sequence struct {
	cur     io.ReadCloser
	rest    []string
	request func(string) (io.ReadCloser, error)
}

func (r *sequence) Read(p []byte) (int, error) {
	for {
		if r.cur == nil {
			return 0, io.EOF
		}
		n, err := r.cur.Read(p)
		if err != io.EOF {
			return n, err
		}
		r.cur.Close()
		r.cur = nil
		if len(r.rest) > 0 {
			next, err := r.request(r.rest[0])
			if err != nil {
				return n, err
			}
			r.cur, r.rest = next, r.rest[1:]
		}
		if n > 0 {
			return n, nil
		}
	}
}

func (r *sequence) Close() error {
	if r.cur == nil {
		return nil
	}
	err := r.cur.Close()
	r.cur = nil
	return err
}

// Answer sends req (Do, with timeout for the answer) and returns the body of a 2xx answer, at
// most MaxAnswer bytes; another status is its *StatusError (Check).
func Answer(ctx context.Context, client *http.Client, req *http.Request, timeout time.Duration, provider string, code func([]byte) string) ([]byte, error) {
	resp, err := Do(ctx, client, req, timeout)
	if err != nil {
		return nil, err
	}
	if err := Check(provider, resp, code); err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := ReadAll(resp.Body, MaxAnswer)
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	return body, nil
}

// Defaults fills the zero limits of a provider's options: http.DefaultClient, 10 s for an
// answer and for each read of audio after it, 600 s of audio a line.
func Defaults(client **http.Client, timeout, readTimeout *time.Duration, maxAudio *int) {
	if *client == nil {
		*client = http.DefaultClient
	}
	for _, d := range []*time.Duration{timeout, readTimeout} {
		if *d <= 0 {
			*d = 10 * time.Second
		}
	}
	if *maxAudio <= 0 {
		*maxAudio = 600
	}
}

// Tone is the audio the providers' stand-ins speak for chars characters: 50 ms of a tone of hz
// each, as 16 kHz 16-bit little-endian PCM.
func Tone(chars int, hz float64) []byte {
	n := chars * 800
	b := make([]byte, 2*n)
	for i := range n {
		v := int16(6000 * math.Sin(2*math.Pi*hz*float64(i)/16000))
		b[2*i], b[2*i+1] = byte(v), byte(uint16(v)>>8)
	}
	return b
}
