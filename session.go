package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/convengine/engine/internal/body"
	"github.com/convengine/engine/internal/dpop"
	"github.com/convengine/engine/internal/jsonenc"
	"github.com/convengine/engine/internal/token"
)

// SessionKey is one key of the session tokens' key ring, for rotation: the first key of
// [Config.SessionKeys] signs new tokens and every key verifies the tokens that name it in their
// "kid" header until they expire.
type SessionKey struct {
	// ID is the key's "kid": 1 to 64 letters, digits or "._~-", unique in the ring.
	ID string
	// Key is an ed25519.PrivateKey (EdDSA), an *ecdsa.PrivateKey on P-256 (ES256) or a secret
	// of at least 32 random bytes as a []byte (HS256). A retired key that only verifies may be
	// given as its ed25519.PublicKey or *ecdsa.PublicKey.
	Key any
}

// Bounds and defaults of sessions.
const (
	defaultSessionLifetime = 24 * time.Hour
	maxSessionToken        = 4096
)

// initSessions sets up the session tokens and the proof checks of cfg.
func (e *Engine) initSessions(cfg *Config) error {
	var errs []error
	keys := make([]token.Key, len(cfg.SessionKeys))
	for i, k := range cfg.SessionKeys {
		keys[i] = token.Key{ID: k.ID, Key: k.Key}
	}
	tokens, err := token.NewSessions(keys, cfg.SigningKey)
	if err != nil {
		errs = append(errs, fmt.Errorf("%w: SessionKeys: %v", ErrConfig, err))
	}
	e.sessionTokens = tokens
	e.sessionTTL = cfg.SessionLifetime
	if e.sessionTTL == 0 {
		e.sessionTTL = defaultSessionLifetime
	}
	if e.sessionTTL < 0 {
		errs = append(errs, fmt.Errorf("%w: SessionLifetime cannot be negative", ErrConfig))
	}
	if err := e.initDPoP(cfg); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// SessionHandler returns the handler of POST /api/v1/create-session.
func (e *Engine) SessionHandler() http.Handler {
	return e.route(http.MethodPost, PathCreateSession, http.HandlerFunc(e.serveCreateSession))
}

func (e *Engine) serveCreateSession(w http.ResponseWriter, r *http.Request) {
	req, admission, p := e.readAdmitted(r, false, WorkSession)
	if p != nil {
		writeProblem(w, p, req.idOrEmpty())
		return
	}
	var b body.Session
	if p := decodeBody(w, r, e.maxBody, true, &b); p != nil {
		writeProblem(w, p, req.ID)
		return
	}
	res, p := e.createSession(r.Context(), req, admission, &b)
	if p != nil {
		writeProblem(w, p, req.ID)
		return
	}
	out, err := json.Marshal(res)
	if err != nil {
		writeProblem(w, newProblem(http.StatusInternalServerError, CodeInternal, "the session could not be encoded"), req.ID)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	if e.proofs.Nonces != nil {
		h.Set(HeaderDPoPNonce, e.proofs.Nonces.Issue(e.now()))
	}
	w.WriteHeader(http.StatusCreated)
	w.Write(out)
}

// createSession makes the session b asks for, stores it and signs its token.
func (e *Engine) createSession(ctx context.Context, req *request, a *Admission, b *body.Session) (*body.SessionCreated, *Problem) {
	now := e.now().UTC().Truncate(time.Second)
	s := &Session{ID: uuid.NewString(), TenantKey: req.Tenant.Key, CreatedAt: now, ExpiresAt: now.Add(e.sessionTTL),
		User: e.userOf(req)}
	// device is the key that will prove the session's actions: its passkey, its gate key, or
	// its device key; nil for a session that is not device-bound.
	var device *DeviceKey
	if len(b.PublicKey) > 0 && string(b.PublicKey) != "null" {
		key, err := dpop.ParseKey(b.PublicKey)
		if err != nil {
			return nil, keyProblem("public_key", err)
		}
		s.KeyThumbprint, s.GateKey = key.Thumbprint, jsonenc.Compact(b.PublicKey)
		device = sessionGateKey(s, key)
	}
	if len(b.GateKey) > 0 && string(b.GateKey) != "null" {
		key, err := dpop.ParseKey(b.GateKey)
		if s.KeyThumbprint == "" {
			err = errors.New("needs a public_key: a gate key belongs to a device-bound session")
		}
		if err != nil {
			return nil, keyProblem("gate_key", err)
		}
		s.GateKey = jsonenc.Compact(b.GateKey)
		device = sessionGateKey(s, key)
	}
	if len(b.GateCredential) > 0 && string(b.GateCredential) != "null" {
		var cred json.RawMessage
		var err error
		switch {
		case s.KeyThumbprint == "":
			err = errors.New("needs a public_key: a gate credential belongs to a device-bound session")
		case len(b.GateKey) > 0 && string(b.GateKey) != "null":
			err = errors.New("comes with a gate_key: send one of them")
		default:
			cred, err = e.registerPasskey(ctx, b.GateCredential, s.KeyThumbprint)
		}
		if err == nil {
			// The passkey is the gate: the device key, which signs every request, no longer
			// proves actions.
			s.GateKey, s.GateCredential = nil, cred
			device, err = e.passkeyDevice(cred)
		}
		if err != nil {
			return nil, invalidField("gate_credential", err.Error())
		}
	}
	var p *Problem
	if p == nil && req.Tenant.RequireActionProof && device != nil {
		// The bank's word first: a key it refuses binds no credential id. Each execute asks
		// again.
		p = e.checkEnrolled(ctx, req, device)
	}
	if p == nil && device != nil && device.Kind == DeviceKeyPasskey {
		p = e.bindPasskey(ctx, req, s, device)
	}
	if p != nil {
		return nil, p
	}
	var bad *body.FieldError
	if s.Metadata, bad = b.CheckMetadata(); bad != nil {
		return nil, fieldProblem(bad)
	}

	if p := a.takeSession(ctx); p != nil {
		return nil, p
	}
	claims := &token.SessionClaims{SID: s.ID, TID: s.TenantKey, IAT: now.Unix(), EXP: s.ExpiresAt.Unix()}
	if s.KeyThumbprint != "" {
		claims.Cnf = &token.Cnf{JKT: s.KeyThumbprint}
	}
	sessionToken, err := e.sessionTokens.Sign(claims)
	if err != nil {
		e.log.ErrorContext(ctx, "signing a session token failed", "requestId", req.ID, "err", err)
		return nil, newProblem(http.StatusInternalServerError, CodeInternal, "the session could not be created")
	}
	if err := e.sessions.PutSession(ctx, s); errors.Is(err, ErrStoreFull) {
		return nil, e.overloaded(ctx, BoundSessions, req, "the engine holds as many sessions as it can; try again later")
	} else if err != nil {
		e.log.ErrorContext(ctx, "storing a session failed", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		return nil, newProblem(http.StatusServiceUnavailable, CodeStoreUnavailable, "the session could not be stored; try again")
	}
	e.startWarmUp(ctx, req)
	e.log.InfoContext(ctx, "session created", "requestId", req.ID, "tenant", req.Tenant.Key,
		"env", req.Environment.Name, "sessionId", s.ID, "bound", s.KeyThumbprint != "")

	theme := req.Tenant.Theme
	if len(theme) == 0 {
		theme = json.RawMessage(`{}`)
	}
	return &body.SessionCreated{SessionID: s.ID, CreatedAt: now.Format(time.RFC3339), SessionToken: sessionToken,
		ExpiresAt: s.ExpiresAt.Format(time.RFC3339), Theme: theme}, nil
}

// keyProblem is the problem of a public key of the body that does not parse.
func keyProblem(field string, err error) *Problem {
	p := newProblem(http.StatusBadRequest, CodeInvalidPublicKey, field+" "+err.Error())
	p.Field = field
	return p
}
