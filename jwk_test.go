package engine

import (
	"crypto"
	"encoding/json"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

// TestThumbprintVectors checks the RFC 7638 thumbprint against the examples of RFC 7638
// (section 3.1, an RSA key) and RFC 9449 (section 6.1, the EC key of its proofs), and against
// go-jose's implementation.
func TestThumbprintVectors(t *testing.T) {
	rsa := jwkThumbprint(map[string]string{
		"kty": "RSA",
		"e":   "AQAB",
		"n":   "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
	})
	if want := "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"; rsa != want {
		t.Errorf("RFC 7638 vector: got %s, want %s", rsa, want)
	}

	const ec = `{"kty":"EC","x":"l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs","y":"9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA","crv":"P-256"}`
	key, err := parseDeviceJWK(json.RawMessage(ec))
	if err != nil {
		t.Fatal(err)
	}
	if want := "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"; key.thumbprint != want {
		t.Errorf("RFC 9449 vector: got %s, want %s", key.thumbprint, want)
	}
	var jk jose.JSONWebKey
	if err := jk.UnmarshalJSON([]byte(ec)); err != nil {
		t.Fatal(err)
	}
	sum, err := jk.Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	if got := b64.EncodeToString(sum); got != key.thumbprint {
		t.Errorf("go-jose thumbprint %s differs from %s", got, key.thumbprint)
	}
}
