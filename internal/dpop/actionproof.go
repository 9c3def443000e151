package dpop

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// actionProofType is the typ of an action proof's header.
const actionProofType = "action-proof+jwt"

// ActionCheck is what an action proof must match: the confirmed action and the device check
// the execute request reports, and the session's gate key.
type ActionCheck struct {
	// Key is the session's gate key: the key the app holds behind the device's biometric gate.
	Key *Key
	// Token is the confirm widget's action token; the proof's ath must be its hash.
	Token string
	// Method and VerifiedAt are the execute request's auth.method and auth.verifiedAt (its JSON,
	// compared as written).
	Method     string
	VerifiedAt json.RawMessage
	Now        time.Time
	MaxAge     time.Duration // how far in the past iat may lie
	MaxFuture  time.Duration // how far ahead of Now iat may lie
}

// actionClaims are the claims of an action proof; pointers tell a claim that is absent.
type actionClaims struct {
	ATH        *string         `json:"ath"`
	Method     *string         `json:"method"`
	VerifiedAt json.RawMessage `json:"verifiedAt"`
	IAT        json.RawMessage `json:"iat"`
}

// VerifyAction checks an action proof: a compact JWS, ES256, typ "action-proof+jwt", whose
// payload {ath, method, verifiedAt, iat} names this action token, this device check and a
// recent time, signed by the session's gate key. Since the action token commits to the tenant,
// the tool and the exact arguments, a proof is specific to the amount and the payee (dynamic
// linking, PSD2 RTS article 5): any change invalidates it. A refusal is an [*Error].
func VerifyAction(raw string, c *ActionCheck) error {
	if len(raw) > MaxProofLen {
		return refuse("the device proof is longer than %d bytes", MaxProofLen)
	}
	if repeatsMember(raw) {
		return refuse("the device proof's header or payload names a member twice")
	}
	jws, err := jose.ParseSignedCompact(raw, []jose.SignatureAlgorithm{jose.ES256})
	var alg *jose.ErrUnexpectedSignatureAlgorithm
	switch {
	case errors.As(err, &alg):
		return refuse("the device proof's alg must be ES256")
	case err != nil:
		return refuse("the device proof is not a compact JWS")
	}
	h := jws.Signatures[0].Header
	typ, _ := h.ExtraHeaders[jose.HeaderType].(string)
	switch {
	case !strings.EqualFold(typ, actionProofType):
		return refuse("the device proof's typ must be %q", actionProofType)
	case h.ExtraHeaders["crit"] != nil:
		return refuse("the device proof's header has crit extensions this engine does not know")
	}
	payload, err := jws.Verify(c.Key.Public)
	if err != nil {
		return refuse("the device proof is not signed by the session's gate key")
	}
	var cl actionClaims
	if err := json.Unmarshal(payload, &cl); err != nil {
		return refuse("the device proof's payload is not a JSON object of its claims")
	}
	iat, ok := numericDate(cl.IAT)
	switch {
	case cl.ATH == nil:
		return refuse("the device proof has no ath")
	case subtle.ConstantTimeCompare([]byte(*cl.ATH), []byte(AccessTokenHash(c.Token))) != 1:
		return refuse("the device proof's ath is not the hash of this action's token")
	case cl.Method == nil || *cl.Method != c.Method:
		return refuse("the device proof's method is not auth.method")
	case !bytes.Equal(compact(cl.VerifiedAt), compact(c.VerifiedAt)):
		return refuse("the device proof's verifiedAt is not auth.verifiedAt")
	case !ok:
		return refuse("the device proof has no iat, or it is not a number of seconds")
	case iat.Before(c.Now.Add(-c.MaxAge)):
		return refuse("the device proof's iat is more than %s old", c.MaxAge)
	case iat.After(c.Now.Add(c.MaxFuture)):
		return refuse("the device proof's iat is more than %s ahead of the engine's clock", c.MaxFuture)
	}
	return nil
}

// compact is raw JSON without insignificant white space, or nil.
func compact(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if len(raw) == 0 || json.Compact(&b, raw) != nil {
		return nil
	}
	return b.Bytes()
}
