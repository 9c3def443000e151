package handoff

import (
	"context"
	"errors"
	"time"
)

// Handoff is a contact centre, as the engine hands conversations to it: a tenant's, behind a
// [Webhook], the reference server's [Desk], or a host's own. Its methods may be called from
// many goroutines at once, for different handoffs; those of one handoff are called in order.
// The centre answers through [Switchboard.Answer] (a person joined, wrote, released the
// conversation or rejected it), from any goroutine and any replica.
type Handoff interface {
	// Start asks for a person. It is called on a goroutine of the switchboard, not the turn's,
	// and may block while it retries; an error ends the handoff as failed and the assistant
	// takes the conversation back.
	Start(ctx context.Context, r *Request) error
	// Send passes on a message the customer wrote while the handoff is open.
	Send(ctx context.Context, m *Message) error
	// End tells the centre that the handoff is over for a reason of the engine's ("timeout",
	// "customer_left", "person_silent", "centre_down", "host"): the centre stops offering it.
	End(ctx context.Context, id, reason string) error
}

// Request is what a contact centre is given when a conversation is handed to it: the person
// opens on the summary, not a greeting. Summary and Transcript are under the tenant's privacy
// policy (no card number nor IBAN).
type Request struct {
	ID             string `json:"id"`
	Tenant         string `json:"tenant"`
	ConversationID string `json:"conversation_id"`
	Locale         string `json:"locale"`
	// Channel is how the customer talks: "text", "voice" or "home".
	Channel    string `json:"channel"`
	Reason     string `json:"reason"`
	Summary    string `json:"summary"`
	Transcript []Line `json:"transcript"`
}

// Line is one line of a conversation: Role is "user", "assistant" or "person".
type Line struct {
	Role string    `json:"role"`
	Text string    `json:"text"`
	At   time.Time `json:"at"`
}

// Message is a customer's message during a handoff.
type Message struct {
	ID   string    `json:"id"`
	Text string    `json:"text"`
	At   time.Time `json:"at"`
}

// The types of a contact centre's [Answer].
const (
	AgentJoined  = "agent.joined"
	AgentMessage = "agent.message"
	Released     = "handoff.released"
	Rejected     = "handoff.rejected"
)

// Answer is what a contact centre says of a handoff: Type is one of AgentJoined (Agent is the
// person's name), AgentMessage (Text), Released (Note, for the assistant, optional) and
// Rejected (Reason).
type Answer struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Agent  string `json:"-"`
	Text   string `json:"text,omitempty"`
	Note   string `json:"note,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Status is where a handoff is.
type Status string

// The statuses of a handoff, in order: queued, then connected, then released or failed.
const (
	StatusQueued    Status = "queued"
	StatusConnected Status = "connected"
	StatusReleased  Status = "released"
	StatusFailed    Status = "failed"
)

// Open reports that a person holds, or will hold, the conversation.
func (s Status) Open() bool { return s == StatusQueued || s == StatusConnected }

// Errors of the switchboard; test them with [errors.Is].
var (
	// ErrNotFound says that no handoff has the id, or that it is not the caller's.
	ErrNotFound = errors.New("handoff: no such handoff")
	// ErrEnded says that the handoff is over.
	ErrEnded = errors.New("handoff: the handoff is over")
	// ErrActive says that the conversation is with a person already.
	ErrActive = errors.New("handoff: the conversation is with a person already")
	// ErrInvalid says that an answer is malformed.
	ErrInvalid = errors.New("handoff: invalid answer")
)
