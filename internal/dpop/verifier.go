package dpop

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Verifier checks the proofs of the requests of bound sessions: against the engine's public
// URL, within its time bounds and, when it issues them, with its nonces.
type Verifier struct {
	PublicURL *url.URL // nil: the URL of each request
	MaxAge    time.Duration
	MaxFuture time.Duration
	Nonces    *Nonces // nil: proofs need no nonce
}

// Request checks the one proof of proofs that a request of the session bound to jkt must
// carry, presenting the session token token. It does not record the proof's jti: [Verifier.Replay]
// names it for the replay store, once the rest of the request has passed. A refusal is an *[Error].
func (v *Verifier) Request(r *http.Request, proofs []string, token, jkt string, now time.Time) (*Proof, error) {
	if len(proofs) != 1 {
		return nil, &Error{Reason: fmt.Sprintf("a bound session needs exactly one DPoP header, not %d", len(proofs))}
	}
	htu, ok := RequestHTU(v.PublicURL, r)
	if !ok {
		return nil, &Error{Reason: "the request's URL cannot be checked"}
	}
	check := &Check{Method: r.Method, HTU: htu, Token: token, JKT: jkt, Now: now, MaxAge: v.MaxAge, MaxFuture: v.MaxFuture}
	if v.Nonces != nil {
		check.Nonce = func(n string) bool { return v.Nonces.Valid(n, now) }
	}
	return Verify(proofs[0], check)
}

// Replay names the proof's jti (with its key's thumbprint) in a replay store, and until when it
// must be kept there: as long as its iat is accepted, and a second more.
func (v *Verifier) Replay(p *Proof) (key string, until time.Time) {
	sum := sha256.Sum256([]byte(p.JKT + "\x00" + p.JTI))
	return "dpop:" + b64.EncodeToString(sum[:]), p.IAT.Add(v.MaxAge + time.Second)
}
