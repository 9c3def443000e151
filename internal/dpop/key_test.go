package dpop

import (
	"testing"
)

// TestThumbprintVectors checks the thumbprint of a device key against the example of RFC 9449
// (section 6.1, the EC key of its proofs).
func TestThumbprintVectors(t *testing.T) {
	const ec = `{"kty":"EC","x":"l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs","y":"9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA","crv":"P-256"}`
	key, err := ParseKey([]byte(ec))
	if err != nil {
		t.Fatal(err)
	}
	if want := "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"; key.Thumbprint != want {
		t.Errorf("RFC 9449 vector: got %s, want %s", key.Thumbprint, want)
	}
}
