package agui_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine/client"
)

// forgeAmount returns the interrupt id with the transfer's amount raised.
func forgeAmount(t *testing.T, id string) string {
	t.Helper()
	data, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(id, "confirm."))
	if err != nil {
		t.Fatal(err)
	}
	var x struct {
		Tool      string         `json:"tool"`
		Arguments map[string]any `json:"arguments"`
		Token     string         `json:"token"`
	}
	if err := json.Unmarshal(data, &x); err != nil {
		t.Fatal(err)
	}
	if _, ok := x.Arguments["amount"]; !ok {
		t.Fatalf("no amount in %s", data)
	}
	x.Arguments["amount"] = 2000
	data, _ = json.Marshal(x)
	return "confirm." + base64.RawURLEncoding.EncodeToString(data)
}

// fakeID is a well-formed interrupt id whose token the engine never made.
func fakeID() string {
	return "confirm." + base64.RawURLEncoding.EncodeToString([]byte(`{"tool":"transfer_funds","arguments":{},"token":"x.y.z"}`))
}

// device is a device's P-256 key: it signs the DPoP proofs of a bound session's requests and,
// as the session's gate key, the proofs of confirmed actions.
type device struct {
	key *ecdsa.PrivateKey
	jwk json.RawMessage
}

func newDevice(t *testing.T) *device {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwk, err := client.PublicJWK(key)
	if err != nil {
		t.Fatal(err)
	}
	return &device{key: key, jwk: jwk}
}

// sign returns the compact ES256 JWS of header and payload: the signature is r||s.
func (d *device) sign(t *testing.T, header, payload any) string {
	t.Helper()
	h, _ := json.Marshal(header)
	p, _ := json.Marshal(payload)
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p)
	sum := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, d.key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func ath(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// headers returns the Authorization and DPoP headers of one POST to url in the session of token.
func (d *device) headers(t *testing.T, url, token string) http.Header {
	t.Helper()
	jti := make([]byte, 16)
	rand.Read(jti)
	proof := d.sign(t, map[string]any{"typ": "dpop+jwt", "alg": "ES256", "jwk": d.jwk},
		map[string]any{"jti": base64.RawURLEncoding.EncodeToString(jti), "htm": "POST", "htu": url,
			"iat": time.Now().Unix(), "ath": ath(token)})
	return http.Header{"Authorization": {"DPoP " + token}, "Dpop": {proof}}
}

// actionProof returns the device's proof of the action token, for auth.method and
// auth.verifiedAt (its JSON, as the resume sends it).
func (d *device) actionProof(t *testing.T, token, method string, verifiedAt json.RawMessage) string {
	t.Helper()
	return d.sign(t, map[string]any{"typ": "action-proof+jwt", "alg": "ES256"},
		map[string]any{"ath": ath(token), "method": method, "verifiedAt": verifiedAt, "iat": time.Now().Unix()})
}

// tokenOf returns the action token an interrupt id carries.
func tokenOf(t *testing.T, id string) string {
	t.Helper()
	data, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(id, "confirm."))
	if err != nil {
		t.Fatal(err)
	}
	var x struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(data, &x); err != nil || x.Token == "" {
		t.Fatalf("no token in %s: %v", data, err)
	}
	return x.Token
}
