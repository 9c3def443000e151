package httptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/breaker"
)

// ErrUnavailable is wrapped by the error of a call the backend could not answer: a network
// error, a time-out, a cancelled call, or a 5xx, 408 or 429 answer. Such a call may be retried.
var ErrUnavailable = errors.New("httptools: tool unavailable")

// ErrBadResponse is wrapped by the error of a call the backend answered with something other
// than JSON, with a body larger than [Options].MaxResponseBytes, or with an unexpected status
// such as a redirect.
var ErrBadResponse = errors.New("httptools: bad response from tool")

// ErrMissingMetadata is wrapped by the error of a call whose tool binds an argument to client
// metadata that the request did not carry.
var ErrMissingMetadata = errors.New("httptools: client metadata missing")

// Call runs one tool of env's tenant against env's backend. A tool the tenant does not have is
// an error wrapping [engine.ErrToolNotFound]; arguments that a GET or DELETE request cannot
// carry are a result with IsError set. The call ends when ctx does or when the tool's time-out
// passes, whichever is first.
func (ts *Toolset) Call(ctx context.Context, env *engine.ToolEnv, call engine.ToolCall) (engine.ToolResult, error) {
	c, err := ts.catalog(env)
	if err != nil {
		return engine.ToolResult{}, err
	}
	def, ok := c.byName[call.Name]
	if !ok {
		return engine.ToolResult{}, fmt.Errorf("httptools: tool %q: %w", call.Name, engine.ErrToolNotFound)
	}
	if def.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(def.Timeout))
		defer cancel()
	}
	req, problem, err := newRequest(ctx, env, def, call.Arguments)
	switch {
	case err != nil:
		return engine.ToolResult{}, err
	case problem != "":
		return errorResult("invalid_arguments", problem), nil
	}
	backend := backendName(req.URL)
	done, err := ts.breakers.Allow(backend)
	if err != nil {
		return engine.ToolResult{}, fmt.Errorf("%w: %w: %s: the backend is failing: %w", ErrUnavailable, engine.ErrToolNotReached, def.Name, err)
	}
	res, err := ts.send(ctx, def, req)
	switch {
	case errors.Is(err, ErrUnavailable) && !errors.Is(ctx.Err(), context.Canceled):
		done(breaker.Failure)
	case err != nil && ctx.Err() != nil:
		done(breaker.Ignore) // the turn ended: nothing is known of the backend
	default:
		done(breaker.Success) // it answered, even if with a refusal
	}
	return res, err
}

// send sends req and reads its answer. A read tool's request that could not be made or was
// cut without an answer is sent once more after a short, random wait (so that the calls of
// many turns do not come back together); an action's never is: its backend may have acted,
// and only the execute endpoint's Idempotency-Key makes a second try safe.
func (ts *Toolset) send(ctx context.Context, def *Definition, req *http.Request) (engine.ToolResult, error) {
	resp, err := ts.client.Do(req)
	if err != nil && !def.Action && ctx.Err() == nil && connectionError(err) && (req.Body == nil || req.GetBody != nil) {
		t := time.NewTimer(retryJitter())
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
			again := req.Clone(ctx)
			if req.GetBody != nil {
				again.Body, _ = req.GetBody()
			}
			resp, err = ts.client.Do(again)
		}
	}
	if err != nil {
		return engine.ToolResult{}, unreachable(ctx, def, err)
	}
	defer resp.Body.Close()
	return ts.result(ctx, def, resp)
}

// retryJitter is the wait before a read tool's second try: 50 to 150 ms.
func retryJitter() time.Duration { return 50*time.Millisecond + rand.N(100*time.Millisecond) }

// connectionError reports whether err is a connection's failure rather than a time-out: the
// connection could not be made, or broke before an answer.
func connectionError(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return notSent(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// backendName is the key of a backend's breaker: its scheme and host (a backend's tools and
// tenants share it), never credentials, a path or a query.
func backendName(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}

// newRequest builds the request of a call. It returns a problem, for the model to read, when
// the arguments do not fit the tool's method, and an error when the environment has no usable
// backend URL.
func newRequest(ctx context.Context, env *engine.ToolEnv, def *Definition, args json.RawMessage) (*http.Request, string, error) {
	if env.Environment == nil || env.Environment.BackendURL == "" {
		return nil, "", fmt.Errorf("%w: %w: %s: the environment has no backend_url", ErrUnavailable, engine.ErrToolNotReached, def.Name)
	}
	u, err := url.Parse(env.Environment.BackendURL)
	if err != nil || u.Host == "" {
		return nil, "", fmt.Errorf("%w: %w: %s: the environment's backend_url is not an absolute URL", ErrUnavailable, engine.ErrToolNotReached, def.Name)
	}
	u = u.JoinPath(def.Path)

	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil || fields == nil {
		return nil, "the arguments must be a JSON object", nil
	}
	if len(def.Bind) > 0 {
		for arg, path := range def.Bind {
			v, ok := metadataValue(env.Metadata, path)
			if !ok {
				return nil, "", fmt.Errorf("%w: %s: the client metadata has no %s", ErrMissingMetadata, def.Name, path)
			}
			b, err := json.Marshal(v)
			if err != nil {
				return nil, "", fmt.Errorf("%w: %s: %s", ErrMissingMetadata, def.Name, path)
			}
			fields[arg] = b
		}
		if args, err = json.Marshal(fields); err != nil {
			return nil, "", fmt.Errorf("httptools: %s: encoding arguments: %w", def.Name, err)
		}
	}
	var body io.Reader
	if def.Method == http.MethodGet || def.Method == http.MethodDelete {
		q := u.Query()
		for name, v := range fields {
			s, ok, isNull := queryValue(v)
			switch {
			case isNull:
			case !ok:
				return nil, fmt.Sprintf("argument %q must be a string, number or boolean", name), nil
			default:
				q.Set(name, s)
			}
		}
		u.RawQuery = q.Encode()
	} else {
		body = bytes.NewReader(args)
	}

	req, err := http.NewRequestWithContext(ctx, def.Method, u.String(), body)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w: %s: building the request: %w", ErrUnavailable, engine.ErrToolNotReached, def.Name, err)
	}
	env.SetHeaders(req.Header, "Accept", "Content-Type")
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, "", nil
}

// queryValue returns the text of a scalar JSON value as a query parameter carries it.
func queryValue(v json.RawMessage) (s string, ok, isNull bool) {
	if len(v) == 0 {
		return "", false, false
	}
	switch v[0] {
	case 'n':
		return "", false, true
	case 't', 'f':
		return string(v), true, false
	case '"':
		err := json.Unmarshal(v, &s)
		return s, err == nil, false
	case '{', '[':
		return "", false, false
	}
	// A number: keep its digits, but write 5.0 or 1e3 as a backend parsing an integer expects.
	if !bytes.ContainsAny(v, ".eE") {
		return string(v), true, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return "", false, false
	}
	return strconv.FormatFloat(f, 'f', -1, 64), true, false
}

// result reads the backend's answer.
func (ts *Toolset) result(ctx context.Context, def *Definition, resp *http.Response) (engine.ToolResult, error) {
	code := resp.StatusCode
	switch {
	case code == http.StatusServiceUnavailable || code == http.StatusTooManyRequests:
		// The backend says it did not take the request.
		io.CopyN(io.Discard, resp.Body, 4<<10)
		return engine.ToolResult{}, fmt.Errorf("%w: %w: %s: status %d", ErrUnavailable, engine.ErrToolNotReached, def.Name, code)
	case code >= 500 || code == http.StatusRequestTimeout:
		// Reading a little lets the connection of a short answer be used again.
		io.CopyN(io.Discard, resp.Body, 4<<10)
		return engine.ToolResult{}, fmt.Errorf("%w: %s: status %d", ErrUnavailable, def.Name, code)
	case code < 200 || (code >= 300 && code < 400):
		return engine.ToolResult{}, fmt.Errorf("%w: %s: unexpected status %d", ErrBadResponse, def.Name, code)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, ts.maxResponse+1))
	if err != nil {
		return engine.ToolResult{}, unreachable(ctx, def, err)
	}
	if int64(len(body)) > ts.maxResponse {
		return engine.ToolResult{}, fmt.Errorf("%w: %s: the answer exceeds %d bytes", ErrBadResponse, def.Name, ts.maxResponse)
	}
	body = bytes.TrimSpace(body)
	isJSON := len(body) > 0 && json.Valid(body)
	switch {
	case code < 300 && len(body) == 0:
		return engine.ToolResult{Content: json.RawMessage("{}")}, nil
	case code < 300 && isJSON:
		return engine.ToolResult{Content: body}, nil
	case code < 300:
		return engine.ToolResult{}, fmt.Errorf("%w: %s: status %d with a body that is not JSON", ErrBadResponse, def.Name, code)
	case isJSON:
		return engine.ToolResult{Content: body, IsError: true}, nil
	}
	return errorResult(fmt.Sprintf("http_%d", code), http.StatusText(code)), nil
}

// notSent reports whether err shows that the request never left: the name did not resolve, or
// the connection could not be made.
func notSent(err error) bool {
	if _, ok := errors.AsType[*net.DNSError](err); ok {
		return true
	}
	op, ok := errors.AsType[*net.OpError](err)
	return ok && op.Op == "dial"
}

// unreachable describes a call that got no answer. It leaves out the *url.Error around err,
// whose text holds the URL with its query.
func unreachable(ctx context.Context, def *Definition, err error) error {
	if urlErr, ok := errors.AsType[*url.Error](err); ok {
		err = urlErr.Err
	}
	if notSent(err) {
		return fmt.Errorf("%w: %w: %s: %w", ErrUnavailable, engine.ErrToolNotReached, def.Name, err)
	}
	switch ctxErr := ctx.Err(); {
	case errors.Is(ctxErr, context.DeadlineExceeded):
		return fmt.Errorf("%w: %s: timed out: %w", ErrUnavailable, def.Name, ctxErr)
	case ctxErr != nil:
		return fmt.Errorf("%w: %s: %w", ErrUnavailable, def.Name, ctxErr)
	}
	return fmt.Errorf("%w: %s: %w", ErrUnavailable, def.Name, err)
}

// errorResult is a result with IsError set, in the shape backends use for their refusals.
func errorResult(code, message string) engine.ToolResult {
	content, _ := json.Marshal(map[string]string{"error": code, "message": message})
	return engine.ToolResult{Content: content, IsError: true}
}
