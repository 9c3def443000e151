package engine

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/convengine/engine/internal/token"
)

// What a transport (package voice, package agui, a host's telephony bridge) uses besides the
// in-process API and the admission ([Engine.Admit], [Engine.Overloaded]): the package's
// overview says what one is.

// Route wraps a transport's handler as the engine's own are wrapped: the response carries
// Engine-Version and the request's valid X-Request-ID, the Observer's Request hook sees it
// under path, a panic is logged and answered 500 internal, and a method other than method (when
// not "") is answered 405 with Allow.
func (e *Engine) Route(method, path string, h http.Handler) http.Handler {
	return e.route(method, path, h)
}

// OnShutdown registers what [Engine.Shutdown] calls: a transport's farewell to its connections
// (package voice closes its sockets). Shutdown calls every function registered, at once, and
// waits for them; ctx ends when the caller of Shutdown stops waiting. A function registered
// once Shutdown has begun is called at once.
func (e *Engine) OnShutdown(f func(ctx context.Context) error) { e.shutdown.Register(f) }

// Logger is the engine's logger (Config.Logger), for a transport to log as the engine does:
// never a token, a proof or what a user said.
func (e *Engine) Logger() *slog.Logger { return e.log }

// Observer is what watches the engine (Config.Observer), for a transport's own events (the
// voice socket's Socket hook).
func (e *Engine) Observer() Observer { return e.obs }

// DecodeBody reads the JSON body of r into v as the engine's endpoints read theirs: labelled
// application/json (415 otherwise), at most Config.MaxBody bytes (413), one JSON object whose
// members of the wrong type are named in the problem's Field; an empty body is "{}" when
// emptyOK. The error is a *[Problem].
func (e *Engine) DecodeBody(w http.ResponseWriter, r *http.Request, emptyOK bool, v any) error {
	if p := decodeBody(w, r, e.maxBody, emptyOK, v); p != nil {
		return p
	}
	return nil
}

// DecodeJSON decodes one JSON object of data into v as the engine reads its bodies and
// messages: numbers as json.Number in an any, nothing after the object, and a member of the
// wrong type named in the problem's Field. The error is a *[Problem], invalid_request.
func DecodeJSON(data []byte, v any) error {
	if p := unmarshalStrictly(data, v); p != nil {
		return p
	}
	return nil
}

// IssueTicket seals c (its tenant, environment, user, session, metadata and forwarded headers)
// into a single-use ticket that stands for it for 60 seconds, signed with the engine's key so
// that every replica opens it, and returns it with its expiry. Rate limits are not counted. A
// caller too large to travel in a header (past 16 KiB sealed) is 431 headers_too_large.
func (e *Engine) IssueTicket(ctx context.Context, c *Caller) (string, time.Time, error) {
	req, p := e.callerRequest(ctx, c, true)
	if p != nil {
		return "", time.Time{}, p.withID(req)
	}
	ticket, exp, err := e.tickets.Issue(&token.TicketClaims{Tenant: req.Tenant.Key, Environment: req.Environment.Name,
		UserToken: req.UserToken.Reveal(), Session: req.sessionID(), RequestID: req.ID, Forward: req.Forward, Metadata: req.Metadata}, e.now())
	switch {
	case errors.Is(err, token.ErrTicketTooLarge):
		return "", exp, newProblem(http.StatusRequestHeaderFieldsTooLarge, CodeHeadersTooLarge,
			"the user token, client metadata and forwarded headers are too large to travel in a stream ticket; open the socket with headers").withID(req)
	case err != nil:
		e.log.ErrorContext(ctx, "minting a stream ticket failed", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		return "", exp, newProblem(http.StatusInternalServerError, CodeInternal, "the ticket could not be made").withID(req)
	}
	return ticket, exp, nil
}

// OpenTicket opens a ticket of [Engine.IssueTicket] offered with r: the caller it stands for,
// checked as the headers would be (an X-Engine-Key that r carries must name the ticket's
// tenant). The ticket is not spent yet: spend spends it, once across every replica sharing
// the ReplayStore. Give spend to the admission of what the ticket opens ([Work].Claim): it
// then runs once the work holds its slots and before the rate limits are counted, so that a
// refusal that says to try again (shutting down, too many sockets) leaves the ticket usable
// and a replayed ticket costs its user nothing. Errors are *[Problem]s:
// invalid_stream_ticket, stream_ticket_wrong_tenant, stream_ticket_expired,
// stream_ticket_reused, and those of the caller's check.
func (e *Engine) OpenTicket(r *http.Request, ticket string) (c *Caller, spend func(context.Context) error, err error) {
	ctx := r.Context()
	claims, err := e.tickets.Open(ticket)
	if err != nil {
		return nil, nil, ticketProblem(CodeInvalidStreamTicket, "the ticket is not one of this engine's", "")
	}
	for _, key := range r.Header.Values(HeaderEngineKey) {
		if key != claims.Tenant {
			return nil, nil, ticketProblem(CodeStreamTicketWrongTenant, "the ticket belongs to another assistant", claims.RequestID)
		}
	}
	if claims.Expired(e.now()) {
		return nil, nil, ticketProblem(CodeStreamTicketExpired, "the ticket expired; get a new one", claims.RequestID)
	}
	c = &Caller{EngineKey: claims.Tenant, UserToken: claims.UserToken, Environment: claims.Environment,
		RequestID: claims.RequestID, SessionID: claims.Session, Metadata: claims.Metadata, Forward: claims.Forward}
	req, p := e.callerRequest(ctx, c, true)
	if p != nil {
		return nil, nil, p.withID(req)
	}
	spend = func(ctx context.Context) error {
		key, until := claims.Spent()
		fresh, err := e.replay.Claim(ctx, key, until)
		switch {
		case err != nil:
			e.log.ErrorContext(ctx, "replay store failed", "requestId", req.ID, "err", err)
			return ticketProblem(CodeStoreUnavailable, "the ticket could not be checked; try again", req.ID)
		case !fresh:
			return ticketProblem(CodeStreamTicketReused, "the ticket was used already; get a new one", req.ID)
		}
		return nil
	}
	return c, spend, nil
}

func ticketProblem(code, detail, requestID string) *Problem {
	status := http.StatusUnauthorized
	if code == CodeStoreUnavailable {
		status = http.StatusServiceUnavailable
	}
	p := newProblem(status, code, detail)
	p.RequestID = requestID
	return p
}

var errNilInput = errors.New("engine: the turn input is nil")

// Check reports what of in a turn would refuse before it runs, without running one: the
// invalid_request problems of [Engine.Turn] for its fields (the field named as the turn's body
// names it, such as "context.sessionId"). A transport that takes a turn's context once for many
// turns (a voice socket's first message) checks it when it comes.
func (in *TurnInput) Check() error {
	if in == nil {
		return errNilInput
	}
	b, p := in.body()
	if p != nil {
		return p
	}
	// What the turn hears stands for a transcript here: only the fields are checked.
	if _, bad := b.Check(true); bad != nil {
		return fieldProblem(bad)
	}
	return nil
}
