package engine

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-jose/go-jose/v4"
)

// proofFixture is a fixed device key and a request its proofs are checked against.
type proofFixture struct {
	key   *ecdsa.PrivateKey
	jwk   map[string]any
	jkt   string
	token string
	htu   string
	now   time.Time
}

func newProofFixture(tb testing.TB) *proofFixture {
	scalar := sha256.Sum256([]byte("proof fixture"))
	key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), scalar[:])
	if err != nil {
		tb.Fatal(err)
	}
	raw, _ := key.PublicKey.Bytes()
	return &proofFixture{
		key: key,
		jwk: map[string]any{"kty": "EC", "crv": "P-256", "x": b64.EncodeToString(raw[1:33]), "y": b64.EncodeToString(raw[33:])},
		jkt: ecThumbprint(raw[1:33], raw[33:]), token: "session-token", htu: "https://api.example.com/engine",
		now: time.Unix(1_800_000_000, 0),
	}
}

func (f *proofFixture) check() *proofCheck {
	return &proofCheck{method: "POST", htu: f.htu, token: f.token, jkt: f.jkt, now: f.now,
		maxAge: defaultProofMaxAge, maxFuture: defaultProofMaxFuture}
}

func (f *proofFixture) sign(header, claims map[string]any) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return b64.EncodeToString(b)
	}
	input := enc(header) + "." + enc(claims)
	sum := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, f.key, sum[:])
	if err != nil {
		panic(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + b64.EncodeToString(sig)
}

func (f *proofFixture) proof(jti string) string {
	return f.sign(map[string]any{"typ": "dpop+jwt", "alg": "ES256", "jwk": f.jwk},
		map[string]any{"jti": jti, "htm": "POST", "htu": f.htu, "iat": f.now.Unix(), "ath": accessTokenHash(f.token)})
}

// FuzzDPoPProof feeds the proof verifier arbitrary proofs. It must never panic, must refuse
// with a *proofError, and whatever it accepts must pass every check of RFC 9449 section 4.3
// when checked again independently, with go-jose.
func FuzzDPoPProof(f *testing.F) {
	fx := newProofFixture(f)
	valid := fx.proof("seed-1")
	f.Add(valid)
	f.Add(fx.sign(map[string]any{"typ": "DPoP+JWT", "alg": "ES256", "jwk": fx.jwk},
		map[string]any{"jti": "j", "htm": "POST", "htu": "HTTPS://API.example.com:443/engine?q", "iat": fx.now.Unix() - 30, "ath": accessTokenHash(fx.token)}))
	f.Add(fx.sign(map[string]any{"typ": "dpop+jwt", "alg": "ES256", "jwk": fx.jwk, "crit": []string{"x"}},
		map[string]any{"jti": "j", "htm": "GET", "htu": fx.htu, "iat": 1.5, "ath": "x", "nonce": 1}))
	f.Add(strings.Replace(valid, ".", "..", 1))
	f.Add("e30.e30.")
	f.Add("")
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := verifyProof(raw, fx.check())
		if err != nil {
			var pe *proofError
			if !errors.As(err, &pe) || p != nil {
				t.Fatalf("refusal %v is not a proofError", err)
			}
			return
		}
		jws, err := jose.ParseSignedCompact(raw, []jose.SignatureAlgorithm{jose.ES256})
		if err != nil || len(jws.Signatures) != 1 {
			t.Fatalf("accepted a proof go-jose cannot parse: %v", err)
		}
		h := jws.Signatures[0].Header
		if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); !strings.EqualFold(typ, "dpop+jwt") || h.Algorithm != "ES256" {
			t.Fatalf("accepted typ %q alg %q", typ, h.Algorithm)
		}
		if h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
			t.Fatal("accepted a proof without a public jwk")
		}
		if sum, err := h.JSONWebKey.Thumbprint(cryptoSHA256); err != nil || b64.EncodeToString(sum) != fx.jkt || p.jkt != fx.jkt {
			t.Fatal("accepted a proof of another key")
		}
		payload, err := jws.Verify(&fx.key.PublicKey)
		if err != nil {
			t.Fatalf("accepted a proof whose signature does not verify: %v", err)
		}
		var c struct {
			JTI, HTM, HTU, ATH string
			IAT                float64
		}
		if err := json.Unmarshal(payload, &c); err != nil {
			t.Fatalf("accepted claims %s: %v", payload, err)
		}
		htu, ok := normalizeHTU(c.HTU)
		iat := time.Unix(0, int64(c.IAT*1e9))
		switch {
		case c.HTM != "POST":
			t.Fatalf("accepted htm %q", c.HTM)
		case !ok || htu != fx.htu:
			t.Fatalf("accepted htu %q", c.HTU)
		case c.JTI == "" || utf8.RuneCountInString(c.JTI) > maxJTILen || c.JTI != p.jti:
			t.Fatalf("accepted jti %q", c.JTI)
		case c.ATH != accessTokenHash(fx.token):
			t.Fatalf("accepted ath %q", c.ATH)
		case iat.Before(fx.now.Add(-defaultProofMaxAge-time.Second)) || iat.After(fx.now.Add(defaultProofMaxFuture+time.Second)):
			t.Fatalf("accepted iat %v", c.IAT)
		}
	})
}

func TestNormalizeHTU(t *testing.T) {
	cases := []struct{ in, want string }{
		{"https://api.example.com/engine", "https://api.example.com/engine"},
		{"HTTPS://API.EXAMPLE.COM:443/engine?x=1#f", "https://api.example.com/engine"},
		{"http://example.com:80", "http://example.com/"},
		{"http://example.com:443/a", "http://example.com:443/a"},
		{"http://[::1]:8080/a%7eb%2fc%2Fd", "http://[::1]:8080/a~b%2Fc%2Fd"},
		{"ftp://example.com/a", ""},
		{"https://user@example.com/a", ""},
		{"/engine", ""},
		{"https:///engine", ""},
		{"https://example.com/%zz", ""},
	}
	for _, tc := range cases {
		got, ok := normalizeHTU(tc.in)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("normalizeHTU(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}

// alwaysFresh is a ReplayStore that never saw anything, so that a benchmark can present one
// proof again and again.
type alwaysFresh struct{}

func (alwaysFresh) Claim(context.Context, string, time.Time) (bool, error) { return true, nil }

// BenchmarkVerifyProof measures the proof checks of RFC 9449 section 4.3 (signature included,
// replay store excluded).
func BenchmarkVerifyProof(b *testing.B) {
	fx := newProofFixture(b)
	proof := fx.proof("bench")
	check := fx.check()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := verifyProof(proof, check); err != nil {
			b.Fatal(err)
		}
	}
}

func benchKeyring(b *testing.B, keys []SessionKey) *sessionKeyring {
	ring, err := newSessionKeyring(keys, make([]byte, 32))
	if err != nil {
		b.Fatal(err)
	}
	return ring
}

func benchKeys(b *testing.B) map[string][]SessionKey {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	return map[string][]SessionKey{
		"HS256": nil,
		"ES256": {{ID: "es", Key: ec}},
		"EdDSA": {{ID: "ed", Key: ed25519Key()}},
	}
}

// BenchmarkSignSessionToken measures minting a bound session token with each kind of key.
func BenchmarkSignSessionToken(b *testing.B) {
	for _, alg := range []string{"HS256", "ES256", "EdDSA"} {
		b.Run(alg, func(b *testing.B) {
			ring := benchKeyring(b, benchKeys(b)[alg])
			c := &sessionClaims{SID: "0b1e8f8e-3f59-4a4e-9a53-4d3c2a1b0c9d", TID: "pk_test", IAT: 1_800_000_000, EXP: 1_800_086_400,
				Cnf: &sessionCnf{JKT: "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ring.sign(c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVerifySessionToken measures checking a session token with each kind of key.
func BenchmarkVerifySessionToken(b *testing.B) {
	for _, alg := range []string{"HS256", "ES256", "EdDSA"} {
		b.Run(alg, func(b *testing.B) {
			ring := benchKeyring(b, benchKeys(b)[alg])
			tok, _ := ring.sign(&sessionClaims{SID: "s", TID: "pk_test", IAT: 1_800_000_000, EXP: 1_800_086_400})
			now := time.Unix(1_800_000_100, 0)
			b.ReportAllocs()
			for b.Loop() {
				if c, reason := ring.verify(tok, now); c == nil {
					b.Fatal(reason)
				}
			}
		})
	}
}

// BenchmarkBoundRequest measures the whole session check of a request of a bound session:
// the Authorization and DPoP headers, the token, the proof, the session store lookup and the
// replay store claim (a store that never refuses).
func BenchmarkBoundRequest(b *testing.B) {
	fx := newProofFixture(b)
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
	fx.token, _ = e.keyring.sign(&sessionClaims{SID: "s1", TID: "pk_test", IAT: fx.now.Unix(), EXP: fx.now.Add(time.Hour).Unix(), Cnf: &sessionCnf{JKT: fx.jkt}})
	r := httptest.NewRequest(http.MethodPost, "/engine", nil)
	r.Header.Set("Authorization", "DPoP "+fx.token)
	r.Header.Set("DPoP", fx.proof("bench"))
	b.ReportAllocs()
	for b.Loop() {
		if _, p := e.verifySession(r, tenant); p != nil {
			b.Fatal(p)
		}
	}
}

const cryptoSHA256 = crypto.SHA256

func ed25519Key() ed25519.PrivateKey { return ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)) }

// nopModel is a Model that answers nothing.
type nopModel struct{}

func (nopModel) Stream(context.Context, *ModelRequest) iter.Seq2[ModelEvent, error] {
	return func(func(ModelEvent, error) bool) {}
}
