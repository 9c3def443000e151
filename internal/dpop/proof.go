package dpop

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-jose/go-jose/v4"

	"github.com/convengine/engine/internal/jsonenc"
)

// Bounds of a proof.
const (
	MaxProofLen = 4096
	MaxJTILen   = 128 // characters
	maxHTULen   = 2048
)

// jwtType is the typ of a proof's header.
const jwtType = "dpop+jwt"

// Check is what a proof must match: the request it came with and the session it presents.
type Check struct {
	Method string
	// HTU is the request's URL, normalised by [NormalizeHTU].
	HTU string
	// Token is the session token presented with the proof; the proof's ath must be its hash.
	Token string
	// JKT is the thumbprint of the key the session is bound to.
	JKT       string
	Now       time.Time
	MaxAge    time.Duration // how far in the past iat may lie
	MaxFuture time.Duration // how far ahead of Now iat may lie
	// Nonce reports whether a nonce is valid; nil means proofs need none.
	Nonce func(string) bool
}

// Proof is what a verified proof established.
type Proof struct {
	JTI string
	IAT time.Time
	JKT string
}

// Error is why a proof was refused. Its Reason is safe to show to the client: it names the
// check that failed, never a value from the request.
type Error struct {
	Reason string
	// NeedNonce marks a proof that lacks a valid server nonce.
	NeedNonce bool
}

func (e *Error) Error() string { return "dpop: invalid proof: " + e.Reason }

func refuse(format string, args ...any) error {
	return &Error{Reason: fmt.Sprintf(format, args...)}
}

// proofClaims are the claims of a proof; pointers tell a claim that is absent.
type proofClaims struct {
	JTI   *string         `json:"jti"`
	HTM   *string         `json:"htm"`
	HTU   *string         `json:"htu"`
	IAT   json.RawMessage `json:"iat"`
	ATH   *string         `json:"ath"`
	Nonce *string         `json:"nonce"`
}

// Verify applies the checks of RFC 9449 section 4.3 to the proof raw, except the single use of
// its jti, which the caller records once every other check of the request has passed. The
// signature is checked last, so that garbage costs little. A refusal is an [*Error].
func Verify(raw string, c *Check) (*Proof, error) {
	if len(raw) > MaxProofLen {
		return nil, refuse("the proof is longer than %d bytes", MaxProofLen)
	}
	if repeatsMember(raw) {
		return nil, refuse("the proof's header or payload names a member twice")
	}
	jws, err := jose.ParseSignedCompact(raw, []jose.SignatureAlgorithm{jose.ES256})
	var alg *jose.ErrUnexpectedSignatureAlgorithm
	switch {
	case errors.As(err, &alg) && alg.Got == "":
		return nil, refuse("the proof's header has no alg")
	case errors.As(err, &alg):
		return nil, refuse("the proof's alg must be ES256")
	case err != nil:
		return nil, refuse("the proof is not a compact JWS whose header holds a public jwk")
	}
	h := jws.Signatures[0].Header
	typ, _ := h.ExtraHeaders[jose.HeaderType].(string)
	switch {
	case typ == "":
		return nil, refuse("the proof's header has no typ; it must be %q", jwtType)
	case !strings.EqualFold(typ, jwtType):
		return nil, refuse("the proof's typ must be %q", jwtType)
	case h.ExtraHeaders["crit"] != nil:
		return nil, refuse("the proof's header has crit extensions this engine does not know")
	case h.JSONWebKey == nil:
		return nil, refuse("the proof's header has no jwk")
	}
	key, err := checkKey(h.JSONWebKey)
	if err != nil {
		return nil, refuse("the proof's jwk %v", err)
	}

	var cl proofClaims
	if err := json.Unmarshal(jws.UnsafePayloadWithoutVerification(), &cl); err != nil {
		return nil, refuse("the proof's payload is not a JSON object with string claims")
	}
	switch {
	case cl.JTI == nil || *cl.JTI == "":
		return nil, refuse("the proof has no jti")
	case !utf8.ValidString(*cl.JTI) || utf8.RuneCountInString(*cl.JTI) > MaxJTILen:
		return nil, refuse("the proof's jti is longer than %d characters", MaxJTILen)
	case cl.HTM == nil:
		return nil, refuse("the proof has no htm")
	case *cl.HTM != c.Method:
		return nil, refuse("the proof's htm is not this request's method")
	case cl.HTU == nil:
		return nil, refuse("the proof has no htu")
	}
	if htu, ok := NormalizeHTU(*cl.HTU); !ok || htu != c.HTU {
		return nil, refuse("the proof's htu is not this request's URL")
	}
	iat, ok := numericDate(cl.IAT)
	switch {
	case !ok:
		return nil, refuse("the proof has no iat, or it is not a number of seconds")
	case iat.Before(c.Now.Add(-c.MaxAge)):
		return nil, refuse("the proof's iat is more than %s old", c.MaxAge)
	case iat.After(c.Now.Add(c.MaxFuture)):
		return nil, refuse("the proof's iat is more than %s ahead of the engine's clock", c.MaxFuture)
	case cl.ATH == nil:
		return nil, refuse("the proof has no ath")
	case subtle.ConstantTimeCompare([]byte(*cl.ATH), []byte(AccessTokenHash(c.Token))) != 1:
		return nil, refuse("the proof's ath is not the hash of the session token")
	case key.Thumbprint != c.JKT:
		return nil, refuse("the proof is signed with another key than the session's")
	}
	if c.Nonce != nil && (cl.Nonce == nil || !c.Nonce(*cl.Nonce)) {
		return nil, &Error{Reason: "the proof needs the nonce of the DPoP-Nonce header", NeedNonce: true}
	}
	if _, err := jws.Verify(key.Public); err != nil {
		return nil, refuse("the proof's signature does not verify")
	}
	return &Proof{JTI: *cl.JTI, IAT: iat, JKT: key.Thumbprint}, nil
}

// numericDate reads an RFC 7519 NumericDate: a JSON number of seconds since the epoch.
func numericDate(raw json.RawMessage) (time.Time, bool) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return time.Time{}, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1<<40 {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true
}

// AccessTokenHash is a proof's ath for token: base64url SHA-256 of its ASCII bytes.
func AccessTokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return b64.EncodeToString(sum[:])
}

// repeatsMember reports whether the header or the payload of raw, a compact JWS, repeats a
// member: a parser that keeps the first of two "ath" or "jwk" would read another proof from
// the same signed text than this engine does. Segments that are not base64url are left to
// go-jose to refuse.
func repeatsMember(raw string) bool {
	header, rest, _ := strings.Cut(raw, ".")
	payload, _, _ := strings.Cut(rest, ".")
	for _, seg := range []string{header, payload} {
		b, err := base64.RawURLEncoding.DecodeString(seg)
		if err == nil && jsonenc.HasDuplicateMembers(b) {
			return true
		}
	}
	return false
}
