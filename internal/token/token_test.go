package token

import (
	"bytes"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// TestTokensDoNotVerifyAsEachOther checks that each kind of token is signed with its own key:
// a session token is no action token, an action token no session token, and an action token
// signed with the raw signing key (as engines before 2.1 did) is refused.
func TestTokensDoNotVerifyAsEachOther(t *testing.T) {
	signingKey := bytes.Repeat([]byte{7}, 32)
	now := time.Unix(1_800_000_000, 0)
	sessions, err := NewSessions(nil, signingKey)
	if err != nil {
		t.Fatal(err)
	}
	actions, err := NewActions(signingKey)
	if err != nil {
		t.Fatal(err)
	}
	claims := ActionClaims{Claims: jwt.Claims{ID: "j1", Expiry: jwt.NewNumericDate(now.Add(time.Hour))},
		Tenant: "pk", Tool: "transfer", ArgsHash: "h"}
	action, err := actions.Sign(claims)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := actions.Verify(action); err != nil || c.ID != "j1" || c.Tool != "transfer" {
		t.Fatalf("an action token does not verify: %+v, %v", c, err)
	}
	session, err := sessions.Sign(&SessionClaims{SID: "s1", TID: "pk", IAT: now.Unix(), EXP: now.Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	if c, reason := sessions.Verify(session, now); c == nil || c.SID != "s1" {
		t.Fatalf("a session token does not verify: %s", reason)
	}

	if _, err := actions.Verify(session); err == nil {
		t.Error("a session token verified as an action token")
	}
	if c, _ := sessions.Verify(action, now); c != nil {
		t.Error("an action token verified as a session token")
	}
	raw, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: signingKey}, (&jose.SignerOptions{}).WithType("JWT"))
	claims.TokenType = actionType
	old, _ := jwt.Signed(raw).Claims(claims).Serialize()
	if _, err := actions.Verify(old); err == nil {
		t.Error("an action token signed with the raw signing key verified")
	}
	for _, purpose := range []string{PurposeAction, PurposeNonce, PurposeRateLimit} {
		k1, _ := Derive(signingKey, PurposeSession)
		k2, _ := Derive(signingKey, purpose)
		if bytes.Equal(k1, k2) || bytes.Equal(k2, signingKey) {
			t.Errorf("the key of %q is the session key or the signing key", purpose)
		}
	}
}
