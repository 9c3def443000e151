package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/google/uuid"

	"github.com/convengine/engine/internal/headers"
	"github.com/convengine/engine/internal/jsonenc"
	"github.com/convengine/engine/internal/response"
)

// Header names of the protocol.
const (
	// Request headers every route checks.
	HeaderEngineKey      = "X-Engine-Key"
	HeaderUserToken      = "X-Token"
	HeaderRequestID      = "X-Request-ID"
	HeaderClientMetadata = "X-Client-Metadata"
	// The headers of device-bound sessions (RFC 9449).
	HeaderDPoP      = "DPoP"
	HeaderDPoPNonce = "DPoP-Nonce"
	// HeaderIdempotencyKey carries a confirmed action's id on its call to the backend.
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderEngineVersion is on every response, with [Version].
	HeaderEngineVersion = "Engine-Version"
	// HeaderActionProof, HeaderActionProofType, HeaderDeviceKey and HeaderActionToken carry a
	// confirmed action's device proof to the action's backend, whole ([ActionProof]): the proof,
	// its type, the public key it verifies with (base64url of the JWK) and the action token it
	// signs. No client can forward a header named Engine-*.
	HeaderActionProof     = "Engine-Action-Proof"
	HeaderActionProofType = "Engine-Action-Proof-Type"
	HeaderDeviceKey       = "Engine-Device-Key"
	HeaderActionToken     = "Engine-Action-Token"
)

const (
	maxUserToken = 8192
)

// request is what the common headers established about an incoming request.
type request struct {
	ID          string
	Tenant      *Tenant
	Environment *Environment
	UserToken   Secret
	Metadata    map[string]any
	Forward     ForwardedHeaders
	// Session is the verified session of the request, nil when it carries none.
	Session *Session
	// user is the keyed hash of the tenant and the user's token that names the user's
	// buckets and slots, set by the admission; unverified is true for a caller admitted by
	// another name before it has a user token (Work.Unverified).
	user       string
	unverified bool
	userID     string // the host's stable id of the user (Identity.UserID), "" without one
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

// readHeaders reads everything the headers of r say, then admits the request
// (WorkRequest): what the routes that hold nothing ask.
func (e *Engine) readHeaders(r *http.Request) (*request, *Problem) {
	req, _, p := e.readAdmitted(r, true, WorkRequest)
	return req, p
}

// readAdmitted reads the headers of r, then admits its work of kind, right after them as
// every route does: a request refused by the admission is refused before its body is read.
func (e *Engine) readAdmitted(r *http.Request, withSession bool, kind WorkKind) (*request, *Admission, *Problem) {
	req, p := e.readAllHeaders(r, withSession)
	if p != nil {
		return req, nil, p
	}
	a, p := e.admit(r.Context(), req, Work{Kind: kind})
	return req, a, p
}

// readAllHeaders reads and checks, in one pass, everything the headers of r say, in the order
// and with the problems of docs/protocol.md: the request id; who the request comes from (the
// tenant of X-Engine-Key, the environment, the user's X-Token, or what Config.Identify says);
// the session and its DPoP proof, when withSession (create-session makes one); the client's
// metadata; the forwarded headers. The routes admit their work right after (readAdmitted). It returns the finished request, which the handlers and the turn only read; with a
// problem, what was established before it (the id to echo), or nil.
func (e *Engine) readAllHeaders(r *http.Request, withSession bool) (*request, *Problem) {
	req, p := e.readCaller(r)
	if p != nil {
		return req, p
	}
	h := r.Header
	if withSession {
		if req.Session, p = e.verifySession(r, req.Tenant, req.ID); p != nil {
			return req, p
		}
	}
	if vals := h.Values(HeaderClientMetadata); len(vals) > 0 {
		var err error
		if req.Metadata, err = headers.ClientMetadata(vals); err != nil {
			return req, newProblem(http.StatusBadRequest, CodeInvalidClientMetadata, err.Error())
		}
	}
	req.Forward = forwarded(h, headers.Spelling(r.Context()))
	if len(req.Forward) > 0 {
		e.log.DebugContext(r.Context(), "forwarding headers", "requestId", req.ID, "headers", req.Forward)
	}
	return req, nil
}

// readCaller is the first part of readAllHeaders: the request id, then who the request comes
// from, from the headers or from a host's Config.Identify.
func (e *Engine) readCaller(r *http.Request) (*request, *Problem) {
	if e.identifyHook != nil {
		return e.readIdentified(r)
	}
	h := r.Header
	var hostEnv string
	if e.environmentOf != nil {
		hostEnv = e.environmentOf(r)
	}
	id, p := requestID(h, hostEnv != "")
	if p != nil {
		return nil, p
	}
	req := &request{ID: id}

	key := headers.Single(h, HeaderEngineKey)
	if key == "" {
		return req, newProblem(http.StatusUnauthorized, CodeUnknownEngineKey, "the X-Engine-Key header is missing")
	}
	t, p := e.callerTenant(r.Context(), key, id, "X-Engine-Key")
	if p != nil {
		return req, p
	}
	req.Tenant = t

	envName := hostEnv
	switch {
	case envName == "" && strings.HasPrefix(id, "stg-"):
		envName = EnvStaging
	case envName == "":
		envName = EnvProduction
	case envName != EnvProduction && envName != EnvStaging:
		e.log.ErrorContext(r.Context(), "Config.Environment chose an unknown environment", "requestId", id, "environment", envName)
		return req, newProblem(http.StatusForbidden, CodeEnvironmentUnavailable, "the request's environment is not production or staging")
	}
	req.Environment = t.Environments[envName]
	if req.Environment == nil {
		return req, newProblem(http.StatusForbidden, CodeEnvironmentUnavailable, "the tenant has no "+envName+" environment")
	}

	token := headers.Single(h, HeaderUserToken)
	switch {
	case token == "":
		return req, newProblem(http.StatusUnauthorized, CodeMissingUserToken, "the X-Token header is missing or empty")
	case len(token) > maxUserToken:
		return req, newProblem(http.StatusUnauthorized, CodeMissingUserToken, fmt.Sprintf("the X-Token header is longer than %d bytes", maxUserToken))
	}
	req.UserToken = Secret(token)
	return req, nil
}

// readIdentified is readCaller for a host's Config.Identify: the host names the tenant, the
// user's token and the environment; the request id is the header's, if any.
func (e *Engine) readIdentified(r *http.Request) (*request, *Problem) {
	req := &request{ID: newRequestID("")}
	given := len(r.Header.Values(HeaderRequestID)) > 0
	if given {
		var p *Problem
		if req.ID, p = requestID(r.Header, true); p != nil {
			return nil, p
		}
	}
	id, err := e.identifyHook(r)
	if !given && err == nil && id.Environment == EnvStaging {
		req.ID = newRequestID(EnvStaging)
	}
	if err != nil {
		if p, ok := errors.AsType[*Problem](err); ok {
			return req, p
		}
		e.log.ErrorContext(r.Context(), "Config.Identify failed", "requestId", req.ID, "err", err)
		return req, newProblem(http.StatusInternalServerError, CodeInternal, "the engine failed; the failure is logged")
	}
	req.userID = id.UserID
	return req, e.identify(r.Context(), req, id.EngineKey, id.Environment, id.UserToken)
}

// newRequestID makes the id of a request that came without one: a UUID after the prefix of
// environment env ("" is production), as a client's X-Request-ID would carry, so that the
// backend's logs tell the environments apart whoever made the id.
func newRequestID(env string) string {
	if env == EnvStaging {
		return "stg-" + uuid.NewString()
	}
	return "prod-" + uuid.NewString()
}

// readRequest checks the common headers of r, admits its work of kind, and decodes its JSON body, which may not be
// empty, into body. It writes the problem and returns nil when either fails. The body may not
// name a member twice: it carries the device's proofs and passkey assertions of the execute
// endpoint, which a parser that keeps the first of two members would read otherwise.
func (e *Engine) readRequest(w http.ResponseWriter, r *http.Request, kind WorkKind, body any) (*request, *Admission) {
	req, a, p := e.readAdmitted(r, true, kind)
	var data []byte
	if p == nil {
		var err *jsonenc.BodyError
		data, err = jsonenc.ReadBody(w, r, e.maxBody, false)
		p = bodyProblem(err)
	}
	if p == nil && jsonenc.HasDuplicateMembers(data) {
		p = newProblem(http.StatusBadRequest, CodeInvalidRequest, "the body names a member of one object twice")
	}
	if p == nil {
		p = unmarshalStrictly(data, body)
	}
	if p != nil {
		a.Release()
		writeProblem(w, p, req.idOrEmpty())
		return nil, nil
	}
	return req, a
}

// requestID validates X-Request-ID, which must carry the environment's prefix unless the host
// chose the environment. A malformed id is not echoed.
func requestID(h http.Header, unprefixed bool) (string, *Problem) {
	id, bad := headers.RequestID(h, unprefixed)
	if bad != "" {
		return "", newProblem(http.StatusBadRequest, CodeInvalidRequestID, bad)
	}
	return id, nil
}

// decodeBody reads a JSON request body of at most limit bytes into v, as package jsonenc says
// (an application/json label required, so that a cross-site form cannot send a turn; type
// mismatches named). An empty body is "{}" when emptyOK. Errors are problems naming the field at
// fault.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, emptyOK bool, v any) *Problem {
	data, err := jsonenc.ReadBody(w, r, limit, emptyOK)
	if err == nil {
		err = jsonenc.UnmarshalBody(data, v)
	}
	return bodyProblem(err)
}

// unmarshalStrictly decodes one JSON object into v and names the field of a type mismatch.
func unmarshalStrictly(data []byte, v any) *Problem {
	return bodyProblem(jsonenc.UnmarshalBody(data, v))
}

// bodyProblem is the problem of a [jsonenc.BodyError], nil for none.
func bodyProblem(err *jsonenc.BodyError) *Problem {
	if err == nil {
		return nil
	}
	p := newProblem(err.Status, err.Code, err.Detail)
	p.Field = err.Field
	return p
}

// route wraps the endpoint of path with what every route does: recover a panic into a 500
// problem, echo a valid X-Request-ID, refuse other methods with a 405 problem, and report the
// request to the observer under path (never the request's own path or method, which anyone
// writes).
func (e *Engine) route(method, path string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := e.validRequestID(r)
		w.Header().Set(HeaderEngineVersion, Version)
		if id != "" {
			w.Header().Set(HeaderRequestID, id)
		}
		if e.obs.Request != nil {
			sw, start := &response.Recorder{ResponseWriter: w}, e.now()
			w = sw
			defer func() {
				e.obs.Request(r.Context(), RequestEvent{Route: path, Method: response.KnownMethod(r.Method), Status: sw.Status,
					Code: sw.Code, RequestID: id, Duration: e.now().Sub(start)})
			}()
		}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				e.log.ErrorContext(r.Context(), "handler panicked", "requestId", id, "path", r.URL.Path,
					"panic", fmt.Sprintf("%T", v), "stack", string(debug.Stack()))
				writeProblem(w, newProblem(http.StatusInternalServerError, CodeInternal, "the engine failed; the failure is logged"), id)
			}
		}()
		if method != "" && r.Method != method {
			w.Header().Set("Allow", method)
			writeProblem(w, newProblem(http.StatusMethodNotAllowed, CodeMethodNotAllowed, r.URL.Path+" takes "+method), id)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// validRequestID returns the request's id when it is well formed, to echo and log it outside
// readHeaders; "" when it is not.
func (e *Engine) validRequestID(r *http.Request) string {
	id, p := requestID(r.Header, e.hostChoosesEnvironment())
	if p != nil {
		return ""
	}
	return id
}

func (r *request) idOrEmpty() string {
	if r == nil {
		return ""
	}
	return r.ID
}

// hostChoosesEnvironment reports whether the host, not the request id's prefix, decides a
// request's environment (Config.Environment or Config.Identify): request ids then need no
// prefix.
func (e *Engine) hostChoosesEnvironment() bool {
	return e.environmentOf != nil || e.identifyHook != nil
}

// CallerFromRequest reads who r comes from as the protocol's handlers do, for a host that
// serves its own transport over HTTP and runs turns in-process: the request id, the engine
// key and the user's token (X-Request-ID, X-Engine-Key, X-Token, or [Config].Identify), the
// session and its DPoP proof (Authorization, DPoP), X-Client-Metadata and the forwarded
// headers, in the order and with the problems of docs/protocol.md. Rate limits are not
// counted here: the in-process call counts them. The error is a *[Problem], which
// [WriteProblem] answers.
func (e *Engine) CallerFromRequest(r *http.Request) (*Caller, error) {
	req, p := e.readAllHeaders(r, true)
	if p != nil {
		p.RequestID = req.idOrEmpty()
		return nil, p
	}
	return &Caller{EngineKey: req.Tenant.Key, UserToken: string(req.UserToken), UserID: req.userID, Environment: req.Environment.Name,
		RequestID: req.ID, SessionID: req.sessionID(), Metadata: req.Metadata, Forward: http.Header(req.Forward)}, nil
}

// Secret is a value that must never appear in a log line, an error message or a response: the
// end user's token, a session token, a forwarded header value. Every way of printing it prints
// "[redacted]"; [Secret.Reveal] returns the value for the one place that sends it on.
type Secret string

const redacted = "[redacted]"

// Reveal returns the secret value.
func (s Secret) Reveal() string { return string(s) }

// String returns "[redacted]".
func (s Secret) String() string { return redacted }

// GoString returns "[redacted]", so %#v does not print the value either.
func (s Secret) GoString() string { return redacted }

// LogValue implements [slog.LogValuer].
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalText returns "[redacted]", so encoders do not write the value.
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// identify finds the tenant of key, its environment env ("" is production) and checks the
// user's token, for requests that do not come with the protocol's headers.
func (e *Engine) identify(ctx context.Context, req *request, key, env, token string) *Problem {
	if key == "" {
		return newProblem(http.StatusUnauthorized, CodeUnknownEngineKey, "the engine key is missing")
	}
	t, p := e.callerTenant(ctx, key, req.ID, "engine key")
	if p != nil {
		return p
	}
	req.Tenant = t
	if env == "" {
		env = EnvProduction
	}
	if env != EnvProduction && env != EnvStaging {
		return newProblem(http.StatusForbidden, CodeEnvironmentUnavailable, "the environment must be production or staging")
	}
	if req.Environment = t.Environments[env]; req.Environment == nil {
		return newProblem(http.StatusForbidden, CodeEnvironmentUnavailable, "the tenant has no "+env+" environment")
	}
	switch {
	case token == "":
		return newProblem(http.StatusUnauthorized, CodeMissingUserToken, "the user's token is missing")
	case len(token) > maxUserToken:
		return newProblem(http.StatusUnauthorized, CodeMissingUserToken, fmt.Sprintf("the user's token is longer than %d bytes", maxUserToken))
	}
	req.UserToken = Secret(token)
	return nil
}

// callerTenant looks up the tenant of key for the request id, as the problem its caller is
// answered: what names the key in the detail, as the caller gave it ("X-Engine-Key").
func (e *Engine) callerTenant(ctx context.Context, key, id, what string) (*Tenant, *Problem) {
	t, err := e.tenant(ctx, key, id)
	switch {
	case errors.Is(err, ErrUnknownTenant):
		return nil, newProblem(http.StatusUnauthorized, CodeUnknownEngineKey, "the "+what+" is not known")
	case errors.Is(err, errInvalidTenant):
		return nil, invalidTenant()
	case err != nil:
		e.log.ErrorContext(ctx, "tenant lookup failed", "requestId", id, "err", err)
		return nil, newProblem(http.StatusServiceUnavailable, CodeTenantUnavailable, "the tenant could not be looked up; try again")
	}
	return t, nil
}

// inProcessSession returns the session id names, which must be the tenant's and not over.
func (e *Engine) inProcessSession(ctx context.Context, req *request, id string) (*Session, *Problem) {
	s, err := e.sessions.Session(ctx, id)
	switch {
	case errors.Is(err, ErrSessionNotFound):
		return nil, newProblem(http.StatusUnauthorized, CodeInvalidSession, "the session is unknown or has ended; create a new session")
	case err != nil:
		e.log.ErrorContext(ctx, "looking up a session failed", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		return nil, newProblem(http.StatusServiceUnavailable, CodeStoreUnavailable, "the session could not be looked up; try again")
	case s.TenantKey != req.Tenant.Key || !e.now().Before(s.ExpiresAt):
		return nil, newProblem(http.StatusUnauthorized, CodeInvalidSession, "the session is unknown or has ended; create a new session")
	}
	return s, nil
}

// userOf returns the name of req's user in the buckets and slots: the one its admission
// computed, or computed now (a keyed hash, which a turn without per-user bounds never needs).
func (e *Engine) userOf(req *request) string {
	if req.user != "" {
		return req.user
	}
	return e.limits.userBucket(req.Tenant.Key, req.UserToken)
}
