package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/convengine/engine/internal/token"
)

// PathStreamTicket is where a client that cannot set the voice socket's headers (a browser)
// gets a ticket to open it with.
const PathStreamTicket = "/engine/stream-ticket"

// Stream tickets: how long one opens a socket, how long it may be, and the subprotocols a
// browser offers with it.
const (
	ticketTTL          = 60 * time.Second
	maxTicketLen       = 16 << 10
	maxSubprotocols    = 16
	SubprotocolEngine  = "engine.v1"
	subprotocolTicket  = "ticket."
	ticketClaimPurpose = "stream-ticket:"
)

// ticketResponse is the 201 body of the stream-ticket endpoint.
type ticketResponse struct {
	Ticket    string `json:"ticket"`
	ExpiresAt string `json:"expires_at"`
}

// StreamTicketHandler returns the handler of POST /engine/stream-ticket: a single-use ticket,
// valid for 60 seconds, that opens the voice socket as the request's tenant, user,
// environment and session (docs/voice.md).
func (e *Engine) StreamTicketHandler() http.Handler {
	return e.route(http.MethodPost, PathStreamTicket, http.HandlerFunc(e.serveStreamTicket))
}

func (e *Engine) serveStreamTicket(w http.ResponseWriter, r *http.Request) {
	req, p := e.readHeaders(r)
	if p == nil {
		var body struct{}
		p = decodeBody(w, r, e.maxBody, true, &body)
	}
	if p != nil {
		writeProblem(w, p, req.idOrEmpty())
		return
	}
	exp := e.now().Add(ticketTTL).Truncate(time.Second)
	c := &token.TicketClaims{ID: uuid.NewString(), Tenant: req.Tenant.Key, Environment: req.Environment.Name,
		UserToken: req.UserToken.Reveal(), Session: req.sessionID(), RequestID: req.ID, Expiry: exp.Unix(), Forward: req.Forward,
		Metadata: req.Metadata}
	ticket, err := e.tickets.Seal(c)
	if err == nil && len(ticket) > maxTicketLen {
		// What the socket must carry does not fit in a header a proxy passes.
		writeProblem(w, newProblem(http.StatusRequestHeaderFieldsTooLarge, CodeHeadersTooLarge,
			"the user token, client metadata and forwarded headers are too large to travel in a stream ticket; open the socket with headers"), req.ID)
		return
	}
	if err != nil {
		e.log.ErrorContext(r.Context(), "minting a stream ticket failed", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		writeProblem(w, newProblem(http.StatusInternalServerError, CodeInternal, "the ticket could not be made"), req.ID)
		return
	}
	out, _ := json.Marshal(ticketResponse{Ticket: ticket, ExpiresAt: exp.UTC().Format(time.RFC3339)})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusCreated)
	w.Write(out)
	e.log.InfoContext(r.Context(), "stream ticket", "requestId", req.ID, "tenant", req.Tenant.Key, "env", req.Environment.Name)
}

// offeredTicket reads the subprotocols a socket's upgrade offers: the ticket, if one is
// offered with the engine's subprotocol, or a problem for a list no client sends, or for the
// engine's subprotocol offered with neither a ticket nor the engine's headers.
func offeredTicket(r *http.Request) (ticket string, offered bool, p *Problem) {
	var protos []string
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for part := range strings.SplitSeq(v, ",") {
			if len(protos) == maxSubprotocols {
				return "", true, ticketProblem(CodeInvalidStreamTicket, "the upgrade offers too many subprotocols")
			}
			protos = append(protos, strings.TrimSpace(part))
		}
	}
	engine, tickets := false, 0
	for _, proto := range protos {
		switch {
		case proto == SubprotocolEngine:
			engine = true
		case strings.HasPrefix(proto, subprotocolTicket):
			if tickets++; tickets > 1 {
				return "", true, ticketProblem(CodeInvalidStreamTicket, "the upgrade offers more than one ticket")
			}
			ticket = proto[len(subprotocolTicket):]
		}
	}
	switch {
	case tickets == 0 && engine && !identified(r.Header):
		// A browser's socket whose ticket is missing: say so, rather than name a header a
		// browser cannot send.
		return "", true, ticketProblem(CodeInvalidStreamTicket, "the upgrade offers "+SubprotocolEngine+" with no ticket and none of the engine's headers: offer a ticket."+subprotocolTicket+"<ticket> subprotocol from POST "+PathStreamTicket)
	case tickets == 0:
		return "", false, nil
	case !engine:
		return "", true, ticketProblem(CodeInvalidStreamTicket, "a ticket is offered with the subprotocol "+SubprotocolEngine)
	case len(ticket) > maxTicketLen || !ticketChars(ticket):
		return "", true, ticketProblem(CodeInvalidStreamTicket, "the ticket is malformed")
	}
	return ticket, true, nil
}

// identified reports whether h carries any of the headers that identify a request.
func identified(h http.Header) bool {
	return len(h.Values(HeaderEngineKey)) > 0 || len(h.Values(HeaderUserToken)) > 0 || len(h.Values(HeaderRequestID)) > 0
}

// ticketChars reports whether s holds only what a ticket is made of.
func ticketChars(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

func ticketProblem(code, detail string) *Problem {
	return newProblem(http.StatusUnauthorized, code, detail)
}

// openTicket opens a ticket: the request it stands for, as its headers would have made it.
// The ticket is not spent yet: spendTicket does, once the socket can be opened, so that a
// refusal that says to try again (shutting down, too many sockets, a store that did not
// answer) leaves it usable.
func (e *Engine) openTicket(r *http.Request, ticket string) (*request, *token.TicketClaims, *Problem) {
	ctx := r.Context()
	c, err := e.tickets.Open(ticket)
	if err != nil {
		return nil, nil, ticketProblem(CodeInvalidStreamTicket, "the ticket is not one of this engine's")
	}
	req := &request{ID: c.RequestID}
	for _, key := range r.Header.Values(HeaderEngineKey) {
		if key != c.Tenant {
			return req, nil, ticketProblem(CodeStreamTicketWrongTenant, "the ticket belongs to another assistant")
		}
	}
	if !e.now().Before(time.Unix(c.Expiry, 0)) {
		return req, nil, ticketProblem(CodeStreamTicketExpired, "the ticket expired; get a new one")
	}
	if p := e.identify(ctx, req, c.Tenant, c.Environment, c.UserToken); p != nil {
		return req, nil, p
	}
	if c.Session != "" {
		s, p := e.inProcessSession(ctx, req, c.Session)
		if p != nil {
			return req, nil, p
		}
		req.Session = s
	}
	req.Metadata = c.Metadata
	req.Forward = ForwardedHeaders(c.Forward)
	return req, c, nil
}

// spendTicket spends an opened ticket, once across every replica that shares the replay
// store, then counts the socket against the user's rate limits: after the spending, so that a
// replayed ticket costs its user nothing.
func (e *Engine) spendTicket(ctx context.Context, req *request, c *token.TicketClaims) *Problem {
	// Kept a whole lifetime past the expiry: a replica whose clock is behind still finds it.
	fresh, err := e.replay.Claim(ctx, ticketClaimPurpose+c.ID, time.Unix(c.Expiry, 0).Add(ticketTTL))
	switch {
	case err != nil:
		e.log.ErrorContext(ctx, "replay store failed", "requestId", req.ID, "err", err)
		return newProblem(http.StatusServiceUnavailable, CodeStoreUnavailable, "the ticket could not be checked; try again")
	case !fresh:
		return ticketProblem(CodeStreamTicketReused, "the ticket was used already; get a new one")
	}
	if p := e.rateLimit(ctx, req); p != nil {
		p.Detail += " (with a new ticket: this one is spent)"
		return p
	}
	return nil
}
