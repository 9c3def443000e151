package client

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// SessionOptions say what session [Client.CreateSession] creates. Nil means an unbound session
// without metadata.
type SessionOptions struct {
	// Bind binds the session to a device key: the client generates an ES256 key on first use,
	// keeps it in memory for its whole life and signs a DPoP proof for every request.
	Bind bool
	// Key is the device key to bind the session to instead of a generated one, such as a key
	// of a platform key store. Its public key must be ECDSA on P-256. Setting it implies Bind.
	Key crypto.Signer
	// Gate signs the device proofs of the session's actions (auth.proof): a P-256 key the app
	// holds behind the device's biometric gate, such as a Secure Enclave key whose access
	// control requires biometry, so that only the user's face or finger releases a proof. It
	// needs a bound session. Without it, a bound session's device key signs the proofs.
	Gate crypto.Signer
	// Metadata is stored with the session: a JSON object of at most 8 KiB.
	Metadata map[string]any
}

// Session is a session the engine created. Its token is kept inside: it never prints.
type Session struct {
	ID        string
	CreatedAt time.Time
	ExpiresAt time.Time
	// Theme is the tenant's theme (colours, logo URL, display name), to dress the app before
	// the first turn.
	Theme json.RawMessage

	token string
	key   *deviceKey
	gate  *deviceKey // signs action proofs; nil for an unbound session
}

// Bound reports whether the session is bound to a device key.
func (s *Session) Bound() bool { return s.key != nil }

// Thumbprint returns the RFC 7638 thumbprint of the session's device key, "" when unbound.
func (s *Session) Thumbprint() string {
	if s.key == nil {
		return ""
	}
	return s.key.thumbprint
}

// String describes the session without its token.
func (s *Session) String() string {
	return fmt.Sprintf("session %s (bound %v, expires %s)", s.ID, s.Bound(), s.ExpiresAt.Format(time.RFC3339))
}

// GoString describes the session without its token.
func (s *Session) GoString() string { return s.String() }

// sessionBody is the create-session request.
type sessionBody struct {
	PublicKey json.RawMessage `json:"public_key,omitempty"`
	GateKey   json.RawMessage `json:"gate_key,omitempty"`
	Metadata  map[string]any  `json:"metadata,omitempty"`
}

type sessionAnswer struct {
	SessionID    string          `json:"session_id"`
	CreatedAt    time.Time       `json:"created_at"`
	SessionToken string          `json:"session_token"`
	ExpiresAt    time.Time       `json:"expires_at"`
	Theme        json.RawMessage `json:"theme"`
}

// CreateSession creates a session and makes it the client's: later requests carry it, and it
// is re-created with the same options when the engine no longer accepts it. Call it at launch,
// so that the engine warms the tenant up before the first turn.
func (c *Client) CreateSession(ctx context.Context, opts *SessionOptions) (*Session, error) {
	c.renewMu.Lock()
	defer c.renewMu.Unlock()
	return c.createSession(ctx, opts)
}

// renewSession re-creates the session that failed, unless another request did already.
func (c *Client) renewSession(ctx context.Context, failed *Session) (*Session, error) {
	c.renewMu.Lock()
	defer c.renewMu.Unlock()
	c.mu.Lock()
	cur, opts := c.session, c.sessionOpts
	c.mu.Unlock()
	if cur != failed {
		return cur, nil
	}
	return c.createSession(ctx, opts)
}

// createSession runs create-session; the caller holds renewMu.
func (c *Client) createSession(ctx context.Context, opts *SessionOptions) (*Session, error) {
	if opts == nil {
		opts = &SessionOptions{}
	}
	var key *deviceKey
	switch {
	case opts.Key != nil:
		k, err := newDeviceKey(opts.Key)
		if err != nil {
			return nil, err
		}
		key = k
	case opts.Bind:
		c.mu.Lock()
		key = c.device
		c.mu.Unlock()
		if key == nil {
			k, err := generateDeviceKey()
			if err != nil {
				return nil, fmt.Errorf("client: generating the device key: %w", err)
			}
			key = k
			c.mu.Lock()
			c.device = k
			c.mu.Unlock()
		}
	}
	body := sessionBody{Metadata: opts.Metadata}
	gate := key
	if key != nil {
		body.PublicKey = key.jwk
	}
	if opts.Gate != nil {
		g, err := newDeviceKey(opts.Gate)
		switch {
		case err != nil:
			return nil, fmt.Errorf("client: the gate key: %w", err)
		case key == nil:
			return nil, errors.New("client: a gate key needs a bound session (SessionOptions.Bind or Key)")
		}
		gate, body.GateKey = g, g.jwk
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("client: encoding the session: %w", err)
	}
	resp, err := c.do(ctx, call{method: http.MethodPost, path: PathCreateSession, body: data, noSession: true})
	if err != nil {
		return nil, err
	}
	var a sessionAnswer
	if err := decodeJSON(resp, 64<<10, &a); err != nil {
		return nil, err
	}
	if a.SessionID == "" || a.SessionToken == "" {
		return nil, fmt.Errorf("client: the engine's session has no id or token")
	}
	s := &Session{ID: a.SessionID, CreatedAt: a.CreatedAt, ExpiresAt: a.ExpiresAt, Theme: a.Theme,
		token: a.SessionToken, key: key, gate: gate}
	c.mu.Lock()
	c.session, c.sessionOpts = s, opts
	c.mu.Unlock()
	return s, nil
}
