package engine

import (
	"encoding/json"
	"net/http"

	"github.com/convengine/engine/internal/body"
	"github.com/convengine/engine/internal/response"
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

// Problem codes: the code of every problem response, error event and error message, with its
// status. A code never changes; docs/errors.md says when each is sent and whether to retry.
const (
	// The common headers and the session, on every route.
	CodeInvalidRequestID       = "invalid_request_id"      // 400
	CodeUnknownEngineKey       = "unknown_engine_key"      // 401
	CodeEnvironmentUnavailable = "environment_unavailable" // 403
	CodeMissingUserToken       = "missing_user_token"      // 401
	CodeInvalidSession         = "invalid_session"         // 401
	CodeInvalidDPoPProof       = "invalid_dpop_proof"      // 401
	CodeUseDPoPNonce           = "use_dpop_nonce"          // 401, with a DPoP-Nonce header
	CodeInvalidClientMetadata  = "invalid_client_metadata" // 400
	CodeRateLimited            = "rate_limited"            // 429, with Retry-After
	CodeQuotaExceeded          = "quota_exceeded"          // 429, with Retry-After: a Budget's limit
	CodeTenantUnavailable      = "tenant_unavailable"      // 503
	CodeStoreUnavailable       = "store_unavailable"       // 503
	CodeRecordUnavailable      = "record_unavailable"      // 503: an action whose evidence cannot be recorded
	CodeHeadersTooLarge        = "headers_too_large"       // 431: past the server's header limit (Engine.Listener)

	// Stream tickets, on the voice socket's upgrade.
	CodeInvalidStreamTicket     = "invalid_stream_ticket"      // 401: malformed, or not this engine's
	CodeStreamTicketExpired     = "stream_ticket_expired"      // 401
	CodeStreamTicketReused      = "stream_ticket_reused"       // 401: each ticket opens one socket
	CodeStreamTicketWrongTenant = "stream_ticket_wrong_tenant" // 401: X-Engine-Key names another tenant

	// Bodies and routes.
	CodeInvalidRequest       = "invalid_request"        // 400; Problem.Field names the field
	CodePayloadTooLarge      = "payload_too_large"      // 413
	CodeUnsupportedMediaType = "unsupported_media_type" // 415
	CodeMethodNotAllowed     = "method_not_allowed"     // 405, with Allow
	CodeNotFound             = "not_found"              // 404
	CodeNotImplemented       = "not_implemented"        // 501
	CodeInternal             = "internal"               // 500

	// Create-session.
	CodeInvalidPublicKey = "invalid_public_key" // 400: public_key is not a public EC P-256 JWK

	// Turns.
	CodeOverloaded             = "overloaded"              // 503: MaxConcurrentTurns turns run
	CodeToolsUnavailable       = "tools_unavailable"       // 502: the tool list could not be loaded
	CodeInvalidAudio           = "invalid_audio"           // 422
	CodeNoSpeech               = "no_speech"               // 422: no speech was heard
	CodeUnsupportedLocale      = "unsupported_locale"      // 422: no recogniser for the language
	CodeTranscriberUnavailable = "transcriber_unavailable" // 503

	// Error events inside a turn stream.
	CodeModelError       = "model_error"
	CodeModelUnavailable = "model_unavailable" // also 503 before the stream, with Retry-After: no model can answer now
	CodeTurnTimeout      = "turn_timeout"
	CodeTurnLost         = "turn_lost" // error event of a resumed turn whose replica died: ask again
	CodeStepLimit        = "step_limit"

	// Execute.
	CodeActionNotAllowed    = "action_not_allowed"    // 403
	CodeInvalidActionToken  = "invalid_action_token"  // 403
	CodeActionExpired       = "action_expired"        // 410
	CodeVerificationStale   = "verification_stale"    // 403
	CodeDeviceProofRequired = "device_proof_required" // 403: the tenant requires auth.proof
	CodeInvalidDeviceProof  = "invalid_device_proof"  // 403: auth.proof does not hold
	CodeDeviceNotEnrolled   = "device_not_enrolled"   // 403: the tenant's backend does not know the device key
	CodeActionInProgress    = "action_in_progress"    // 409
	CodeToolUnavailable     = "tool_unavailable"      // 502: nothing was done
	CodeActionReplayed      = "action_replayed"       // RUN_ERROR of an AG-UI resume: the action ran before, nothing ran now

	// Speech.
	CodeSynthesizerUnavailable = "synthesizer_unavailable" // 503
	CodeUnknownVoice           = "unknown_voice"           // 400

	// The voice socket: problems of its upgrade, and error messages on it.
	CodeUpgradeRequired  = "upgrade_required"   // 426: not a WebSocket upgrade
	CodeOriginNotAllowed = "origin_not_allowed" // 403: a page of another origin
	CodeShuttingDown     = "shutting_down"      // 503: the engine takes no new socket
	CodeUtteranceTooLong = "utterance_too_long" // error message: more than 60 s of audio
)

// NewProblem returns a problem of status with a stable code and a detail for people, for
// hooks of the host that refuse a request (Config.Identify, guards): the engine answers it as
// its own problems, retryable when the status is 429, 502, 503 or 504. The detail reaches the
// client: it must not hold a secret.
func NewProblem(status int, code, detail string) *Problem { return newProblem(status, code, detail) }

// newProblem returns a problem with the title of code.
func newProblem(status int, code, detail string) *Problem {
	return &Problem{Type: "about:blank", Title: response.Title(code), Status: status, Code: code, Detail: detail,
		Retryable: status == http.StatusServiceUnavailable || status == http.StatusBadGateway ||
			status == http.StatusGatewayTimeout || status == http.StatusTooManyRequests}
}

// InvalidField is the 400 invalid_request problem about a field of a request, named in Field
// and at the start of Detail, as the engine's own are: for transports that read fields of
// their own.
func InvalidField(field, detail string) *Problem { return invalidField(field, detail) }

func invalidField(field, detail string) *Problem {
	p := newProblem(http.StatusBadRequest, CodeInvalidRequest, field+": "+detail)
	p.Field = field
	return p
}

// fieldProblem is the problem of a body's field that breaks its rule.
func fieldProblem(bad *body.FieldError) *Problem { return invalidField(bad.Field, bad.Detail) }

// writeProblem writes p as application/problem+json.
func writeProblem(w http.ResponseWriter, p *Problem, requestID string) {
	p.RequestID = requestID
	body, err := json.Marshal(p)
	if err != nil {
		body = nil // the internal error's
	}
	response.WriteProblem(w, p.Status, p.Code, p.header, body)
}

// WriteProblem answers err as application/problem+json: a *[Problem] (or an error wrapping
// one) with its status, headers and request id; any other error as 500 internal, without its
// text, which may hold what a client must not read.
func WriteProblem(w http.ResponseWriter, err error) {
	p := problemOf(err)
	writeProblem(w, p, p.RequestID)
}
