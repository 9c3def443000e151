package dpop

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

// TestThumbprintVectors checks the thumbprint of a device key against the example of RFC 9449
// (section 6.1, the EC key of its proofs), and that of a passkey's RSA key against the example
// of RFC 7638 (section 3.1).
func TestThumbprintVectors(t *testing.T) {
	const ec = `{"kty":"EC","x":"l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs","y":"9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA","crv":"P-256"}`
	key, err := ParseKey([]byte(ec))
	if err != nil {
		t.Fatal(err)
	}
	if want := "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"; key.Thumbprint != want {
		t.Errorf("RFC 9449 vector: got %s, want %s", key.Thumbprint, want)
	}
	pk, err := ParsePasskeyKey([]byte(ec))
	if err != nil || pk.Thumbprint != key.Thumbprint {
		t.Errorf("ParsePasskeyKey of the RFC 9449 EC key: %v, %v", pk, err)
	}
	pk, err = ParsePasskeyKey([]byte(rfc7638Key))
	if err != nil {
		t.Fatal(err)
	}
	if want := "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"; pk.Thumbprint != want {
		t.Errorf("RFC 7638 vector: got %s, want %s", pk.Thumbprint, want)
	}
	if _, ok := pk.Public.(*rsa.PublicKey); !ok {
		t.Errorf("the RFC 7638 key is a %T", pk.Public)
	}
}

// rfc7638Key is the RSA key of RFC 7638's example (section 3.1).
const rfc7638Key = `{"kty":"RSA","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw","e":"AQAB","alg":"RS256","kid":"2011-04-29"}`

// rsaJWK is the public JWK of an RSA key of bits, with members changed by set.
func rsaJWK(t testing.TB, bits int, set map[string]any) []byte {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{"kty": "RSA", "n": b64.EncodeToString(k.N.Bytes()), "e": "AQAB"}
	for name, v := range set {
		if v == nil {
			delete(m, name)
		} else {
			m[name] = v
		}
	}
	raw, _ := json.Marshal(m)
	return raw
}

// privateRSAJWK is the JWK of an RSA private key of 2048 bits.
func privateRSAJWK(t testing.TB) []byte {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return mustJSON(t, jose.JSONWebKey{Key: k})
}

// TestParsePasskeyKey: a passkey's key may be RSA, of 2048 bits or more, spelled as its
// thumbprint spells it; the keys of sessions, gates and DPoP proofs may not.
func TestParsePasskeyKey(t *testing.T) {
	var n2048 map[string]string
	json.Unmarshal([]byte(rfc7638Key), &n2048)
	nb, _ := b64.DecodeString(n2048["n"])
	for _, tc := range []struct {
		name string
		jwk  []byte
		want string // in the refusal; "" for accepted
	}{
		{"RSA 2048", rsaJWK(t, 2048, nil), ""},
		{"RSA 3072, alg RS256, use sig", rsaJWK(t, 3072, map[string]any{"alg": "RS256", "use": "sig"}), ""},
		{"RSA 1024", rsaJWK(t, 1024, nil), "fewer than 2048"},
		{"an even exponent", rsaJWK(t, 2048, map[string]any{"e": b64.EncodeToString([]byte{1, 0, 0})}), "exponent"},
		{"an exponent past 2^31", rsaJWK(t, 2048, map[string]any{"e": b64.EncodeToString([]byte{2, 0, 0, 0, 1})}), "exponent"},
		{"a leading zero in n", rsaJWK(t, 2048, map[string]any{"n": b64.EncodeToString(append([]byte{0}, nb...))}), "leading zero"},
		{"a leading zero in e", rsaJWK(t, 2048, map[string]any{"e": "AAEAAQ"}), "leading zero"},
		{"without e", rsaJWK(t, 2048, map[string]any{"e": nil}), "must be a public JWK"},
		{"the private key", privateRSAJWK(t), "private key material"},
		{"alg ES256", rsaJWK(t, 2048, map[string]any{"alg": "ES256"}), `alg must be "RS256"`},
		{"use enc", rsaJWK(t, 2048, map[string]any{"use": "enc"}), `use must be "sig"`},
		{"an Ed25519 key", []byte(`{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}`), `kty must be "EC"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := ParsePasskeyKey(tc.jwk)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "" && k.Thumbprint == "":
				t.Fatal("accepted without a thumbprint")
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("ParsePasskeyKey = %v, want a refusal that says %q", err, tc.want)
			}
			// An RSA key is a passkey's only: never a session's, a gate's or a proof's.
			if _, err := ParseKey(tc.jwk); err == nil {
				t.Fatal("ParseKey accepted it")
			}
		})
	}
}

// TestProofOfAnRSAKey: a DPoP proof signed RS256 with an RSA key in its header is refused,
// even when the session is bound to that key's thumbprint.
func TestProofOfAnRSAKey(t *testing.T) {
	fx := newProofFixture(t)
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	jwk := jose.JSONWebKey{Key: &k.PublicKey}
	pk, err := ParsePasskeyKey(mustJSON(t, jwk))
	if err != nil {
		t.Fatal(err)
	}
	claims := mustJSON(t, map[string]any{"jti": "j", "htm": "POST", "htu": fx.htu, "iat": fx.now.Unix(), "ath": AccessTokenHash(fx.token)})
	for _, alg := range []jose.SignatureAlgorithm{jose.RS256, jose.PS256} {
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: k},
			(&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt"))
		if err != nil {
			t.Fatal(err)
		}
		jws, err := signer.Sign(claims)
		if err != nil {
			t.Fatal(err)
		}
		proof, _ := jws.CompactSerialize()
		check := fx.check()
		check.JKT = pk.Thumbprint
		if p, err := Verify(proof, check); err == nil {
			t.Fatalf("a %s proof of an RSA key accepted: %+v", alg, p)
		}
	}
	// An ES256 proof that names the RSA key is refused too.
	header := `{"typ":"dpop+jwt","alg":"ES256","jwk":` + string(mustJSON(t, jwk)) + `}`
	check := fx.check()
	check.JKT = pk.Thumbprint
	if _, err := Verify(fx.signRaw(header, string(claims)), check); err == nil {
		t.Fatal("an ES256 proof that names an RSA key accepted")
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// FuzzParsePasskeyKey feeds the passkey key reader arbitrary JWKs, as an authenticator's COSE
// key converted by a relying party could read. It must never panic; what it accepts is a public
// EC P-256 key or an RSA key of at least MinRSABits bits, whose thumbprint is go-jose's, and
// only the EC ones pass ParseKey.
func FuzzParsePasskeyKey(f *testing.F) {
	f.Add([]byte(rfc7638Key))
	f.Add(rsaJWK(f, 2048, map[string]any{"alg": "RS256"}))
	f.Add(rsaJWK(f, 2048, map[string]any{"e": "AAEAAQ"}))
	f.Add(privateRSAJWK(f))
	f.Add([]byte(`{"kty":"EC","crv":"P-256","x":"","y":""}`))
	f.Add([]byte(`{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		k, err := ParsePasskeyKey(raw)
		if err != nil {
			return
		}
		var jwk jose.JSONWebKey
		if err := jwk.UnmarshalJSON(raw); err != nil || !jwk.IsPublic() {
			t.Fatalf("accepted what go-jose does not read as a public key: %v", err)
		}
		sum, err := jwk.Thumbprint(crypto.SHA256)
		if err != nil || b64.EncodeToString(sum) != k.Thumbprint {
			t.Fatalf("thumbprint %q, go-jose's %x (%v)", k.Thumbprint, sum, err)
		}
		_, ecErr := ParseKey(raw)
		switch pub := k.Public.(type) {
		case *rsa.PublicKey:
			if pub.N.BitLen() < MinRSABits || ecErr == nil {
				t.Fatalf("accepted an RSA key of %d bits (ParseKey: %v)", pub.N.BitLen(), ecErr)
			}
		case *ecdsa.PublicKey:
			if pub.Curve != elliptic.P256() || ecErr != nil {
				t.Fatalf("accepted an EC key ParseKey refuses: %v", ecErr)
			}
		default:
			t.Fatalf("accepted a %T", k.Public)
		}
	})
}

func TestClientDataRepeatsAMember(t *testing.T) {
	enc := base64.RawURLEncoding.EncodeToString
	for _, tc := range []struct {
		clientData string
		want       bool
	}{
		{enc([]byte(`{"type":"webauthn.get","challenge":"a","origin":"https://bank.example"}`)), false},
		{enc([]byte(`{"type":"webauthn.get","challenge":"a","challenge":"b"}`)), true},
		{base64.URLEncoding.EncodeToString([]byte(`{"origin":"a","origin":"b"}`)), true}, // padded
		{"%%%", false},
	} {
		if got := ClientDataRepeatsAMember(tc.clientData); got != tc.want {
			t.Errorf("ClientDataRepeatsAMember(%q) = %v", tc.clientData, got)
		}
	}
	reg := []byte(`{"response":{"clientDataJSON":"` + enc([]byte(`{"type":"webauthn.create","type":"webauthn.get"}`)) + `"}}`)
	if !RegistrationRepeatsAMember(reg) || RegistrationRepeatsAMember([]byte(`{"response":{}}`)) {
		t.Error("a registration's clientDataJSON is not read")
	}
}
