package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
)

// Errors of a request that got no usable answer.
var (
	// ErrNoAnswer: the server did not start answering within Options.RequestTimeout.
	ErrNoAnswer = errors.New("openai: the server did not start answering in time")
	// ErrStreamCut: the stream ended before the completion said anything or finished.
	ErrStreamCut = errors.New("openai: the stream ended before the completion finished")
)

// APIError is an error status the server answered with. The status is kept whatever the body:
// OpenAI's {"error":{…}}, {"error":"a string"} (Ollama, LiteLLM), {"detail":…} (FastAPI
// servers), or a proxy's HTML page.
type APIError struct {
	StatusCode int
	// Code and Type classify the error, such as "rate_limit_exceeded" and "requests", when the
	// server gave them.
	Code string
	Type string
	// Message is the server's explanation. It may quote parts of the request, so Error does
	// not include it.
	Message string
	// Param names the request member at fault, when the server said ("stream_options").
	Param string

	retryAfter    time.Duration
	hasRetryAfter bool
	shouldRetry   string // the x-should-retry header
}

// Error returns the status and the error code; a 404 adds what is likely wrong.
func (e *APIError) Error() string {
	s := fmt.Sprintf("openai: the server answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	if e.StatusCode == http.StatusNotFound {
		s += ": the base URL or the model name is likely wrong"
	}
	return s
}

// RetryAfter is the wait the server asked for (retry-after-ms or Retry-After), 0 when it
// asked for none. A fallback chain keeps the model out of its turns for that long.
func (e *APIError) RetryAfter() time.Duration {
	if !e.hasRetryAfter {
		return 0
	}
	return e.retryAfter
}

// completionError is the error a [Model] yields. Temporary tells a fallback chain whether
// another model may answer what this one could not: the failures the model itself would
// retry.
type completionError struct{ err error }

func (e *completionError) Error() string   { return "openai: chat completion: " + e.err.Error() }
func (e *completionError) Unwrap() error   { return e.err }
func (e *completionError) Temporary() bool { return retryable(e.err) }

// StreamError is an error a server reported inside a stream it had answered 200 to, such as a
// prompt longer than the model's context (llama.cpp, SGLang). Error does not include the
// server's message, which may quote the prompt.
type StreamError struct {
	// Status is the error's HTTP-like status when the server gave one (llama.cpp's "code":
	// 400), else 0.
	Status  int
	Code    string
	Type    string
	Message string
}

// Error returns what classifies the error.
func (e *StreamError) Error() string {
	s := "openai: the server reported an error in the stream"
	var parts []string
	if e.Status != 0 {
		parts = append(parts, strconv.Itoa(e.Status))
	}
	for _, p := range []string{e.Code, e.Type} {
		if p != "" && (len(parts) == 0 || parts[len(parts)-1] != p) {
			parts = append(parts, p)
		}
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, " ") + ")"
	}
	return s
}

// clientError reports whether the request itself was at fault, so that sending it again gives
// the same answer.
func (e *StreamError) clientError() bool {
	if e.Status >= 400 && e.Status < 500 && e.Status != http.StatusTooManyRequests {
		return true
	}
	switch e.Code {
	case "context_length_exceeded", "invalid_request_error", "exceed_context_size_error", "invalid_prompt":
		return true
	}
	return e.Type == "invalid_request_error" || e.Type == "exceed_context_size_error"
}

// errorBody is the error member of a body or of a chunk: OpenAI's object, or a string.
type errorBody struct {
	Code    json.RawMessage `json:"code"` // a string, or a number (llama.cpp)
	Message string          `json:"message"`
	Type    string          `json:"type"`
}

// readError reads an error member: an object, a string, or anything else as a message.
func readError(raw []byte) (code string, status int, typ, msg string) {
	raw = bytes.TrimSpace(raw)
	var b errorBody
	switch {
	case len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &b) == nil:
		typ, msg = b.Type, b.Message
		var s string
		var n int
		switch {
		case json.Unmarshal(b.Code, &s) == nil:
			code = s
		case json.Unmarshal(b.Code, &n) == nil:
			status = n
		}
	case len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &msg) == nil:
	default:
		msg = string(raw)
	}
	return code, status, typ, msg
}

// streamError is the error of a chunk's error member, of llama.cpp's "error:" field, or of an
// "event: error".
func streamError(raw []byte) error {
	var wrapped struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &wrapped) == nil && len(wrapped.Error) > 0 && string(wrapped.Error) != "null" {
		raw = wrapped.Error // {"error":{…}} as the data of an error event
	}
	code, status, typ, msg := readError(raw)
	if status < 100 || status > 599 {
		status = 0
	}
	return &StreamError{Status: status, Code: code, Type: typ, Message: msg}
}

// responseError reads the error of a response with an error status. Its body is read whole
// first by the SDK; it is bounded here all the same.
func responseError(resp *http.Response) *APIError {
	ae := &APIError{StatusCode: resp.StatusCode}
	ae.retryAfter, ae.hasRetryAfter = retryAfter(resp.Header)
	ae.shouldRetry = resp.Header.Get("X-Should-Retry")
	if resp.Body == nil {
		return ae
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var b struct {
		Error  json.RawMessage `json:"error"`
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &b) != nil {
		ae.Message = string(bytes.TrimSpace(body)) // a proxy's page
		return ae
	}
	raw := b.Error
	switch {
	case len(raw) == 0 && len(b.Detail) > 0:
		raw = b.Detail // FastAPI servers
	case len(raw) == 0:
		raw = body // vLLM's and SGLang's {"object":"error","message":…,"code":400}
	}
	var status int
	ae.Code, status, ae.Type, ae.Message = readError(raw)
	var param struct {
		Param string `json:"param"`
	}
	if json.Unmarshal(raw, &param) == nil {
		ae.Param = param.Param
	}
	if ae.Code == "" && status != 0 {
		ae.Code = strconv.Itoa(status)
	}
	return ae
}

// statusError returns the error of a request the SDK made: an [*APIError] when the server
// answered an error status (resp, which the SDK keeps, holds it), else err as it is.
func statusError(err error, resp *http.Response) error {
	if resp != nil && resp.StatusCode >= 400 {
		return responseError(resp)
	}
	var oe *openai.Error
	if errors.As(err, &oe) && oe.Response != nil {
		return responseError(oe.Response)
	}
	return err
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
