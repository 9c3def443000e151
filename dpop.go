package engine

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/convengine/engine/internal/dpop"
	"github.com/convengine/engine/internal/headers"
	"github.com/convengine/engine/internal/token"
)

// DPoPOptions tune the checks of the DPoP proofs (RFC 9449) that device-bound sessions send
// with every request. Zero fields take the defaults shown.
type DPoPOptions struct {
	// MaxAge is how far in the past a proof's iat may lie (default 60s). It is also how long a
	// proof's jti is remembered.
	MaxAge time.Duration
	// MaxFuture is how far ahead of the engine's clock a proof's iat may lie (default 5s).
	MaxFuture time.Duration
	// RequireNonce makes every proof carry a nonce the engine issued (RFC 9449 section 9). A
	// proof without a valid one is answered 401 use_dpop_nonce with a fresh nonce in the
	// DPoP-Nonce header; create-session answers carry one too.
	RequireNonce bool
	// NonceLifetime is how long a nonce is accepted (default 5m): nonces are issued per
	// period of this length and accepted in that period and the next.
	NonceLifetime time.Duration
}

const (
	defaultProofMaxAge    = 60 * time.Second
	defaultProofMaxFuture = 5 * time.Second
	defaultNonceLifetime  = 5 * time.Minute
)

// initDPoP sets up the proof checks of cfg: the public URL proofs name, the time bounds, and
// the nonces when they are required.
func (e *Engine) initDPoP(cfg *Config) error {
	var errs []error
	var opts DPoPOptions
	if cfg.DPoP != nil {
		opts = *cfg.DPoP
	}
	publicURL, err := dpop.ParsePublicURL(cfg.PublicURL)
	if err != nil {
		errs = append(errs, fmt.Errorf("%w: PublicURL %v", ErrConfig, err))
	}
	if opts.MaxAge < 0 || opts.MaxFuture < 0 || opts.NonceLifetime < 0 {
		errs = append(errs, fmt.Errorf("%w: the DPoP durations cannot be negative", ErrConfig))
	}
	e.proofs = dpop.Verifier{PublicURL: publicURL, MaxAge: cmp.Or(opts.MaxAge, defaultProofMaxAge),
		MaxFuture: cmp.Or(opts.MaxFuture, defaultProofMaxFuture)}
	if opts.RequireNonce && len(cfg.SigningKey) > 0 {
		key, err := token.Derive(cfg.SigningKey, token.PurposeNonce)
		if err != nil {
			errs = append(errs, err)
		}
		e.proofs.Nonces = dpop.NewNonces(key, cmp.Or(opts.NonceLifetime, defaultNonceLifetime))
	}
	return errors.Join(errs...)
}

// claimProof records the proof's jti as used, for as long as its iat is accepted, across every
// replica that shares the ReplayStore: a proof is good for one request.
func (e *Engine) claimProof(r *http.Request, t *Tenant, requestID string, proof *dpop.Proof, now time.Time) *Problem {
	key, until := e.proofs.Replay(proof)
	fresh, err := e.replay.Claim(r.Context(), key, until)
	switch {
	case err != nil:
		e.log.ErrorContext(r.Context(), "recording a DPoP proof failed", "requestId", requestID, "tenant", t.Key, "err", err)
		return newProblem(http.StatusServiceUnavailable, CodeStoreUnavailable, "the proof could not be checked; try again")
	case !fresh:
		return e.proofProblem(&dpop.Error{Reason: "the proof's jti was already used; sign a new proof for every request"}, now)
	}
	return nil
}

// dpopChallenge is the WWW-Authenticate value of a refused proof.
const dpopChallenge = `DPoP error="invalid_dpop_proof", algs="ES256"`

// proofProblem turns a refused proof into its 401 problem.
func (e *Engine) proofProblem(err error, now time.Time) *Problem {
	var pe *dpop.Error
	if !errors.As(err, &pe) {
		pe = &dpop.Error{Reason: "the proof is not valid"}
	}
	if pe.NeedNonce && e.proofs.Nonces != nil {
		p := newProblem(http.StatusUnauthorized, CodeUseDPoPNonce, pe.Reason)
		p.header = http.Header{
			"Www-Authenticate": {`DPoP error="use_dpop_nonce", algs="ES256"`},
			"Dpop-Nonce":       {e.proofs.Nonces.Issue(now)},
		}
		return p
	}
	p := newProblem(http.StatusUnauthorized, CodeInvalidDPoPProof, pe.Reason)
	p.header = http.Header{"Www-Authenticate": {dpopChallenge}}
	return p
}

// tokenProblem answers a session token that is missing, malformed, expired, forged or
// another tenant's. scheme is the authentication scheme the client should use.
func tokenProblem(scheme, detail string) *Problem {
	p := newProblem(http.StatusUnauthorized, CodeInvalidSession, detail)
	p.header = http.Header{"Www-Authenticate": {scheme + ` error="invalid_token"`}}
	return p
}

// verifySession applies the session rules of docs/sessions.md to r: an unbound session's token as Bearer, a bound one's as
// DPoP with a proof, each of t's tenant, current and known to the SessionStore. It returns the
// session, or nil when the request carries none and t allows that. The proof's jti is recorded
// as used only once everything else passed, so that a refused request never burns a proof.
func (e *Engine) verifySession(r *http.Request, t *Tenant, requestID string) (*Session, *Problem) {
	auths := r.Header.Values("Authorization")
	proofs := r.Header.Values(HeaderDPoP)
	if len(auths) == 0 {
		switch {
		case len(proofs) > 0:
			return nil, tokenProblem("DPoP", "a DPoP proof came without a session token; send Authorization: DPoP <session_token>")
		case t.RequireSession:
			return nil, tokenProblem("Bearer", "this assistant requires a session; create one first")
		}
		return nil, nil
	}
	scheme, presented, ok, bad := headers.SessionAuth(auths, maxSessionToken)
	switch {
	case bad != "":
		return nil, tokenProblem("Bearer", bad)
	case !ok:
		return nil, tokenProblem(scheme, "the Authorization header carries no session token, or one too long to be valid")
	}
	now := e.now()
	claims, reason := e.sessionTokens.Verify(presented, now)
	if claims == nil {
		return nil, tokenProblem(scheme, reason+"; create a new session")
	}
	if claims.TID != t.Key {
		return nil, tokenProblem(scheme, "the session token belongs to another assistant; create a session with this X-Engine-Key")
	}
	jkt := ""
	if claims.Cnf != nil {
		jkt = claims.Cnf.JKT
	}
	var proof *dpop.Proof
	switch {
	case scheme == "Bearer" && jkt != "":
		return nil, tokenProblem("DPoP", "the session is bound to a device key: send Authorization: DPoP <session_token> with a DPoP proof")
	case scheme == "DPoP" && jkt == "":
		return nil, tokenProblem("Bearer", "the session is not bound to a key: send Authorization: Bearer <session_token>")
	case scheme == "DPoP":
		var err error
		if proof, err = e.proofs.Request(r, proofs, presented, jkt, now); err != nil {
			return nil, e.proofProblem(err, now)
		}
	}

	s, err := e.sessions.Session(r.Context(), claims.SID)
	switch {
	case errors.Is(err, ErrSessionNotFound):
		return nil, tokenProblem(scheme, "the session is unknown or has ended; create a new session")
	case err != nil:
		e.log.ErrorContext(r.Context(), "looking up a session failed", "requestId", requestID, "tenant", t.Key, "err", err)
		return nil, newProblem(http.StatusServiceUnavailable, CodeStoreUnavailable, "the session could not be looked up; try again")
	case s.TenantKey != claims.TID || s.KeyThumbprint != jkt:
		return nil, tokenProblem(scheme, "the session token does not match its session; create a new session")
	}

	if proof != nil {
		if p := e.claimProof(r, t, requestID, proof, now); p != nil {
			return nil, p
		}
	}
	return s, nil
}
