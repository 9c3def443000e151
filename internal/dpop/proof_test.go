package dpop

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
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
		jkt: thumbprintOf(tb, raw), token: "session-token", htu: "https://api.example.com/engine",
		now: time.Unix(1_800_000_000, 0),
	}
}

const (
	testMaxAge    = 60 * time.Second
	testMaxFuture = 5 * time.Second
)

func (f *proofFixture) check() *Check {
	return &Check{Method: "POST", HTU: f.htu, Token: f.token, JKT: f.jkt, Now: f.now, MaxAge: testMaxAge, MaxFuture: testMaxFuture}
}

// thumbprintOf returns the RFC 7638 thumbprint of the uncompressed P-256 point raw, written out
// as the RFC defines it: the required members sorted, without white space.
func thumbprintOf(tb testing.TB, raw []byte) string {
	tb.Helper()
	canon := `{"crv":"P-256","kty":"EC","x":"` + b64.EncodeToString(raw[1:33]) + `","y":"` + b64.EncodeToString(raw[33:]) + `"}`
	sum := sha256.Sum256([]byte(canon))
	return b64.EncodeToString(sum[:])
}

func (f *proofFixture) sign(header, claims map[string]any) string {
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	return f.signRaw(string(h), string(c))
}

func (f *proofFixture) proof(jti string) string {
	return f.sign(map[string]any{"typ": "dpop+jwt", "alg": "ES256", "jwk": f.jwk},
		map[string]any{"jti": jti, "htm": "POST", "htu": f.htu, "iat": f.now.Unix(), "ath": AccessTokenHash(f.token)})
}

// FuzzDPoPProof feeds the proof verifier arbitrary proofs. It must never panic, must refuse
// with an *Error, and whatever it accepts must pass every check of RFC 9449 section 4.3
// when checked again independently, with go-jose.
func FuzzDPoPProof(f *testing.F) {
	fx := newProofFixture(f)
	valid := fx.proof("seed-1")
	f.Add(valid)
	f.Add(fx.sign(map[string]any{"typ": "DPoP+JWT", "alg": "ES256", "jwk": fx.jwk},
		map[string]any{"jti": "j", "htm": "POST", "htu": "HTTPS://API.example.com:443/engine?q", "iat": fx.now.Unix() - 30, "ath": AccessTokenHash(fx.token)}))
	f.Add(fx.sign(map[string]any{"typ": "dpop+jwt", "alg": "ES256", "jwk": fx.jwk, "crit": []string{"x"}},
		map[string]any{"jti": "j", "htm": "GET", "htu": fx.htu, "iat": 1.5, "ath": "x", "nonce": 1}))
	f.Add(strings.Replace(valid, ".", "..", 1))
	f.Add("e30.e30.")
	f.Add("")
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := Verify(raw, fx.check())
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || p != nil {
				t.Fatalf("refusal %v is not an *Error", err)
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
		if sum, err := h.JSONWebKey.Thumbprint(crypto.SHA256); err != nil || b64.EncodeToString(sum) != fx.jkt || p.JKT != fx.jkt {
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
		htu, ok := NormalizeHTU(c.HTU)
		iat := time.Unix(0, int64(c.IAT*1e9))
		switch {
		case c.HTM != "POST":
			t.Fatalf("accepted htm %q", c.HTM)
		case !ok || htu != fx.htu:
			t.Fatalf("accepted htu %q", c.HTU)
		case c.JTI == "" || utf8.RuneCountInString(c.JTI) > MaxJTILen || c.JTI != p.JTI:
			t.Fatalf("accepted jti %q", c.JTI)
		case c.ATH != AccessTokenHash(fx.token):
			t.Fatalf("accepted ath %q", c.ATH)
		case iat.Before(fx.now.Add(-testMaxAge-time.Second)) || iat.After(fx.now.Add(testMaxFuture+time.Second)):
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
		got, ok := NormalizeHTU(tc.in)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("NormalizeHTU(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}

// BenchmarkVerifyProof measures the proof checks of RFC 9449 section 4.3 (signature included,
// replay store excluded).
func BenchmarkVerifyProof(b *testing.B) {
	fx := newProofFixture(b)
	proof := fx.proof("bench")
	check := fx.check()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Verify(proof, check); err != nil {
			b.Fatal(err)
		}
	}
}

// TestProofRepeatsMember: a proof whose header or payload names a member twice is refused, even
// when the last of each, the one encoding/json keeps, would make a valid proof.
func TestProofRepeatsMember(t *testing.T) {
	fx := newProofFixture(t)
	jwk, _ := json.Marshal(fx.jwk)
	header := `{"typ":"dpop+jwt","alg":"ES256","jwk":` + string(jwk) + `}`
	claims := fmt.Sprintf(`{"jti":"j1","htm":"POST","htu":%q,"iat":%d,"ath":%q}`, fx.htu, fx.now.Unix(), AccessTokenHash(fx.token))
	if _, err := Verify(fx.signRaw(header, claims), fx.check()); err != nil {
		t.Fatalf("the proof without repeats: %v", err)
	}
	for _, tc := range []struct{ name, header, claims string }{
		{"ath twice", header, `{"ath":"a",` + claims[1:]},
		{"ath twice, in another case", header, `{"ATH":"a",` + claims[1:]},
		{"htu twice", header, `{"htu":"https://evil.example/engine",` + claims[1:]},
		{"alg twice", `{"alg":"none",` + header[1:], claims},
		{"jwk twice", `{"jwk":{"kty":"EC"},` + header[1:], claims},
		{"a jwk coordinate twice", strings.Replace(header, `"kty":"EC"`, `"kty":"EC","x":"AA"`, 1), claims},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Verify(fx.signRaw(tc.header, tc.claims), fx.check())
			var pe *Error
			if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "names a member twice") {
				t.Fatalf("Verify = %v, want a refusal of the repeated member", err)
			}
		})
	}
}

// signRaw returns the compact ES256 JWS of header and claims, JSON texts signed as written.
func (f *proofFixture) signRaw(header, claims string) string {
	input := b64.EncodeToString([]byte(header)) + "." + b64.EncodeToString([]byte(claims))
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
