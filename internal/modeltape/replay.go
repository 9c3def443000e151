package modeltape

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Player is an [http.RoundTripper] that answers from a tape, without a network: the n-th
// request gets the n-th recorded response (its status, headers and body, the body as a stream
// that breaks where the recorded one did) once it is checked to be the n-th recorded request:
// the same method, path and canonical JSON body.
//
// It is safe for concurrent use. Requests sent at the same time (a background warm-up and a
// turn) may reach it in another order than they were recorded in: a request that is not the
// next recorded one but equals a later one not yet played gets that one's response.
type Player struct {
	path      string
	exchanges []*exchange

	mu     sync.Mutex
	played []bool
	served int   // requests answered
	failed error // the first request that did not match
	closed bool
}

// Open reads the tape at path. A file that is not a tape (truncated, edited by hand into
// invalid JSON) is an error that wraps [ErrCorrupt] and names its line.
func Open(path string) (*Player, error) {
	ex, err := readTape(path)
	if err != nil {
		return nil, err
	}
	return &Player{path: path, exchanges: ex, played: make([]bool, len(ex))}, nil
}

// RoundTrip implements [http.RoundTripper]. A request that differs from the recorded one
// fails with an error wrapping [ErrChanged] that names the request (1-based) and the first
// JSON path where it differs, with both values; a request past the tape's end fails with
// [ErrExhausted]. Neither moves the tape on, so a client's retry meets the same exchange.
func (p *Player) RoundTrip(req *http.Request) (*http.Response, error) {
	canon, sum, _, err := requestBody(req, secrets(req))
	if err != nil {
		return nil, err
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	n := p.served + 1
	next := slices.Index(p.played, false)
	if next < 0 {
		return nil, p.fail(errorf(ErrExhausted, "request %d (%s %s) is past the end of %s: the tape has %d exchanges; record it again",
			n, req.Method, requestPath(req.URL), p.path, len(p.exchanges)))
	}
	e := p.exchanges[next]
	if err := p.match(n, e, req, canon, sum); err != nil {
		later := -1
		for i := next + 1; i < len(p.exchanges) && later < 0; i++ {
			if !p.played[i] && p.match(n, p.exchanges[i], req, canon, sum) == nil {
				later = i
			}
		}
		if later < 0 {
			return nil, p.fail(err)
		}
		next, e = later, p.exchanges[later]
	}
	p.played[next] = true
	p.served++
	if e.Error != "" {
		return nil, fmt.Errorf("modeltape: request %d of %s failed when recorded: %s", n, p.path, e.Error)
	}
	body, _ := e.body() // checked by Open
	header := http.Header{}
	for k, v := range e.Header {
		header.Set(k, v)
	}
	var end error
	switch {
	case e.BodyError == io.ErrUnexpectedEOF.Error():
		end = io.ErrUnexpectedEOF
	case e.BodyError != "":
		end = fmt.Errorf("modeltape: the recorded body broke: %s", e.BodyError)
	}
	length := int64(-1)
	if end == nil {
		length = int64(len(body))
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", e.Status, http.StatusText(e.Status)),
		StatusCode:    e.Status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          &replayBody{ctx: req.Context(), r: bytes.NewReader(body), end: end},
		ContentLength: length,
		Request:       req,
	}, nil
}

func (p *Player) fail(err error) error {
	if p.failed == nil {
		p.failed = err
	}
	return err
}

func (p *Player) match(n int, e *exchange, req *http.Request, canon []byte, sum string) error {
	if path := requestPath(req.URL); e.Method != req.Method || e.Path != path {
		return errorf(ErrChanged, "request %d of %s changed: recorded %s %s, now %s %s", n, p.path, e.Method, e.Path, req.Method, path)
	}
	switch {
	case e.Request != nil && canon != nil:
		if bytes.Equal(e.Request, canon) {
			return nil
		}
		at, was, now := firstDifference(e.Request, canon)
		return errorf(ErrChanged, "request %d of %s changed at %s: recorded %s, now %s", n, p.path, at, was, now)
	case e.Request == nil && canon == nil && e.RequestSHA256 == sum:
		return nil
	}
	describe := func(canon []byte, sum string) string {
		switch {
		case canon != nil:
			return "a JSON body"
		case sum != "":
			return "a body of SHA-256 " + sum[:12]
		}
		return "no body"
	}
	return errorf(ErrChanged, "request %d of %s changed: recorded %s, now %s", n, p.path, describe(e.Request, e.RequestSHA256), describe(canon, sum))
}

// Close reports what went wrong in the replay: the first request that did not match (so that
// a caller whose client retried and gave up still learns why), or the exchanges never played,
// as an error wrapping [ErrUnplayed]. Requests after Close fail with [ErrClosed].
func (p *Player) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	p.closed = true
	if p.failed != nil {
		return p.failed
	}
	var left []string
	for i, played := range p.played {
		if !played {
			left = append(left, fmt.Sprintf("%d: %s %s", i+1, p.exchanges[i].Method, p.exchanges[i].Path))
		}
	}
	if len(left) > 0 {
		what := left
		if len(what) > 3 {
			what = append(what[:3:3], "…")
		}
		return errorf(ErrUnplayed, "%s: %d of its %d exchanges were never requested (%s); record it again",
			p.path, len(left), len(p.exchanges), strings.Join(what, ", "))
	}
	return nil
}

// replayBody serves a recorded body, and ends as the recorded one did.
type replayBody struct {
	ctx context.Context
	r   *bytes.Reader
	end error
}

func (b *replayBody) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := b.r.Read(p)
	if err == io.EOF && b.end != nil {
		err = b.end
	}
	return n, err
}

func (b *replayBody) Close() error { return nil }
