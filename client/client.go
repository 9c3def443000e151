package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Paths of the engine's endpoints.
const (
	PathCreateSession = "/api/v1/create-session"
	PathTurn          = "/engine"
	PathExecute       = "/engine/execute"
	PathTTS           = "/engine/tts"
)

// Options configure a [Client]. EngineKey and UserToken are required; other zero values mean
// the defaults documented on each field.
type Options struct {
	// EngineKey is the tenant's publishable key, sent as X-Engine-Key.
	EngineKey string
	// UserToken gives the end user's token for the tenant's backend, sent as X-Token. It is
	// asked for on every request, so that a source can refresh it.
	UserToken TokenSource
	// RequestIDPrefix starts every X-Request-ID: "prod-" (the default) addresses the tenant's
	// production environment, "stg-" its staging one.
	RequestIDPrefix string
	// NewRequestID returns the rest of a request id: 1 to 128 of [A-Za-z0-9._:-]. Nil means
	// 24 random hex digits. A retried request keeps its id.
	NewRequestID func() string
	// Forward holds headers for the tenant's backend. Each is sent as X-Engine-Forward-<name>
	// (a name that already carries the prefix is sent as it is), and the engine passes it on.
	Forward http.Header
	// Metadata is sent as X-Client-Metadata when not nil: a JSON object of at most 4 KiB that
	// prompts and tool bindings can read.
	Metadata map[string]any
	// HTTPClient sends the requests; nil means http.DefaultClient. Its time-out, if any, also
	// bounds turn streams.
	HTTPClient *http.Client
	// Now is the clock of DPoP proofs; nil means time.Now.
	Now func() time.Time
	// MaxEventSize bounds one event of a turn stream (default 4 MiB).
	MaxEventSize int
}

// A TokenSource gives the end user's token for the tenant's backend. It is called from many
// goroutines at once.
type TokenSource interface {
	UserToken(ctx context.Context) (string, error)
}

// StaticToken is a [TokenSource] that always gives the same token. It prints as "[redacted]".
type StaticToken string

// UserToken returns the token.
func (s StaticToken) UserToken(context.Context) (string, error) { return string(s), nil }

// String returns "[redacted]".
func (s StaticToken) String() string { return "[redacted]" }

// GoString returns "[redacted]".
func (s StaticToken) GoString() string { return "[redacted]" }

// Client talks to one engine for one tenant and one end user. It is safe for concurrent use.
type Client struct {
	base     *url.URL
	baseStr  string // scheme://host/path without a trailing slash
	key      string
	token    TokenSource
	prefix   string
	newID    func() string
	forward  http.Header
	metadata string
	http     *http.Client
	now      func() time.Time
	maxEvent int

	mu          sync.Mutex
	session     *Session
	sessionOpts *SessionOptions
	device      *deviceKey // generated for Bind, kept for the client's life
	nonce       string     // the last DPoP-Nonce the engine sent

	renewMu sync.Mutex // one session re-creation at a time
}

// ErrConfig is wrapped by the errors [New] returns for an incomplete configuration.
var ErrConfig = errors.New("client: invalid configuration")

// New returns a client of the engine at baseURL, such as "https://api.example.com".
func New(baseURL string, opts *Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%w: the base URL must be an absolute http or https URL without query", ErrConfig)
	}
	if opts == nil || opts.EngineKey == "" || opts.UserToken == nil {
		return nil, fmt.Errorf("%w: EngineKey and UserToken are required", ErrConfig)
	}
	c := &Client{
		base: u, baseStr: strings.TrimSuffix(u.String(), "/"), key: opts.EngineKey, token: opts.UserToken,
		prefix: opts.RequestIDPrefix, newID: opts.NewRequestID, http: opts.HTTPClient, now: opts.Now,
		maxEvent: opts.MaxEventSize, forward: http.Header{},
	}
	if c.prefix == "" {
		c.prefix = "prod-"
	}
	if c.newID == nil {
		c.newID = randomID
	}
	if c.http == nil {
		c.http = http.DefaultClient
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.maxEvent <= 0 {
		c.maxEvent = 4 << 20
	}
	for name, vals := range opts.Forward {
		if !strings.HasPrefix(strings.ToLower(name), strings.ToLower(forwardPrefix)) {
			name = forwardPrefix + name
		}
		c.forward[http.CanonicalHeaderKey(name)] = append([]string(nil), vals...)
	}
	if opts.Metadata != nil {
		md, err := json.Marshal(opts.Metadata)
		if err != nil {
			return nil, fmt.Errorf("%w: Metadata: %v", ErrConfig, err)
		}
		c.metadata = string(md)
	}
	return c, nil
}

const forwardPrefix = "X-Engine-Forward-"

func randomID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Session returns the client's current session, nil before [Client.CreateSession].
func (c *Client) Session() *Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// call is one request to the engine. body is sent again on a retry.
type call struct {
	method, path string
	body         []byte
	accept       string
	// noSession sends no session token, for create-session.
	noSession bool
	// header holds more headers, such as Last-Event-ID.
	header http.Header
}

// retries are the retries a request made.
type retries struct{ nonce, session bool }

// retry reads a refused answer and decides, by the engine's retry rules, whether to send the
// request again: once with the nonce the engine asked for, once after re-creating a session the
// engine refused. It returns nil to retry, else the error to give up with.
func (c *Client) retry(ctx context.Context, resp *http.Response, sess *Session, tried *retries) error {
	perr := readError(resp)
	switch {
	case perr.Code == CodeUseDPoPNonce && sess != nil && sess.key != nil && !tried.nonce && resp.Header.Get("DPoP-Nonce") != "":
		tried.nonce = true
	case resp.StatusCode == http.StatusUnauthorized && sess != nil && !tried.session && (sess.key != nil || perr.Code == CodeInvalidSession):
		// Any 401 of a key-bound session (an expired session, a proof the engine refused)
		// re-creates it; an unbound session only when the engine says it is invalid.
		tried.session = true
		if _, err := c.renewSession(ctx, sess); err != nil {
			return fmt.Errorf("re-creating the session after %w: %w", perr, err)
		}
	default:
		return perr
	}
	return nil
}

// do sends c with the common headers and the session, and follows the engine's retry rules:
// a use_dpop_nonce answer is retried once with the engine's nonce; any other 401 of a key-bound
// session, and invalid_session of an unbound one, re-creates the session and is retried once. It returns the response of a 2xx answer; any
// other answer is an [*Error].
func (c *Client) do(ctx context.Context, cl call) (*http.Response, error) {
	id := c.prefix + c.newID()
	var tried retries
	for {
		var sess *Session
		if !cl.noSession {
			sess = c.Session()
		}
		resp, err := c.send(ctx, cl, id, sess)
		if err != nil {
			return nil, err
		}
		if n := resp.Header.Get("DPoP-Nonce"); n != "" {
			c.mu.Lock()
			c.nonce = n
			c.mu.Unlock()
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return resp, nil
		}
		if err := c.retry(ctx, resp, sess, &tried); err != nil {
			return nil, err
		}
	}
}

// send makes one attempt of cl.
func (c *Client) send(ctx context.Context, cl call, id string, sess *Session) (*http.Response, error) {
	req, err := c.newRequest(ctx, cl.method, cl.path, cl.body, id, sess)
	if err != nil {
		return nil, err
	}
	if cl.accept != "" {
		req.Header.Set("Accept", cl.accept)
	}
	for k, v := range cl.header {
		req.Header[k] = v
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", cl.method, cl.path, err)
	}
	return resp, nil
}

// newRequest builds a request to path with the common headers of every engine request and,
// with sess, its session token and a DPoP proof for a bound session. The voice socket's
// upgrade request is built the same way.
func (c *Client) newRequest(ctx context.Context, method, path string, body []byte, id string, sess *Session) (*http.Request, error) {
	target := c.baseStr + path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	tok, err := c.token.UserToken(ctx)
	if err != nil {
		return nil, fmt.Errorf("client: getting the user token: %w", err)
	}
	h := req.Header
	for k, v := range c.forward {
		h[k] = v
	}
	h.Set("X-Engine-Key", c.key)
	h.Set("X-Token", tok)
	h.Set("X-Request-ID", id)
	if c.metadata != "" {
		h.Set("X-Client-Metadata", c.metadata)
	}
	if body != nil {
		h.Set("Content-Type", "application/json")
	}
	if sess == nil {
		return req, nil
	}
	if sess.key == nil {
		h.Set("Authorization", "Bearer "+sess.token)
		return req, nil
	}
	c.mu.Lock()
	nonce := c.nonce
	c.mu.Unlock()
	proof, err := sess.key.proof(method, target, sess.token, nonce, c.now())
	if err != nil {
		return nil, fmt.Errorf("client: signing the DPoP proof: %w", err)
	}
	h.Set("Authorization", "DPoP "+sess.token)
	h.Set("DPoP", proof)
	return req, nil
}

// postJSON posts v and returns the 2xx response.
func (c *Client) postJSON(ctx context.Context, path string, v any, accept string) (*http.Response, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("client: encoding the request: %w", err)
	}
	return c.do(ctx, call{method: http.MethodPost, path: path, body: body, accept: accept})
}

// decodeJSON reads a JSON response body of at most limit bytes into v and closes it.
func decodeJSON(resp *http.Response, limit int64, v any) error {
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return fmt.Errorf("client: reading the response: %w", err)
	}
	if int64(len(data)) > limit {
		return fmt.Errorf("client: the response is larger than %d bytes", limit)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("client: decoding the response: %w", err)
	}
	return nil
}
