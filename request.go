package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// Headers of PROTOCOL 1.
const (
	HeaderEngineKey      = "X-Engine-Key"
	HeaderUserToken      = "X-Token"
	HeaderRequestID      = "X-Request-ID"
	HeaderClientMetadata = "X-Client-Metadata"
	HeaderForwardPrefix  = "X-Engine-Forward-"
)

const (
	maxUserToken      = 8192
	maxClientMetadata = 4 << 10
)

// validRequestIDSyntax reports whether id matches ^(prod|stg)-[A-Za-z0-9._:-]{1,128}$. It runs
// twice for every request, so it is written out rather than a regular expression.
func validRequestIDSyntax(id string) bool {
	rest, ok := strings.CutPrefix(id, "prod-")
	if !ok {
		rest, ok = strings.CutPrefix(id, "stg-")
	}
	if !ok || len(rest) < 1 || len(rest) > 128 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		switch c := rest[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// request is what the common headers of PROTOCOL 1 established about an incoming request.
type request struct {
	ID          string
	Tenant      *Tenant
	Environment *Environment
	UserToken   Secret
	Metadata    map[string]any
	Forward     ForwardedHeaders
	// Session is the verified session of the request, nil when it carries none.
	Session *Session
}

// sessionID returns the id of the request's verified session, or "".
func (r *request) sessionID() string {
	if r.Session == nil {
		return ""
	}
	return r.Session.ID
}

// toolEnv returns the environment tool calls of r run in.
func (r *request) toolEnv() *ToolEnv {
	return &ToolEnv{Tenant: r.Tenant, Environment: r.Environment, UserToken: r.UserToken,
		RequestID: r.ID, Forward: r.Forward, Metadata: r.Metadata}
}

// readHeaders checks the common headers in the order PROTOCOL 1 sets: request id, engine key,
// user token, session, then the rest; then the rate limits of the tenant and the user.
func (e *Engine) readHeaders(r *http.Request) (*request, *Problem) {
	req, p := e.readHeadersWith(r, true)
	if p == nil {
		p = e.rateLimit(r.Context(), req)
	}
	return req, p
}

// readHeadersWith is readHeaders, skipping the session when withSession is false: for
// create-session, which makes one.
func (e *Engine) readHeadersWith(r *http.Request, withSession bool) (*request, *Problem) {
	h := r.Header
	id, p := requestID(h)
	if p != nil {
		return nil, p
	}
	req := &request{ID: id}

	key := singleHeader(h, HeaderEngineKey)
	if key == "" {
		return req, newProblem(http.StatusUnauthorized, CodeUnknownEngineKey, "the X-Engine-Key header is missing")
	}
	t, err := e.tenants.Tenant(r.Context(), key)
	switch {
	case errors.Is(err, ErrUnknownTenant):
		return req, newProblem(http.StatusUnauthorized, CodeUnknownEngineKey, "the X-Engine-Key is not known")
	case err != nil:
		e.log.ErrorContext(r.Context(), "tenant lookup failed", "requestId", id, "err", err)
		return req, newProblem(http.StatusServiceUnavailable, CodeTenantUnavailable, "the tenant could not be looked up; try again")
	}
	req.Tenant = t

	envName := EnvProduction
	if strings.HasPrefix(id, "stg-") {
		envName = EnvStaging
	}
	req.Environment = t.Environments[envName]
	if req.Environment == nil {
		return req, newProblem(http.StatusForbidden, CodeEnvironmentUnavailable, "the tenant has no "+envName+" environment")
	}

	token := singleHeader(h, HeaderUserToken)
	switch {
	case token == "":
		return req, newProblem(http.StatusUnauthorized, CodeMissingUserToken, "the X-Token header is missing or empty")
	case len(token) > maxUserToken:
		return req, newProblem(http.StatusUnauthorized, CodeMissingUserToken, fmt.Sprintf("the X-Token header is longer than %d bytes", maxUserToken))
	}
	req.UserToken = Secret(token)

	if withSession {
		s, p := e.checkSession(r, t)
		if p != nil {
			return req, p
		}
		req.Session = s
	}

	if vals := h.Values(HeaderClientMetadata); len(vals) > 0 {
		md, p := clientMetadata(vals)
		if p != nil {
			return req, p
		}
		req.Metadata = md
	}
	req.Forward = forwardedHeaders(h)
	if len(req.Forward) > 0 {
		e.log.DebugContext(r.Context(), "forwarding headers", "requestId", id, "headers", req.Forward)
	}
	return req, nil
}

// requestID validates X-Request-ID. A malformed id is not echoed.
func requestID(h http.Header) (string, *Problem) {
	vals := h.Values(HeaderRequestID)
	switch {
	case len(vals) == 0 || vals[0] == "":
		return "", newProblem(http.StatusBadRequest, CodeInvalidRequestID, "the X-Request-ID header is missing; it must look like prod-<id> or stg-<id>")
	case len(vals) > 1:
		return "", newProblem(http.StatusBadRequest, CodeInvalidRequestID, "the X-Request-ID header is sent more than once")
	case !validRequestIDSyntax(vals[0]):
		return "", newProblem(http.StatusBadRequest, CodeInvalidRequestID, "the X-Request-ID header must be prod- or stg- followed by 1 to 128 letters, digits or ._:-")
	}
	return vals[0], nil
}

// singleHeader returns the header's value, or "" when it is absent or sent more than once.
func singleHeader(h http.Header, name string) string {
	vals := h.Values(name)
	if len(vals) != 1 {
		return ""
	}
	return strings.TrimSpace(vals[0])
}

func clientMetadata(vals []string) (map[string]any, *Problem) {
	bad := func(detail string) (map[string]any, *Problem) {
		return nil, newProblem(http.StatusBadRequest, CodeInvalidClientMetadata, detail)
	}
	if len(vals) > 1 {
		return bad("the X-Client-Metadata header is sent more than once")
	}
	if len(vals[0]) > maxClientMetadata {
		return bad(fmt.Sprintf("the X-Client-Metadata header is larger than %d bytes", maxClientMetadata))
	}
	var md map[string]any
	if err := json.Unmarshal([]byte(vals[0]), &md); err != nil || md == nil {
		return bad("the X-Client-Metadata header must be a JSON object")
	}
	return md, nil
}

// checkSession applies the session rules of PROTOCOL 3 (see verifySession).
func (e *Engine) checkSession(r *http.Request, t *Tenant) (*Session, *Problem) {
	return e.verifySession(r, t)
}

// decodeBody reads a JSON request body of at most limit bytes into v. An empty body is "{}"
// when emptyOK. Errors are problems naming the field at fault.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, emptyOK bool, v any) *Problem {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return newProblem(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "the body must be application/json")
		}
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	data, err := io.ReadAll(body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return newProblem(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, fmt.Sprintf("the body is larger than %d bytes", limit))
		}
		return newProblem(http.StatusBadRequest, CodeInvalidRequest, "the body could not be read")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		if emptyOK {
			data = []byte("{}")
		} else {
			return newProblem(http.StatusBadRequest, CodeInvalidRequest, "the body is empty; it must be a JSON object")
		}
	}
	return unmarshalStrictly(data, v)
}

// unmarshalStrictly decodes one JSON object into v and names the field of a type mismatch.
func unmarshalStrictly(data []byte, v any) *Problem {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := dec.Decode(v)
	switch {
	case err == nil:
		if dec.More() {
			return newProblem(http.StatusBadRequest, CodeInvalidRequest, "the body has data after its JSON object")
		}
		return nil
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return newProblem(http.StatusBadRequest, CodeInvalidRequest, "the body must be a JSON object")
		}
		return invalidField(field, "must be "+jsonTypeName(typ.Type.Kind().String()))
	case errors.As(err, &syntax):
		return newProblem(http.StatusBadRequest, CodeInvalidRequest, fmt.Sprintf("the body is not valid JSON (at byte %d)", syntax.Offset))
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return newProblem(http.StatusBadRequest, CodeInvalidRequest, "the body is truncated JSON")
	default:
		return newProblem(http.StatusBadRequest, CodeInvalidRequest, "the body is not a valid JSON object")
	}
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "map", "struct", "interface":
		return "an object"
	case "bool":
		return "a boolean"
	default:
		return "a number"
	}
}
