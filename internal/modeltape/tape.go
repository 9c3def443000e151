// Package modeltape records an OpenAI-compatible model server's traffic to a file, a tape, and
// replays it without the server, so that a conversation test that talks to a model over HTTP
// runs offline, deterministically and fast.
//
// A [Recorder] is an [http.RoundTripper] that passes each request on to the real server and
// keeps the exchange; its Close writes the tape. A [Player] is an [http.RoundTripper] that
// answers the n-th request with the n-th recorded response, after checking that the request is
// the one that was recorded; a request that changed fails with the first JSON path where it
// differs.
//
// # The tape
//
// A tape is JSON Lines, one exchange per line, in the order the requests were sent: the
// method, the path (with the query's parameters, less any that could carry a key), the request
// body in canonical JSON (RFC 8785; the SHA-256 of a body that is not JSON), the response's
// status, its Content-Type and retry headers, and its body byte for byte (a string when it is
// UTF-8, base64 otherwise; a streamed body whole, with how it broke if it did). No request
// header is kept, so no Authorization, cookie or API key; a key the request carried in a
// header that also appears in a body is written as "<redacted>". The same traffic gives the
// same bytes.
package modeltape

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/convengine/engine/internal/jsonenc"
)

// Errors of the package; the errors returned wrap one of them.
var (
	// ErrChanged: a request differs from the one recorded at its place.
	ErrChanged = errors.New("modeltape: the request changed")
	// ErrExhausted: a request came after the tape's last exchange.
	ErrExhausted = errors.New("modeltape: the tape has no more exchanges")
	// ErrUnplayed: the tape's last exchanges were never requested.
	ErrUnplayed = errors.New("modeltape: exchanges were not played")
	// ErrCorrupt: the tape file cannot be read as a tape.
	ErrCorrupt = errors.New("modeltape: not a tape")
	// ErrClosed: the recorder or player was closed.
	ErrClosed = errors.New("modeltape: closed")
)

// tapeError is an error with its own message that wraps one of the package's errors.
type tapeError struct {
	kind error
	msg  string
}

func (e *tapeError) Error() string { return e.msg }
func (e *tapeError) Unwrap() error { return e.kind }

func errorf(kind error, format string, args ...any) error {
	return &tapeError{kind: kind, msg: "modeltape: " + fmt.Sprintf(format, args...)}
}

// exchange is one line of a tape. The field order is the line's.
type exchange struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	// Request is the request's body in canonical JSON; RequestSHA256 the hash of a body that
	// is not JSON (multipart boundaries made constant first). Neither for an empty body.
	Request       json.RawMessage `json:"request,omitempty"`
	RequestSHA256 string          `json:"request_sha256,omitempty"`
	// Error is a request that failed without a response (a refused or lost connection).
	Error  string            `json:"error,omitempty"`
	Status int               `json:"status,omitempty"`
	Header map[string]string `json:"header,omitempty"`
	// Body is the response's body when it is UTF-8, BodyBase64 otherwise.
	Body       *string `json:"body,omitempty"`
	BodyBase64 string  `json:"body_base64,omitempty"`
	// BodyError is how the body's reading ended when not at its end ("unexpected EOF" for a
	// lost connection). A body the client closed before its end is kept as far as it was
	// read, and ends there when replayed: the client stops at the same place.
	BodyError string `json:"body_error,omitempty"`

	read *recordingBody // the body being recorded
}

// keptHeaders are the response headers a tape keeps: what a client reads to decode the body
// and to wait before a retry. Nothing else, so that no cookie or server secret is written.
var keptHeaders = []string{"Content-Type", "Retry-After", "Retry-After-Ms"}

// secretHeaders carry keys; their values are redacted wherever they appear in a tape.
var secretHeaders = []string{"Authorization", "Api-Key", "X-Api-Key", "X-Goog-Api-Key", "Proxy-Authorization", "Cookie", "Openai-Organization", "Openai-Project"}

const redacted = "<redacted>"

// secrets returns the key-like values req carries in its headers and query, longest first,
// so that a body that echoes one does not put it on the tape.
func secrets(req *http.Request) []string {
	var out []string
	add := func(v string) {
		v = strings.TrimSpace(v)
		if scheme, rest, ok := strings.Cut(v, " "); ok && (strings.EqualFold(scheme, "Bearer") || strings.EqualFold(scheme, "Basic")) {
			v = strings.TrimSpace(rest)
		}
		if len(v) >= 8 {
			out = append(out, v)
		}
	}
	for _, h := range secretHeaders {
		for _, v := range req.Header.Values(h) {
			add(v)
		}
	}
	for k, vs := range req.URL.Query() {
		if secretParam(k) {
			for _, v := range vs {
				add(v)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

func redact(b []byte, secrets []string) []byte {
	for _, s := range secrets {
		if bytes.Contains(b, []byte(s)) {
			b = bytes.ReplaceAll(b, []byte(s), []byte(redacted))
		}
	}
	return b
}

// secretParam reports whether a query parameter may carry a key (Azure's and Gemini's "key",
// signed URLs' "sig"); such parameters are left out of the recorded path.
func secretParam(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"key", "token", "secret", "sig", "auth", "password", "credential"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// requestPath is the request's path and the query parameters that carry no key, sorted.
func requestPath(u *url.URL) string {
	q := u.Query()
	for k := range q {
		if secretParam(k) {
			delete(q, k)
		}
	}
	if len(q) == 0 {
		return u.Path
	}
	return u.Path + "?" + q.Encode()
}

// readRequest reads the request's body and returns what a tape keeps of it: the canonical
// JSON, or the hash of a body that is not JSON. It restores req.Body for the caller.
func requestBody(req *http.Request, secrets []string) (canon json.RawMessage, sum string, raw []byte, err error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, "", nil, nil
	}
	raw, err = io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, "", nil, fmt.Errorf("modeltape: reading the request's body: %w", err)
	}
	if len(raw) == 0 {
		return nil, "", raw, nil
	}
	body := redact(bytes.Clone(raw), secrets)
	if c, err := jsonenc.Canonicalize(body); err == nil {
		return c, "", raw, nil
	}
	// Multipart bodies (transcriptions) differ only by their random boundary.
	if mt, params, err := mime.ParseMediaType(req.Header.Get("Content-Type")); err == nil && strings.HasPrefix(mt, "multipart/") && params["boundary"] != "" {
		body = bytes.ReplaceAll(body, []byte(params["boundary"]), []byte("modeltape-boundary"))
	}
	h := sha256.Sum256(body)
	return nil, hex.EncodeToString(h[:]), raw, nil
}

// setBody keeps the response's body on e.
func (e *exchange) setBody(b []byte) {
	e.Body, e.BodyBase64 = nil, ""
	if len(b) == 0 {
		return
	}
	if utf8.Valid(b) {
		s := string(b)
		e.Body = &s
		return
	}
	e.BodyBase64 = base64.StdEncoding.EncodeToString(b)
}

func (e *exchange) body() ([]byte, error) {
	if e.Body != nil {
		return []byte(*e.Body), nil
	}
	return base64.StdEncoding.DecodeString(e.BodyBase64)
}

// writeTape writes the exchanges to path atomically: a temporary file in the same folder,
// renamed over path once complete, so that a failed run never leaves half a tape.
func writeTape(path string, exchanges []*exchange) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // SSE bodies and prompts stay readable in a diff
	for _, e := range exchanges {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("modeltape: writing %s: %w", path, err)
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("modeltape: writing %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("modeltape: writing %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(buf.Bytes())
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("modeltape: writing %s: %w", path, err)
	}
	return nil
}

// maxLine bounds a tape's line: a streamed completion is a few kilobytes, speech a few
// megabytes.
const maxLine = 64 << 20

// readTape reads and checks a tape file.
func readTape(path string) ([]*exchange, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("modeltape: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var out []*exchange
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			return nil, errorf(ErrCorrupt, "%s:%d: an empty line (a tape has one exchange per line)", path, n)
		}
		e := &exchange{}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(e); err != nil {
			return nil, errorf(ErrCorrupt, "%s:%d: not an exchange (%v); record the tape again", path, n, err)
		}
		if dec.More() {
			return nil, errorf(ErrCorrupt, "%s:%d: more than one exchange on the line", path, n)
		}
		if err := e.check(); err != nil {
			return nil, errorf(ErrCorrupt, "%s:%d: %v", path, n, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, errorf(ErrCorrupt, "%s: %v", path, err)
	}
	return out, nil
}

func (e *exchange) check() error {
	switch {
	case e.Method == "" || !strings.HasPrefix(e.Path, "/"):
		return errors.New("an exchange without its method or path")
	case e.Request != nil && e.RequestSHA256 != "":
		return errors.New("an exchange with both a JSON and a hashed request")
	case e.Error == "" && (e.Status < 100 || e.Status > 999):
		return fmt.Errorf("an exchange with status %d", e.Status)
	case e.Body != nil && e.BodyBase64 != "":
		return errors.New("an exchange with two bodies")
	}
	if e.Request != nil {
		c, err := jsonenc.Canonicalize(e.Request)
		if err != nil {
			return fmt.Errorf("the recorded request: %v", err)
		}
		e.Request = c
	}
	if _, err := e.body(); err != nil {
		return fmt.Errorf("the recorded body: %v", err)
	}
	return nil
}
