package engine

import (
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
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

// Header names and values of RFC 9449.
const (
	HeaderDPoP      = "DPoP"
	HeaderDPoPNonce = "DPoP-Nonce"
	dpopJWTType     = "dpop+jwt"
)

// CodeUseDPoPNonce answers a proof without a valid server nonce when nonces are required; the
// DPoP-Nonce header carries the nonce to use.
const CodeUseDPoPNonce = "use_dpop_nonce"

// Bounds of a proof.
const (
	maxProofLen = 4096
	maxJTILen   = 128 // characters
	maxHTULen   = 2048
)

// proofCheck is what a proof must match: the request it came with and the session it presents.
type proofCheck struct {
	method string
	// htu is the request's URL, normalised by normalizeHTU.
	htu string
	// token is the session token presented with the proof; ath must be its hash.
	token string
	// jkt is the thumbprint the session is bound to.
	jkt       string
	now       time.Time
	maxAge    time.Duration
	maxFuture time.Duration
	// nonce reports whether a nonce is valid; nil means proofs need none.
	nonce func(string) bool
}

// proof is what a verified proof established.
type proof struct {
	jti string
	iat time.Time
	jkt string
}

// proofError is why a proof was refused. Its message is safe to show to the client: it names
// the check that failed, never a value from the request.
type proofError struct {
	reason string
	// needNonce marks a proof that lacks a valid server nonce.
	needNonce bool
}

func (e *proofError) Error() string { return "engine: invalid DPoP proof: " + e.reason }

func badProof(format string, args ...any) error {
	return &proofError{reason: fmt.Sprintf(format, args...)}
}

type proofHeader struct {
	Typ  *string         `json:"typ"`
	Alg  *string         `json:"alg"`
	JWK  json.RawMessage `json:"jwk"`
	Crit json.RawMessage `json:"crit"`
}

type proofClaims struct {
	JTI   *string         `json:"jti"`
	HTM   *string         `json:"htm"`
	HTU   *string         `json:"htu"`
	IAT   json.RawMessage `json:"iat"`
	ATH   *string         `json:"ath"`
	Nonce *string         `json:"nonce"`
}

// verifyProof applies the checks of RFC 9449 section 4.3 to a DPoP proof, except the single use
// of its jti, which the caller records once every other check of the request has passed. Cheap
// checks run first and the signature last, so that garbage costs little.
func verifyProof(raw string, c *proofCheck) (*proof, error) {
	if len(raw) > maxProofLen {
		return nil, badProof("the proof is longer than %d bytes", maxProofLen)
	}
	h64, rest, ok1 := strings.Cut(raw, ".")
	p64, s64, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || strings.Contains(s64, ".") || h64 == "" || p64 == "" || s64 == "" {
		return nil, badProof("the proof is not a compact JWS of three parts")
	}

	var hdr proofHeader
	if err := decodeSegment(h64, &hdr); err != nil {
		return nil, badProof("the proof's header is not base64url JSON")
	}
	switch {
	case hdr.Typ == nil:
		return nil, badProof("the proof's header has no typ; it must be %q", dpopJWTType)
	case !strings.EqualFold(*hdr.Typ, dpopJWTType):
		return nil, badProof("the proof's typ must be %q", dpopJWTType)
	case hdr.Alg == nil:
		return nil, badProof("the proof's header has no alg")
	case *hdr.Alg != "ES256":
		return nil, badProof("the proof's alg must be ES256")
	case len(hdr.Crit) > 0:
		return nil, badProof("the proof's header has crit extensions this engine does not know")
	case len(hdr.JWK) == 0:
		return nil, badProof("the proof's header has no jwk")
	}
	key, err := parseDeviceJWK(hdr.JWK)
	if err != nil {
		return nil, badProof("the proof's jwk %v", err)
	}

	var cl proofClaims
	if err := decodeSegment(p64, &cl); err != nil {
		return nil, badProof("the proof's payload is not base64url JSON with string claims")
	}
	switch {
	case cl.JTI == nil || *cl.JTI == "":
		return nil, badProof("the proof has no jti")
	case !utf8.ValidString(*cl.JTI) || utf8.RuneCountInString(*cl.JTI) > maxJTILen:
		return nil, badProof("the proof's jti is longer than %d characters", maxJTILen)
	case cl.HTM == nil:
		return nil, badProof("the proof has no htm")
	case *cl.HTM != c.method:
		return nil, badProof("the proof's htm is not this request's method")
	case cl.HTU == nil:
		return nil, badProof("the proof has no htu")
	}
	if htu, ok := normalizeHTU(*cl.HTU); !ok || htu != c.htu {
		return nil, badProof("the proof's htu is not this request's URL")
	}
	iat, ok := numericDate(cl.IAT)
	switch {
	case !ok:
		return nil, badProof("the proof has no iat, or it is not a number of seconds")
	case iat.Before(c.now.Add(-c.maxAge)):
		return nil, badProof("the proof's iat is more than %s old", c.maxAge)
	case iat.After(c.now.Add(c.maxFuture)):
		return nil, badProof("the proof's iat is more than %s ahead of the engine's clock", c.maxFuture)
	case cl.ATH == nil:
		return nil, badProof("the proof has no ath")
	case subtle.ConstantTimeCompare([]byte(*cl.ATH), []byte(accessTokenHash(c.token))) != 1:
		return nil, badProof("the proof's ath is not the hash of the session token")
	case key.thumbprint != c.jkt:
		return nil, badProof("the proof is signed with another key than the session's")
	}
	if c.nonce != nil && (cl.Nonce == nil || !c.nonce(*cl.Nonce)) {
		return nil, &proofError{reason: "the proof needs the nonce of the DPoP-Nonce header", needNonce: true}
	}

	sig, err := b64.DecodeString(s64)
	if err != nil || len(sig) != 64 {
		return nil, badProof("the proof's signature is not 64 bytes of base64url")
	}
	digest := sha256.Sum256([]byte(raw[:len(h64)+1+len(p64)]))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(key.pub, digest[:], r, s) {
		return nil, badProof("the proof's signature does not verify")
	}
	return &proof{jti: *cl.JTI, iat: iat, jkt: key.thumbprint}, nil
}

// decodeSegment decodes a base64url JWS segment holding one JSON object into v.
func decodeSegment(seg string, v any) error {
	data, err := b64.DecodeString(seg)
	if err != nil {
		return err
	}
	if len(data) == 0 || data[0] != '{' {
		return errors.New("not an object")
	}
	return json.Unmarshal(data, v)
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

// accessTokenHash is a proof's ath for token: base64url SHA-256 of its ASCII bytes.
func accessTokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return b64.EncodeToString(sum[:])
}

// normalizeHTU returns the URL s as proofs are compared (RFC 3986 section 6.2.2 and 6.2.3):
// scheme and host in lower case, the scheme's default port dropped, percent-encodings with
// upper-case digits and unreserved characters decoded, an empty path as "/", and no query,
// fragment or user information. ok is false unless s is an absolute http or https URL.
func normalizeHTU(s string) (string, bool) {
	if len(s) > maxHTULen {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil || u.User != nil || u.Opaque != "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if host == "" {
		return "", false
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	var b strings.Builder
	b.Grow(len(s) + 1)
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(host)
	if port != "" {
		b.WriteByte(':')
		b.WriteString(port)
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if !normalizePercent(&b, path) {
		return "", false
	}
	return b.String(), true
}

// normalizePercent writes path with percent-encodings normalised: unreserved characters decoded,
// other octets with upper-case hex digits.
func normalizePercent(b *strings.Builder, path string) bool {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(path) || !isHex(path[i+1]) || !isHex(path[i+2]) {
			return false
		}
		v := unhex(path[i+1])<<4 | unhex(path[i+2])
		i += 2
		if isUnreserved(v) {
			b.WriteByte(v)
		} else {
			b.WriteByte('%')
			b.WriteByte(hex[v>>4])
			b.WriteByte(hex[v&15])
		}
	}
	return true
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}

func isUnreserved(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// requestHTU returns the normalised URL proofs of r must name: the configured public URL's
// scheme, host and path prefix followed by r's path; without a public URL, the scheme of r's
// connection, its Host header and the path it was sent to.
func (e *Engine) requestHTU(r *http.Request) (string, bool) {
	if pu := e.publicURL; pu != nil {
		return normalizeHTU(pu.Scheme + "://" + pu.Host + strings.TrimSuffix(pu.EscapedPath(), "/") + r.URL.EscapedPath())
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	path := r.URL.EscapedPath()
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil && r.RequestURI != "*" {
		path = u.EscapedPath() // the path as sent, before any http.StripPrefix
	}
	return normalizeHTU(scheme + "://" + r.Host + path)
}

// parsePublicURL checks Config.PublicURL: an absolute http or https URL without query.
func parsePublicURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("must be an absolute http or https URL without user, query or fragment")
	}
	if _, ok := normalizeHTU(s); !ok {
		return nil, errors.New("is not a valid URL")
	}
	return u, nil
}

// nonceSource issues and checks stateless DPoP nonces: the number of the period they were
// issued in and an HMAC of it, so that every replica accepts the nonces of the others.
type nonceSource struct {
	key    []byte
	period time.Duration
}

func (n *nonceSource) slot(now time.Time) uint64 { return uint64(now.UnixNano() / int64(n.period)) }

func (n *nonceSource) mac(slot uint64) []byte {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], slot)
	m := hmac.New(sha256.New, n.key)
	m.Write(buf[:])
	return append(buf[:], m.Sum(nil)[:16]...)
}

// issue returns the nonce of now's period.
func (n *nonceSource) issue(now time.Time) string { return b64.EncodeToString(n.mac(n.slot(now))) }

// valid reports whether s was issued in now's period or the one before.
func (n *nonceSource) valid(s string, now time.Time) bool {
	raw, err := b64.DecodeString(s)
	if err != nil || len(raw) != 24 {
		return false
	}
	slot, cur := binary.BigEndian.Uint64(raw[:8]), n.slot(now)
	if slot != cur && slot+1 != cur {
		return false
	}
	return hmac.Equal(raw, n.mac(slot))
}

// dpopChallenge is the WWW-Authenticate value of a refused proof.
const dpopChallenge = `DPoP error="invalid_dpop_proof", algs="ES256"`

// proofProblem turns a refused proof into its 401 problem.
func (e *Engine) proofProblem(err error, now time.Time) *Problem {
	var pe *proofError
	if !errors.As(err, &pe) {
		pe = &proofError{reason: "the proof is not valid"}
	}
	if pe.needNonce && e.nonces != nil {
		p := newProblem(http.StatusUnauthorized, CodeUseDPoPNonce, pe.reason)
		p.header = http.Header{
			"Www-Authenticate": {`DPoP error="use_dpop_nonce", algs="ES256"`},
			"Dpop-Nonce":       {e.nonces.issue(now)},
		}
		return p
	}
	p := newProblem(http.StatusUnauthorized, CodeInvalidDPoPProof, pe.reason)
	p.header = http.Header{"Www-Authenticate": {dpopChallenge}}
	return p
}
