package modeltape

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sync"
)

// Recorder is an [http.RoundTripper] that sends each request through a base transport and
// keeps the exchange for the tape that [Recorder.Close] writes. Responses reach the caller as
// the server streams them; a body is kept as far as the caller read it. It is safe for
// concurrent use; exchanges are kept in the order their requests were sent.
type Recorder struct {
	path string
	base http.RoundTripper

	mu        sync.Mutex
	exchanges []*exchange
	closed    bool
}

// Record returns a recorder that writes the tape at path when closed; base sends the requests
// (nil means [http.DefaultTransport]).
func Record(path string, base http.RoundTripper) *Recorder {
	if base == nil {
		base = http.DefaultTransport
	}
	return &Recorder{path: path, base: base}
}

// RoundTrip implements [http.RoundTripper].
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	keys := secrets(req)
	canon, sum, raw, err := requestBody(req, keys)
	if err != nil {
		return nil, err
	}
	e := &exchange{Method: req.Method, Path: requestPath(req.URL), Request: canon, RequestSHA256: sum}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	r.exchanges = append(r.exchanges, e)
	r.mu.Unlock()

	out := req.Clone(req.Context())
	if raw != nil {
		out.Body = io.NopCloser(bytes.NewReader(raw))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
		out.ContentLength = int64(len(raw))
	}
	resp, err := r.base.RoundTrip(out)
	if err != nil {
		msg := err.Error()
		var uerr *url.Error
		if errors.As(err, &uerr) {
			msg = uerr.Err.Error() // not the URL, which may carry a key
		}
		r.mu.Lock()
		e.Error = string(redact([]byte(msg), keys))
		r.mu.Unlock()
		return nil, err
	}
	header := map[string]string{}
	for _, h := range keptHeaders {
		if v := resp.Header.Get(h); v != "" {
			header[h] = string(redact([]byte(v), keys))
		}
	}
	r.mu.Lock()
	e.Status, e.Header = resp.StatusCode, header
	if len(header) == 0 {
		e.Header = nil
	}
	r.mu.Unlock()
	rb := &recordingBody{r: r, e: e, body: resp.Body, keys: keys}
	r.mu.Lock()
	e.read = rb
	r.mu.Unlock()
	resp.Body = rb
	return resp, nil
}

// recordingBody keeps what the caller reads of a response's body on its exchange.
type recordingBody struct {
	r    *Recorder
	e    *exchange
	body io.ReadCloser
	keys []string

	buf  bytes.Buffer
	done bool // read to its end or failed
}

func (b *recordingBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	b.r.mu.Lock()
	defer b.r.mu.Unlock()
	b.buf.Write(p[:n])
	if err != nil && !b.done {
		b.done = true
		if err != io.EOF {
			b.e.BodyError = err.Error()
		}
	}
	return n, err
}

func (b *recordingBody) Close() error {
	b.r.mu.Lock()
	b.done = true
	b.r.mu.Unlock()
	return b.body.Close()
}

// Close writes the tape: the exchanges so far, in the order their requests were sent, with
// their bodies as far as they were read. The folder is created if needed, and the file is
// replaced whole or not at all. Requests after Close fail with [ErrClosed].
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	r.closed = true
	for _, e := range r.exchanges {
		if e.read != nil {
			e.setBody(redact(bytes.Clone(e.read.buf.Bytes()), e.read.keys))
		}
	}
	return writeTape(r.path, r.exchanges)
}
