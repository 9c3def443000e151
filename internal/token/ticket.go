package token

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
)

// PurposeTicket is the purpose of the key that seals stream tickets.
const PurposeTicket = "engine stream ticket v1"

// TicketPrefix begins every stream ticket.
const TicketPrefix = "st1_"

// TicketTTL is how long a ticket stands for its caller, and MaxTicket the longest a sealed
// ticket may be: it travels in a header.
const (
	TicketTTL = 60 * time.Second
	MaxTicket = 16 << 10
)

// TicketClaims are what a stream ticket carries: who asked for it, for the socket it opens.
type TicketClaims struct {
	ID          string              `json:"j"`
	Tenant      string              `json:"t"`
	Environment string              `json:"e"`
	UserToken   string              `json:"u"`
	Session     string              `json:"s,omitempty"`
	RequestID   string              `json:"r"`
	Expiry      int64               `json:"x"` // Unix seconds
	Metadata    map[string]any      `json:"m,omitempty"`
	Forward     map[string][]string `json:"f,omitempty"`
}

// Tickets seals stream tickets: the claims are encrypted and authenticated with AES-256-GCM,
// so that the user's token they carry is readable by no one but an engine that shares the
// signing key, and a ticket changed by one bit does not open.
type Tickets struct{ aead cipher.AEAD }

// ErrTicket is the error of a ticket that does not open, ErrTicketTooLarge that of claims
// past MaxTicket once sealed.
var (
	ErrTicket         = errors.New("token: not a stream ticket of this engine")
	ErrTicketTooLarge = errors.New("token: the stream ticket is too large to travel in a header")
)

// NewTickets returns the sealer of stream tickets of signingKey.
func NewTickets(signingKey []byte) (*Tickets, error) {
	key, err := Derive(signingKey, PurposeTicket)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Tickets{aead: aead}, nil
}

// Issue seals c as a new ticket, with a new id, that expires TicketTTL after now (in whole
// seconds), and returns it with its expiry, or ErrTicketTooLarge.
func (t *Tickets) Issue(c *TicketClaims, now time.Time) (string, time.Time, error) {
	exp := now.Add(TicketTTL).Truncate(time.Second)
	c.ID, c.Expiry = uuid.NewString(), exp.Unix()
	ticket, err := t.Seal(c)
	if err == nil && len(ticket) > MaxTicket {
		err = ErrTicketTooLarge
	}
	if err != nil {
		return "", time.Time{}, err
	}
	return ticket, exp, nil
}

// Expired reports whether c has expired at now.
func (c *TicketClaims) Expired(now time.Time) bool { return !now.Before(time.Unix(c.Expiry, 0)) }

// Spent returns the key that claims c's single use in a replay store, and until when: a whole
// lifetime past its expiry, so that a replica whose clock is behind still finds it.
func (c *TicketClaims) Spent() (key string, until time.Time) {
	return "stream-ticket:" + c.ID, time.Unix(c.Expiry, 0).Add(TicketTTL)
}

// Seal returns the ticket of c: TicketPrefix and base64url of a random nonce and the sealed
// claims.
func (t *Tickets) Seal(c *TicketClaims) (string, error) {
	// Without HTML escaping: a "<" would take six bytes of the ticket for one.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return "", err
	}
	plain := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	nonce := make([]byte, t.aead.NonceSize(), t.aead.NonceSize()+len(plain)+t.aead.Overhead())
	rand.Read(nonce)
	sealed := t.aead.Seal(nonce, nonce, plain, []byte(PurposeTicket))
	return TicketPrefix + base64.RawURLEncoding.EncodeToString(sealed), nil
}

// Open returns the claims of a ticket Seal made, or ErrTicket. It does not check the expiry.
func (t *Tickets) Open(ticket string) (*TicketClaims, error) {
	rest, ok := strings.CutPrefix(ticket, TicketPrefix)
	if !ok {
		return nil, ErrTicket
	}
	sealed, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(sealed) < t.aead.NonceSize()+t.aead.Overhead() {
		return nil, ErrTicket
	}
	n := t.aead.NonceSize()
	plain, err := t.aead.Open(nil, sealed[:n], sealed[n:], []byte(PurposeTicket))
	if err != nil {
		return nil, ErrTicket
	}
	var c TicketClaims
	if json.Unmarshal(plain, &c) != nil || c.ID == "" || c.Tenant == "" || c.UserToken == "" {
		return nil, ErrTicket
	}
	return &c, nil
}
