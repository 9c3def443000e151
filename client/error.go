package client

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
)

// Error is an answer of the engine other than 2xx: its RFC 9457 problem. An answer that is not
// a problem (a proxy's error page) has Status and a Title from the status, and no Code.
type Error struct {
	// Status is the HTTP status.
	Status    int    `json:"status"`
	Type      string `json:"type"`
	Title     string `json:"title"`
	Code      string `json:"code"`
	Detail    string `json:"detail"`
	RequestID string `json:"requestId"`
	Retryable bool   `json:"retryable"`
	// Field names the request field at fault, on invalid_request.
	Field string `json:"field"`
	// WWWAuthenticate is the challenge of a 401 answer.
	WWWAuthenticate string `json:"-"`
}

// Codes of the engine's problems the client acts on. docs/errors.md lists them all.
const (
	CodeInvalidSession   = "invalid_session"
	CodeInvalidDPoPProof = "invalid_dpop_proof"
	CodeUseDPoPNonce     = "use_dpop_nonce"
	CodeNotImplemented   = "not_implemented"
)

// Error returns the status, code and detail.
func (e *Error) Error() string {
	s := "client: engine answered " + strconv.Itoa(e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	} else if e.Title != "" {
		s += ": " + e.Title
	}
	return s
}

// IsCode reports whether err is an [*Error] with the code given.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// readError reads a non-2xx response into an *Error and closes its body.
func readError(resp *http.Response) *Error {
	defer resp.Body.Close()
	e := &Error{}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "application/problem+json" || mt == "application/json" {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		_ = json.Unmarshal(data, e)
	} else {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	}
	e.Status = resp.StatusCode
	if e.Title == "" {
		e.Title = http.StatusText(resp.StatusCode)
	}
	e.WWWAuthenticate = resp.Header.Get("WWW-Authenticate")
	return e
}
