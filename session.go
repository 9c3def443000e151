package engine

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"
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

// Problem codes of sessions.
const (
	// CodeInvalidPublicKey answers a create-session public_key that is not a public EC P-256 JWK.
	CodeInvalidPublicKey = "invalid_public_key"
)

// Bounds and defaults of sessions.
const (
	defaultSessionLifetime = 24 * time.Hour
	maxSessionMetadata     = 8 << 10
	maxSessionToken        = 4096
	defaultProofMaxAge     = 60 * time.Second
	defaultProofMaxFuture  = 5 * time.Second
	defaultNonceLifetime   = 5 * time.Minute
)

// sessionClaims are the claims of a session token (PROTOCOL 3).
type sessionClaims struct {
	SID string      `json:"sid"`
	TID string      `json:"tid"`
	IAT int64       `json:"iat"`
	EXP int64       `json:"exp"`
	Cnf *sessionCnf `json:"cnf,omitempty"`
}

// sessionCnf is the confirmation claim of a bound session (RFC 7800, RFC 9449 section 6).
type sessionCnf struct {
	JKT string `json:"jkt"`
}

// sessionKeyring signs session tokens with its newest key and verifies them with any of its keys.
type sessionKeyring struct {
	signer jose.Signer
	keys   map[string]verifyKey
}

type verifyKey struct {
	alg jose.SignatureAlgorithm
	key any
}

var sessionAlgs = []jose.SignatureAlgorithm{jose.HS256, jose.ES256, jose.EdDSA}

// newSessionKeyring builds the key ring of keys, or, when there are none, of one HS256 key
// derived from the engine's signing key (so that session and action tokens never verify as
// each other).
func newSessionKeyring(keys []SessionKey, signingKey []byte) (*sessionKeyring, error) {
	if len(keys) == 0 {
		derived, err := hkdf.Key(sha256.New, signingKey, nil, "engine session token v1", 32)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(derived)
		keys = []SessionKey{{ID: "hs-" + b64.EncodeToString(sum[:6]), Key: derived}}
	}
	ring := &sessionKeyring{keys: make(map[string]verifyKey, len(keys))}
	for i, k := range keys {
		if !validKeyID(k.ID) {
			return nil, fmt.Errorf("SessionKeys[%d]: ID must be 1 to 64 letters, digits or ._~-", i)
		}
		if _, dup := ring.keys[k.ID]; dup {
			return nil, fmt.Errorf("SessionKeys[%d]: ID %q is used twice", i, k.ID)
		}
		var (
			vk      verifyKey
			signKey any
		)
		switch key := k.Key.(type) {
		case []byte:
			if len(key) < 32 {
				return nil, fmt.Errorf("SessionKeys[%d]: an HS256 secret needs at least 32 bytes", i)
			}
			vk, signKey = verifyKey{jose.HS256, bytes.Clone(key)}, bytes.Clone(key)
		case ed25519.PrivateKey:
			if len(key) != ed25519.PrivateKeySize {
				return nil, fmt.Errorf("SessionKeys[%d]: not an Ed25519 private key", i)
			}
			vk, signKey = verifyKey{jose.EdDSA, key.Public()}, key
		case ed25519.PublicKey:
			if len(key) != ed25519.PublicKeySize {
				return nil, fmt.Errorf("SessionKeys[%d]: not an Ed25519 public key", i)
			}
			vk = verifyKey{jose.EdDSA, key}
		case *ecdsa.PrivateKey:
			if key == nil || key.Curve != elliptic.P256() {
				return nil, fmt.Errorf("SessionKeys[%d]: an ECDSA key must be on P-256", i)
			}
			vk, signKey = verifyKey{jose.ES256, &key.PublicKey}, key
		case *ecdsa.PublicKey:
			if key == nil || key.Curve != elliptic.P256() {
				return nil, fmt.Errorf("SessionKeys[%d]: an ECDSA key must be on P-256", i)
			}
			vk = verifyKey{jose.ES256, key}
		default:
			return nil, fmt.Errorf("SessionKeys[%d]: unsupported key type %T", i, k.Key)
		}
		ring.keys[k.ID] = vk
		if i > 0 {
			continue
		}
		if signKey == nil {
			return nil, errors.New("SessionKeys[0]: the first key signs new tokens and must be a private key or a secret")
		}
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: vk.alg, Key: signKey},
			(&jose.SignerOptions{}).WithType("JWT").WithHeader(jose.HeaderKey("kid"), k.ID))
		if err != nil {
			return nil, fmt.Errorf("SessionKeys[0]: %w", err)
		}
		ring.signer = s
	}
	return ring, nil
}

func validKeyID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !isUnreserved(c) {
			return false
		}
	}
	return true
}

// sign returns the compact JWS of c.
func (k *sessionKeyring) sign(c *sessionClaims) (string, error) {
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	jws, err := k.signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

// verify checks token's signature and expiry and returns its claims, or the reason it is not
// valid, in words that never repeat the token.
func (k *sessionKeyring) verify(token string, now time.Time) (*sessionClaims, string) {
	jws, err := jose.ParseSignedCompact(token, sessionAlgs)
	if err != nil || len(jws.Signatures) != 1 {
		return nil, "the session token is not a token this engine issued"
	}
	h := jws.Signatures[0].Header
	key, ok := k.keys[h.KeyID]
	if !ok {
		return nil, "the session token was signed with a key this engine no longer has"
	}
	if h.Algorithm != string(key.alg) {
		return nil, "the session token is not a token this engine issued"
	}
	payload, err := jws.Verify(key.key)
	if err != nil {
		return nil, "the session token's signature does not verify"
	}
	var c sessionClaims
	if err := json.Unmarshal(payload, &c); err != nil || c.SID == "" || c.TID == "" || c.EXP == 0 || c.IAT == 0 {
		return nil, "the session token is not a token this engine issued"
	}
	if !now.Before(time.Unix(c.EXP, 0)) {
		return nil, "the session has expired"
	}
	return &c, ""
}

// initSessions sets up the session tokens, the proof checks and the warm-ups of cfg.
func (e *Engine) initSessions(cfg *Config) error {
	var errs []error
	ring, err := newSessionKeyring(cfg.SessionKeys, cfg.SigningKey)
	if err != nil {
		errs = append(errs, fmt.Errorf("%w: %v", ErrConfig, err))
	}
	e.keyring = ring
	if e.publicURL, err = parsePublicURL(cfg.PublicURL); err != nil {
		errs = append(errs, fmt.Errorf("%w: PublicURL %v", ErrConfig, err))
	}
	e.sessionTTL = cfg.SessionLifetime
	if e.sessionTTL == 0 {
		e.sessionTTL = defaultSessionLifetime
	}
	if cfg.DPoP != nil {
		e.dpop = *cfg.DPoP
	}
	if e.sessionTTL < 0 || e.dpop.MaxAge < 0 || e.dpop.MaxFuture < 0 || e.dpop.NonceLifetime < 0 {
		errs = append(errs, fmt.Errorf("%w: SessionLifetime and the DPoP durations cannot be negative", ErrConfig))
	}
	if e.dpop.MaxAge == 0 {
		e.dpop.MaxAge = defaultProofMaxAge
	}
	if e.dpop.MaxFuture == 0 {
		e.dpop.MaxFuture = defaultProofMaxFuture
	}
	if e.dpop.NonceLifetime == 0 {
		e.dpop.NonceLifetime = defaultNonceLifetime
	}
	if e.dpop.RequireNonce && len(cfg.SigningKey) > 0 {
		key, err := hkdf.Key(sha256.New, cfg.SigningKey, nil, "engine dpop nonce v1", 32)
		if err != nil {
			errs = append(errs, err)
		}
		e.nonces = &nonceSource{key: key, period: e.dpop.NonceLifetime}
	}
	e.warm = newWarmer(cfg.ToolListTTL)
	return errors.Join(errs...)
}

// createSessionRequest is the body of POST /api/v1/create-session.
type createSessionRequest struct {
	PublicKey json.RawMessage `json:"public_key"`
	Metadata  json.RawMessage `json:"metadata"`
}

// sessionResponse is the 201 body of create-session.
type sessionResponse struct {
	SessionID    string          `json:"session_id"`
	CreatedAt    string          `json:"created_at"`
	SessionToken string          `json:"session_token"`
	ExpiresAt    string          `json:"expires_at"`
	Theme        json.RawMessage `json:"theme"`
}

func (e *Engine) serveCreateSession(w http.ResponseWriter, r *http.Request) {
	req, p := e.readHeadersWith(r, false)
	if p != nil {
		writeProblem(w, p, req.idOrEmpty())
		return
	}
	var body createSessionRequest
	if p := decodeBody(w, r, e.maxBody, true, &body); p != nil {
		writeProblem(w, p, req.ID)
		return
	}
	now := e.now().UTC().Truncate(time.Second)
	s := &Session{ID: uuid.NewString(), TenantKey: req.Tenant.Key, CreatedAt: now, ExpiresAt: now.Add(e.sessionTTL)}
	if len(body.PublicKey) > 0 && string(body.PublicKey) != "null" {
		key, err := parseDeviceJWK(body.PublicKey)
		if err != nil {
			p := newProblem(http.StatusBadRequest, CodeInvalidPublicKey, "public_key "+err.Error())
			p.Field = "public_key"
			writeProblem(w, p, req.ID)
			return
		}
		s.KeyThumbprint = key.thumbprint
	}
	if len(body.Metadata) > 0 && string(body.Metadata) != "null" {
		var buf bytes.Buffer
		if !isJSONObject(body.Metadata) || json.Compact(&buf, body.Metadata) != nil {
			writeProblem(w, invalidField("metadata", "must be a JSON object"), req.ID)
			return
		}
		if buf.Len() > maxSessionMetadata {
			writeProblem(w, invalidField("metadata", fmt.Sprintf("is larger than %d bytes", maxSessionMetadata)), req.ID)
			return
		}
		s.Metadata = buf.Bytes()
	}

	claims := &sessionClaims{SID: s.ID, TID: s.TenantKey, IAT: now.Unix(), EXP: s.ExpiresAt.Unix()}
	if s.KeyThumbprint != "" {
		claims.Cnf = &sessionCnf{JKT: s.KeyThumbprint}
	}
	token, err := e.keyring.sign(claims)
	if err != nil {
		e.log.ErrorContext(r.Context(), "signing a session token failed", "requestId", req.ID, "err", err)
		writeProblem(w, newProblem(http.StatusInternalServerError, CodeInternal, "the session could not be created"), req.ID)
		return
	}
	if err := e.sessions.PutSession(r.Context(), s); err != nil {
		e.log.ErrorContext(r.Context(), "storing a session failed", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		writeProblem(w, newProblem(http.StatusServiceUnavailable, CodeStoreUnavailable, "the session could not be stored; try again"), req.ID)
		return
	}
	e.startWarmUp(r.Context(), req)

	theme := req.Tenant.Theme
	if len(theme) == 0 {
		theme = json.RawMessage(`{}`)
	}
	out, err := json.Marshal(sessionResponse{SessionID: s.ID, CreatedAt: now.Format(time.RFC3339), SessionToken: token,
		ExpiresAt: s.ExpiresAt.Format(time.RFC3339), Theme: theme})
	if err != nil {
		writeProblem(w, newProblem(http.StatusInternalServerError, CodeInternal, "the session could not be encoded"), req.ID)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	if e.nonces != nil {
		h.Set(HeaderDPoPNonce, e.nonces.issue(e.now()))
	}
	w.WriteHeader(http.StatusCreated)
	w.Write(out)
	e.log.InfoContext(r.Context(), "session created", "requestId", req.ID, "tenant", req.Tenant.Key,
		"env", req.Environment.Name, "sessionId", s.ID, "bound", s.KeyThumbprint != "")
}

// tokenProblem answers a session token that is missing, malformed, expired, forged or
// another tenant's. scheme is the authentication scheme the client should use.
func tokenProblem(scheme, detail string) *Problem {
	p := newProblem(http.StatusUnauthorized, CodeInvalidSession, detail)
	p.header = http.Header{"Www-Authenticate": {scheme + ` error="invalid_token"`}}
	return p
}

// verifySession applies PROTOCOL 3 to r: an unbound session's token as Bearer, a bound one's as
// DPoP with a proof, each of t's tenant, current and known to the SessionStore. It returns the
// session, or nil when the request carries none and t allows that. The proof's jti is recorded
// as used only once everything else passed, so that a refused request never burns a proof.
func (e *Engine) verifySession(r *http.Request, t *Tenant) (*Session, *Problem) {
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
	if len(auths) > 1 {
		return nil, tokenProblem("Bearer", "the Authorization header is sent more than once")
	}
	scheme, token, _ := strings.Cut(strings.TrimSpace(auths[0]), " ")
	token = strings.TrimSpace(token)
	switch {
	case strings.EqualFold(scheme, "Bearer"):
		scheme = "Bearer"
	case strings.EqualFold(scheme, "DPoP"):
		scheme = "DPoP"
	default:
		return nil, tokenProblem("Bearer", "the Authorization header must be Bearer <session_token> or DPoP <session_token>")
	}
	if token == "" || len(token) > maxSessionToken {
		return nil, tokenProblem(scheme, "the Authorization header carries no session token, or one too long to be valid")
	}
	now := e.now()
	claims, reason := e.keyring.verify(token, now)
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
	var pr *proof
	switch {
	case scheme == "Bearer" && jkt != "":
		return nil, tokenProblem("DPoP", "the session is bound to a device key: send Authorization: DPoP <session_token> with a DPoP proof")
	case scheme == "DPoP" && jkt == "":
		return nil, tokenProblem("Bearer", "the session is not bound to a key: send Authorization: Bearer <session_token>")
	case scheme == "DPoP":
		if len(proofs) != 1 {
			return nil, e.proofProblem(badProof("a bound session needs exactly one DPoP header, not %d", len(proofs)), now)
		}
		htu, ok := e.requestHTU(r)
		if !ok {
			return nil, e.proofProblem(badProof("the request's URL cannot be checked"), now)
		}
		check := &proofCheck{method: r.Method, htu: htu, token: token, jkt: jkt, now: now,
			maxAge: e.dpop.MaxAge, maxFuture: e.dpop.MaxFuture}
		if e.nonces != nil {
			check.nonce = func(n string) bool { return e.nonces.valid(n, now) }
		}
		var err error
		if pr, err = verifyProof(proofs[0], check); err != nil {
			return nil, e.proofProblem(err, now)
		}
	}

	s, err := e.sessions.Session(r.Context(), claims.SID)
	switch {
	case errors.Is(err, ErrSessionNotFound):
		return nil, tokenProblem(scheme, "the session is unknown or has ended; create a new session")
	case err != nil:
		e.log.ErrorContext(r.Context(), "looking up a session failed", "requestId", validRequestID(r), "tenant", t.Key, "err", err)
		return nil, newProblem(http.StatusServiceUnavailable, CodeStoreUnavailable, "the session could not be looked up; try again")
	case s.TenantKey != claims.TID || s.KeyThumbprint != jkt:
		return nil, tokenProblem(scheme, "the session token does not match its session; create a new session")
	}

	if pr != nil {
		sum := sha256.Sum256([]byte(pr.jkt + "\x00" + pr.jti))
		fresh, err := e.replay.Claim(r.Context(), "dpop:"+b64.EncodeToString(sum[:]), pr.iat.Add(e.dpop.MaxAge+time.Second))
		switch {
		case err != nil:
			e.log.ErrorContext(r.Context(), "recording a DPoP proof failed", "requestId", validRequestID(r), "tenant", t.Key, "err", err)
			return nil, newProblem(http.StatusServiceUnavailable, CodeStoreUnavailable, "the proof could not be checked; try again")
		case !fresh:
			return nil, e.proofProblem(badProof("the proof's jti was already used; sign a new proof for every request"), now)
		}
	}
	return s, nil
}
