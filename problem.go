package engine

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// Problem is an RFC 9457 problem detail, the body of every error response. Code is stable and
// documented in docs/errors.md; Detail never holds a token, a forwarded value or a stack trace.
type Problem struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Code      string `json:"code"`
	Detail    string `json:"detail,omitempty"`
	RequestID string `json:"requestId,omitempty"`
	Retryable bool   `json:"retryable"`
	// Field names the request field at fault, for invalid_request.
	Field string `json:"field,omitempty"`

	// header is added to the response, such as WWW-Authenticate.
	header http.Header
}

// Error returns the problem's code and detail.
func (p *Problem) Error() string {
	if p.Detail == "" {
		return "engine: " + p.Code
	}
	return "engine: " + p.Code + ": " + p.Detail
}

// Problem codes. docs/errors.md lists each with its status.
const (
	CodeUnknownEngineKey       = "unknown_engine_key"
	CodeMissingUserToken       = "missing_user_token"
	CodeInvalidRequestID       = "invalid_request_id"
	CodeEnvironmentUnavailable = "environment_unavailable"
	CodeInvalidClientMetadata  = "invalid_client_metadata"
	CodeInvalidSession         = "invalid_session"
	CodeInvalidDPoPProof       = "invalid_dpop_proof"
	CodeInvalidRequest         = "invalid_request"
	CodePayloadTooLarge        = "payload_too_large"
	CodeUnsupportedMediaType   = "unsupported_media_type"
	CodeMethodNotAllowed       = "method_not_allowed"
	CodeNotFound               = "not_found"
	CodeNotImplemented         = "not_implemented"
	CodeInvalidAudio           = "invalid_audio"
	CodeTranscriberUnavailable = "transcriber_unavailable"
	CodeSynthesizerUnavailable = "synthesizer_unavailable"
	CodeTenantUnavailable      = "tenant_unavailable"
	CodeToolsUnavailable       = "tools_unavailable"
	CodeInternal               = "internal"

	// Codes of error events inside a turn stream.
	CodeModelError  = "model_error"
	CodeTurnTimeout = "turn_timeout"
	CodeStepLimit   = "step_limit"
)

// problemTitles holds the titles that the code does not spell well on its own; other titles
// are the code in words: "unknown_engine_key" is "Unknown engine key".
var problemTitles = map[string]string{
	CodeInvalidDPoPProof: "Invalid DPoP proof",
	CodeInternal:         "Internal error",
}

func problemTitle(code string) string {
	if t, ok := problemTitles[code]; ok {
		return t
	}
	if code == "" {
		return "Error"
	}
	t := []byte(strings.ReplaceAll(code, "_", " "))
	if t[0] >= 'a' && t[0] <= 'z' {
		t[0] -= 'a' - 'A'
	}
	return string(t)
}

// newProblem returns a problem with the title of code.
func newProblem(status int, code, detail string) *Problem {
	return &Problem{Type: "about:blank", Title: problemTitle(code), Status: status, Code: code, Detail: detail,
		Retryable: status == http.StatusServiceUnavailable || status == http.StatusBadGateway ||
			status == http.StatusGatewayTimeout || status == http.StatusTooManyRequests}
}

func invalidField(field, detail string) *Problem {
	p := newProblem(http.StatusBadRequest, CodeInvalidRequest, field+": "+detail)
	p.Field = field
	return p
}

// writeProblem writes p as application/problem+json.
func writeProblem(w http.ResponseWriter, p *Problem, requestID string) {
	p.RequestID = requestID
	if sw, ok := w.(*statusWriter); ok {
		sw.code = p.Code
	}
	body, err := json.Marshal(p)
	if err != nil {
		body = []byte(`{"type":"about:blank","title":"Internal error","status":500,"code":"internal","retryable":false}`)
	}
	h := w.Header()
	for k, v := range p.header {
		h[k] = v
	}
	h.Set("Content-Type", "application/problem+json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	w.Write(body)
}
