package engine

import (
	"errors"
	"net/http"
)

// CallerFromRequest reads who r comes from as the protocol's handlers do, for a host that
// serves its own transport over HTTP and runs turns in-process: the request id, the engine
// key and the user's token (X-Request-ID, X-Engine-Key, X-Token, or [Config].Identify), the
// session and its DPoP proof (Authorization, DPoP), X-Client-Metadata and the forwarded
// headers, in the order and with the problems of docs/protocol.md. Rate limits are not
// counted here: the in-process call counts them. The error is a *[Problem], which
// [WriteProblem] answers.
func (e *Engine) CallerFromRequest(r *http.Request) (*Caller, error) {
	req, p := e.readHeadersWith(r, true)
	if p != nil {
		p.RequestID = req.idOrEmpty()
		return nil, p
	}
	return &Caller{EngineKey: req.Tenant.Key, UserToken: string(req.UserToken), Environment: req.Environment.Name,
		RequestID: req.ID, SessionID: req.sessionID(), Metadata: req.Metadata, Forward: http.Header(req.Forward)}, nil
}

// WriteProblem answers err as application/problem+json: a *[Problem] (or an error wrapping
// one) with its status, headers and request id; any other error as 500 internal, without its
// text, which may hold what a client must not read.
func WriteProblem(w http.ResponseWriter, err error) {
	var p *Problem
	if !errors.As(err, &p) {
		p = newProblem(http.StatusInternalServerError, CodeInternal, "the engine failed; the failure is logged")
	}
	writeProblem(w, p, p.RequestID)
}
