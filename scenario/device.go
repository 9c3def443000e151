package scenario

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"time"

	"github.com/convengine/engine/client"
)

// testDevice is the device of a scenario on a tenant that requires device proofs: a device key
// that binds its session, and a gate key, enrolled with the tenant's backend, that signs the
// proofs of its actions as a key behind the device's biometric gate would. Both live in memory
// for one scenario; they sign as the Go client's device does.
type testDevice struct {
	key, gate       *ecdsa.PrivateKey
	keyJWK, gateJWK json.RawMessage
}

func newTestDevice() (*testDevice, error) {
	d := &testDevice{}
	var err error
	for _, k := range []struct {
		key **ecdsa.PrivateKey
		jwk *json.RawMessage
	}{{&d.key, &d.keyJWK}, {&d.gate, &d.gateJWK}} {
		if *k.key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			return nil, err
		}
		if *k.jwk, err = client.PublicJWK(*k.key); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// actionProof signs the device's proof of one action (docs/actions.md) with its gate key.
func (d *testDevice) actionProof(token, method string, verifiedAt json.RawMessage, now time.Time) (string, error) {
	return client.ActionProof(d.gate, token, method, verifiedAt, now)
}
