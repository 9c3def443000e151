package scenario

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"time"
)

var b64 = base64.RawURLEncoding

// testDevice is the device of a scenario on a tenant that requires device proofs: a device key
// that binds its session, and a gate key, enrolled with the tenant's backend, that signs the
// proofs of its actions as a key behind the device's biometric gate would. Both live in memory
// for one scenario.
type testDevice struct {
	key, gate *ecdsa.PrivateKey
}

func newTestDevice() (*testDevice, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	gate, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return &testDevice{key: key, gate: gate}, nil
}

// publicJWK is k's public key as an EC P-256 JWK, its members in RFC 7638 order.
func publicJWK(k *ecdsa.PrivateKey) json.RawMessage {
	raw, _ := k.PublicKey.Bytes() // 0x04 || x || y
	return json.RawMessage(`{"crv":"P-256","kty":"EC","x":"` + b64.EncodeToString(raw[1:33]) + `","y":"` + b64.EncodeToString(raw[33:]) + `"}`)
}

// actionProof signs the device's proof of one action (docs/actions.md): the hash of its action
// token, the gate's method and verifiedAt as the execute request carries them, and the time.
func (d *testDevice) actionProof(token, method string, verifiedAt json.RawMessage, now time.Time) (string, error) {
	sum := sha256.Sum256([]byte(token))
	payload, err := json.Marshal(struct {
		ATH        string          `json:"ath"`
		Method     string          `json:"method"`
		VerifiedAt json.RawMessage `json:"verifiedAt"`
		IAT        int64           `json:"iat"`
	}{b64.EncodeToString(sum[:]), method, verifiedAt, now.Unix()})
	if err != nil {
		return "", err
	}
	input := b64.EncodeToString([]byte(`{"typ":"action-proof+jwt","alg":"ES256"}`)) + "." + b64.EncodeToString(payload)
	digest := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, d.gate, digest[:])
	if err != nil {
		return "", err
	}
	var sig [64]byte
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + b64.EncodeToString(sig[:]), nil
}
