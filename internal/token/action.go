package token

import (
	"errors"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// ActionClaims bind a confirm widget's token to what it may run: tenant, environment, user,
// session, tool and the hash of the exact arguments, until it expires, once (by its jti).
type ActionClaims struct {
	jwt.Claims
	Tenant string `json:"tid"`
	// Env is the environment ("production" or "staging") of the turn that minted the token.
	Env string `json:"env"`
	// User is the keyed hash of the X-Token of that turn, never the token.
	User      string `json:"uth"`
	Session   string `json:"sid,omitempty"`
	Tool      string `json:"tool"`
	ArgsHash  string `json:"args"`
	TokenType string `json:"typ"`
}

const actionType = "action"

// MaxActionToken bounds the length of an action token a client may present.
const MaxActionToken = 4096

// ErrInvalidAction is returned for an action token that is malformed, forged, or not an action
// token.
var ErrInvalidAction = errors.New("token: invalid action token")

// Actions signs and verifies action tokens (HS256, with the key derived for them). It is safe
// for concurrent use.
type Actions struct {
	signer jose.Signer
	key    []byte
}

// NewActions returns the action tokens of an engine with signingKey.
func NewActions(signingKey []byte) (*Actions, error) {
	key, err := Derive(signingKey, PurposeAction)
	if err != nil {
		return nil, err
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return nil, err
	}
	return &Actions{signer: s, key: key}, nil
}

// Sign returns the token of c, marked as an action token.
func (a *Actions) Sign(c ActionClaims) (string, error) {
	c.TokenType = actionType
	return jwt.Signed(a.signer).Claims(c).Serialize()
}

// Verify checks token's signature and kind and returns its claims, which the caller compares
// with the action asked for; it does not check the expiry. Every refusal is
// [ErrInvalidAction].
func (a *Actions) Verify(token string) (*ActionClaims, error) {
	if token == "" || len(token) > MaxActionToken {
		return nil, ErrInvalidAction
	}
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.HS256})
	if err != nil {
		return nil, ErrInvalidAction
	}
	var c ActionClaims
	if err := tok.Claims(a.key, &c); err != nil || c.TokenType != actionType || c.ID == "" || c.Expiry == nil {
		return nil, ErrInvalidAction
	}
	return &c, nil
}
