package client

import (
	"context"
	"time"
)

// PathStreamTicket is the engine's stream-ticket endpoint.
const PathStreamTicket = "/engine/stream-ticket"

// StreamTicket is a single-use ticket that opens the voice socket without headers, for a
// browser: the page offers the subprotocols [SubprotocolEngine] and "ticket." + Ticket.
type StreamTicket struct {
	Ticket    string    `json:"ticket"`
	ExpiresAt time.Time `json:"expires_at"`
}

// SubprotocolEngine is the voice socket's subprotocol, offered with a ticket.
const SubprotocolEngine = "engine.v1"

// Protocols returns the subprotocols that open the voice socket with t.
func (t *StreamTicket) Protocols() []string { return []string{SubprotocolEngine, "ticket." + t.Ticket} }

// String returns a description without the ticket itself.
func (t *StreamTicket) String() string {
	return "stream ticket until " + t.ExpiresAt.Format(time.RFC3339)
}

// StreamTicket asks for a ticket that opens the voice socket once, within a minute, as this
// client's user, environment and session: a host's backend mints it for its web page, which
// cannot set the socket's headers.
func (c *Client) StreamTicket(ctx context.Context) (*StreamTicket, error) {
	resp, err := c.postJSON(ctx, PathStreamTicket, struct{}{}, "application/json")
	if err != nil {
		return nil, err
	}
	var t StreamTicket
	if err := decodeJSON(resp, 64<<10, &t); err != nil {
		return nil, err
	}
	return &t, nil
}
