package voice

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/convengine/engine"
)

// Stream tickets: how long one may be, and the subprotocols a browser offers with it.
const (
	maxTicketLen    = 16 << 10
	maxSubprotocols = 16
	// SubprotocolEngine is the socket's subprotocol, which a browser offers with its ticket.
	SubprotocolEngine = "engine.v1"
	subprotocolTicket = "ticket."
)

// ticketResponse is the 201 body of the stream-ticket endpoint.
type ticketResponse struct {
	Ticket    string `json:"ticket"`
	ExpiresAt string `json:"expires_at"`
}

// TicketHandler returns the handler of POST /engine/stream-ticket: a single-use ticket, valid
// for 60 seconds, that opens the voice socket as the request's tenant, user, environment and
// session (docs/voice.md).
func (s *Server) TicketHandler() http.Handler {
	return s.e.Route(http.MethodPost, engine.PathStreamTicket, http.HandlerFunc(s.serveTicket))
}

func (s *Server) serveTicket(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	c, err := s.e.CallerFromRequest(r)
	if err == nil {
		_, err = s.e.Admit(ctx, c, engine.Work{Kind: engine.WorkRequest})
	}
	if err == nil {
		var body struct{}
		if err = s.e.DecodeBody(w, r, true, &body); err != nil {
			err.(*engine.Problem).RequestID = c.RequestID
		}
	}
	var (
		ticket string
		exp    time.Time
	)
	if err == nil {
		ticket, exp, err = s.e.IssueTicket(ctx, c)
	}
	if err != nil {
		engine.WriteProblem(w, err)
		return
	}
	out, _ := json.Marshal(ticketResponse{Ticket: ticket, ExpiresAt: exp.UTC().Format(time.RFC3339)})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusCreated)
	w.Write(out)
	s.e.Logger().InfoContext(ctx, "stream ticket", "requestId", c.RequestID, "tenant", c.EngineKey, "env", c.Environment)
}

// offeredTicket reads the subprotocols a socket's upgrade offers: the ticket, if one is
// offered with the engine's subprotocol, or a problem for a list no client sends, or for the
// engine's subprotocol offered with neither a ticket nor the engine's headers.
func offeredTicket(r *http.Request) (ticket string, offered bool, err error) {
	var protos []string
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for part := range strings.SplitSeq(v, ",") {
			if len(protos) == maxSubprotocols {
				return "", true, ticketProblem(engine.CodeInvalidStreamTicket, "the upgrade offers too many subprotocols")
			}
			protos = append(protos, strings.TrimSpace(part))
		}
	}
	subprotocol, tickets := false, 0
	for _, proto := range protos {
		switch {
		case proto == SubprotocolEngine:
			subprotocol = true
		case strings.HasPrefix(proto, subprotocolTicket):
			if tickets++; tickets > 1 {
				return "", true, ticketProblem(engine.CodeInvalidStreamTicket, "the upgrade offers more than one ticket")
			}
			ticket = proto[len(subprotocolTicket):]
		}
	}
	switch {
	case tickets == 0 && subprotocol && !identified(r.Header):
		// A browser's socket whose ticket is missing: say so, rather than name a header a
		// browser cannot send.
		return "", true, ticketProblem(engine.CodeInvalidStreamTicket, "the upgrade offers "+SubprotocolEngine+" with no ticket and none of the engine's headers: offer a ticket."+subprotocolTicket+"<ticket> subprotocol from POST "+engine.PathStreamTicket)
	case tickets == 0:
		return "", false, nil
	case !subprotocol:
		return "", true, ticketProblem(engine.CodeInvalidStreamTicket, "a ticket is offered with the subprotocol "+SubprotocolEngine)
	case len(ticket) > maxTicketLen || !ticketChars(ticket):
		return "", true, ticketProblem(engine.CodeInvalidStreamTicket, "the ticket is malformed")
	}
	return ticket, true, nil
}

// identified reports whether h carries any of the headers that identify a request.
func identified(h http.Header) bool {
	return len(h.Values(engine.HeaderEngineKey)) > 0 || len(h.Values(engine.HeaderUserToken)) > 0 || len(h.Values(engine.HeaderRequestID)) > 0
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

func ticketProblem(code, detail string) *engine.Problem {
	return engine.NewProblem(http.StatusUnauthorized, code, detail)
}
