package demobank_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net/http"
	"testing"
	"time"

	"github.com/convengine/engine/examples/demobank"
)

// FuzzVerify: whatever a caller puts in the proof headers and the body, the bank's check of a
// forwarded proof answers with a refusal, never a panic, and never verifies without a valid
// signature of the enrolled key.
func FuzzVerify(f *testing.F) {
	f.Add("action-proof+jwt", "eyJhbGciOiJFUzI1NiJ9.e30.AAAA", "a.eyJ0b29sIjoidHJhbnNmZXIifQ.c", "eyJrdHkiOiJFQyJ9", `{"amount":20,"to":"Alex"}`, "k1")
	f.Add("webauthn", "eyJjcmVkZW50aWFsSWQiOiIifQ", "a.b.c", "", `{}`, "")
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	v := &demobank.Verifier{RPID: "bank.example", Origins: []string{"https://bank.example"}}
	f.Fuzz(func(t *testing.T, typ, proof, token, deviceKey, body, idem string) {
		h := http.Header{}
		h.Set("Engine-Action-Proof-Type", typ)
		h.Set("Engine-Action-Proof", proof)
		h.Set("Engine-Action-Token", token)
		h.Set("Engine-Device-Key", deviceKey)
		h.Set("Idempotency-Key", idem)
		fw := &demobank.Forwarded{Header: h, Body: []byte(body)}
		fw.PresentedKey()
		if _, err := v.Verify(fw, &key.PublicKey, 0, time.Now()); err == nil {
			t.Fatalf("verified without a signature of the key: %q %q %q", typ, proof, token)
		}
	})
}
