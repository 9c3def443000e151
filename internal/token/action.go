package token

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
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
	User    string `json:"uth"`
	Session string `json:"sid,omitempty"`
	// Conversation and Turn name the conversation and the turn that offered the action, so
	// that its record joins the conversation's.
	Conversation string `json:"cid,omitempty"`
	Turn         string `json:"trn,omitempty"`
	Tool         string `json:"tool"`
	ArgsHash     string `json:"args"`
	TokenType    string `json:"typ"`
	// Sealed holds, encrypted, the arguments the action will send when they differ from those
	// the client was shown (ArgsHash's): values a privacy policy masks on the client.
	Sealed string `json:"sealed,omitempty"`
}

const actionType = "action"

// MaxActionToken bounds the length of an action token a client may present.
const MaxActionToken = 4096

// ErrInvalidAction is returned for an action token that is malformed, forged, or not an action
// token.
var ErrInvalidAction = errors.New("token: invalid action token")

// Actions signs and verifies action tokens (HS256, with the key derived for them), and seals
// the arguments they carry (AES-256-GCM, with a key of its own). It is safe for concurrent use.
type Actions struct {
	signer jose.Signer
	key    []byte
	args   cipher.AEAD
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
	argsKey, err := Derive(signingKey, PurposeArguments)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(argsKey)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Actions{signer: s, key: key, args: aead}, nil
}

// SealArguments encrypts arguments for ActionClaims.Sealed: base64url of a random nonce and
// the sealed bytes, readable by no one but an engine that shares the signing key.
func (a *Actions) SealArguments(args []byte) string {
	nonce := make([]byte, a.args.NonceSize(), a.args.NonceSize()+len(args)+a.args.Overhead())
	rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(a.args.Seal(nonce, nonce, args, []byte(PurposeArguments)))
}

// OpenArguments returns the arguments SealArguments sealed, or ErrInvalidAction.
func (a *Actions) OpenArguments(sealed string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(sealed)
	if n := a.args.NonceSize(); err == nil && len(b) >= n+a.args.Overhead() {
		if plain, err := a.args.Open(nil, b[:n], b[n:], []byte(PurposeArguments)); err == nil {
			return plain, nil
		}
	}
	return nil, ErrInvalidAction
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
