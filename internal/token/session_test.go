package token

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"testing"
	"time"
)

func benchKeyring(b *testing.B, keys []Key) *Sessions {
	ring, err := NewSessions(keys, make([]byte, 32))
	if err != nil {
		b.Fatal(err)
	}
	return ring
}

func benchKeys(b *testing.B) map[string][]Key {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	return map[string][]Key{
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
			c := &SessionClaims{SID: "0b1e8f8e-3f59-4a4e-9a53-4d3c2a1b0c9d", TID: "pk_test", IAT: 1_800_000_000, EXP: 1_800_086_400,
				Cnf: &Cnf{JKT: "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ring.Sign(c); err != nil {
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
			tok, _ := ring.Sign(&SessionClaims{SID: "s", TID: "pk_test", IAT: 1_800_000_000, EXP: 1_800_086_400})
			now := time.Unix(1_800_000_100, 0)
			b.ReportAllocs()
			for b.Loop() {
				if c, reason := ring.Verify(tok, now); c == nil {
					b.Fatal(reason)
				}
			}
		})
	}
}

func ed25519Key() ed25519.PrivateKey { return ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)) }
