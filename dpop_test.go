package engine

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/convengine/engine/internal/dpop"
	"github.com/convengine/engine/internal/token"
)

// alwaysFresh is a ReplayStore that never saw anything, so that a benchmark can present one
// proof again and again.
type alwaysFresh struct{}

func (alwaysFresh) Claim(context.Context, string, time.Time) (bool, error) { return true, nil }

// BenchmarkBoundRequest measures the whole session check of a request of a bound session:
// the Authorization and DPoP headers, the token, the proof, the session store lookup and the
// replay store claim (a store that never refuses).
func BenchmarkBoundRequest(b *testing.B) {
	fx := newBoundFixture(b)
	tenant := &Tenant{Key: "pk_test", Name: "T", Environments: map[string]*Environment{EnvProduction: {}}}
	tenants, err := NewStaticTenants(tenant)
	if err != nil {
		b.Fatal(err)
	}
	store := &MemoryStore{}
	e, err := New(Config{Tenants: tenants, Model: nopModel{}, SigningKey: make([]byte, 32), Sessions: store,
		Replay: alwaysFresh{}, PublicURL: "https://api.example.com", Now: func() time.Time { return fx.now }})
	if err != nil {
		b.Fatal(err)
	}
	s := &Session{ID: "s1", TenantKey: "pk_test", CreatedAt: fx.now, ExpiresAt: fx.now.Add(time.Hour), KeyThumbprint: fx.jkt}
	store.PutSession(context.Background(), s)
	fx.token, _ = e.sessionTokens.Sign(&token.SessionClaims{SID: "s1", TID: "pk_test", IAT: fx.now.Unix(), EXP: fx.now.Add(time.Hour).Unix(), Cnf: &token.Cnf{JKT: fx.jkt}})
	r := httptest.NewRequest(http.MethodPost, "/engine", nil)
	r.Header.Set("Authorization", "DPoP "+fx.token)
	r.Header.Set("DPoP", fx.proof("bench"))
	b.ReportAllocs()
	for b.Loop() {
		if _, p := e.verifySession(r, tenant, "prod-bench"); p != nil {
			b.Fatal(p)
		}
	}
}

// boundFixture is a device key, a session token bound to it and the proofs it signs.
type boundFixture struct {
	key   *ecdsa.PrivateKey
	jkt   string
	token string
	now   time.Time
}

func newBoundFixture(tb testing.TB) *boundFixture {
	scalar := sha256.Sum256([]byte("proof fixture"))
	key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), scalar[:])
	if err != nil {
		tb.Fatal(err)
	}
	jwk := jose.JSONWebKey{Key: &key.PublicKey}
	sum, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		tb.Fatal(err)
	}
	return &boundFixture{key: key, jkt: base64.RawURLEncoding.EncodeToString(sum), now: time.Unix(1_800_000_000, 0)}
}

// proof signs a proof of POST https://api.example.com/engine for the fixture's token.
func (f *boundFixture) proof(jti string) string {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: f.key},
		(&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt"))
	if err != nil {
		panic(err)
	}
	claims, _ := json.Marshal(map[string]any{"jti": jti, "htm": "POST", "htu": "https://api.example.com/engine",
		"iat": f.now.Unix(), "ath": dpop.AccessTokenHash(f.token)})
	jws, err := signer.Sign(claims)
	if err != nil {
		panic(err)
	}
	out, _ := jws.CompactSerialize()
	return out
}

// nopModel is a Model that answers nothing.
type nopModel struct{}

func (nopModel) Stream(context.Context, *ModelRequest) iter.Seq2[ModelEvent, error] {
	return func(func(ModelEvent, error) bool) {}
}
