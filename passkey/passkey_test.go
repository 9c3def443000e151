package passkey_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/dpop"
	"github.com/convengine/engine/passkey"
)

const (
	rpID       = "bank.example"
	origin     = "https://bank.example"
	thumbprint = "device-key-thumbprint"
	token      = "action-token"
)

var b64 = base64.RawURLEncoding

func relyingParty(t *testing.T) *passkey.RelyingParty {
	t.Helper()
	rp, err := passkey.New(passkey.Options{RPID: rpID, Origins: []string{origin}, DisplayName: "Bank"})
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

// gateChallenge is the registration's challenge and user handle of the session bound to the
// device key of thumbprint, as the engine derives it.
func gateChallenge(thumbprint string) []byte {
	sum := sha256.Sum256([]byte("convengine gate credential\x00" + thumbprint))
	return sum[:]
}

// authenticator is a software passkey: a P-256 key (or an RSA key), "none" attestation, flags
// and a signature counter set by the test.
type authenticator struct {
	key     *ecdsa.PrivateKey
	rsa     *rsa.PrivateKey // an RS256 passkey's key, instead of key
	id      []byte
	rpID    string
	flags   byte
	counter uint32
}

const (
	flagUP = 0x01
	flagUV = 0x04
	flagAT = 0x40
)

func newAuthenticator(t *testing.T) *authenticator {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 16)
	rand.Read(id)
	return &authenticator{key: k, id: id, rpID: rpID, flags: flagUP | flagUV}
}

// authData is rpIdHash, flags, counter, and with attested the credential's data.
func (a *authenticator) authData(attested bool) []byte {
	rp := sha256.Sum256([]byte(a.rpID))
	flags := a.flags
	if attested {
		flags |= flagAT
	}
	b := append(rp[:], flags)
	b = binary.BigEndian.AppendUint32(b, a.counter)
	if attested {
		var cose []byte
		if a.rsa != nil {
			cose, _ = cbor.Marshal(map[int]any{1: 3, 3: -257, -1: a.rsa.N.Bytes(), -2: big.NewInt(int64(a.rsa.E)).Bytes()})
		} else {
			raw, _ := a.key.PublicKey.Bytes()
			cose, _ = cbor.Marshal(map[int]any{1: 2, 3: -7, -1: 1, -2: raw[1:33], -3: raw[33:]})
		}
		b = append(b, make([]byte, 16)...) // AAGUID
		b = binary.BigEndian.AppendUint16(b, uint16(len(a.id)))
		b = append(b, a.id...)
		b = append(b, cose...)
	}
	return b
}

func clientData(typ string, challenge []byte, origin string) []byte {
	b, _ := json.Marshal(map[string]any{"type": typ, "challenge": b64.EncodeToString(challenge), "origin": origin, "crossOrigin": false})
	return b
}

// register returns navigator.credentials.create's PublicKeyCredential over client data cd.
func (a *authenticator) register(cd []byte) json.RawMessage {
	att, _ := cbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": a.authData(true)})
	b, _ := json.Marshal(map[string]any{
		"id": b64.EncodeToString(a.id), "rawId": b64.EncodeToString(a.id), "type": "public-key",
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(cd), "attestationObject": b64.EncodeToString(att)},
	})
	return b
}

// assert returns an assertion over client data cd: its signature is over authData ||
// SHA-256(clientDataJSON).
func (a *authenticator) assert(cd []byte) *engine.PasskeyAssertion {
	data := a.authData(false)
	sum := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte(nil), data...), sum[:]...))
	var sig []byte
	var err error
	if a.rsa != nil {
		sig, err = rsa.SignPKCS1v15(nil, a.rsa, crypto.SHA256, digest[:])
	} else {
		sig, err = ecdsa.SignASN1(rand.Reader, a.key, digest[:])
	}
	if err != nil {
		panic(err)
	}
	return &engine.PasskeyAssertion{CredentialID: b64.EncodeToString(a.id), ClientDataJSON: b64.EncodeToString(cd),
		AuthenticatorData: b64.EncodeToString(data), Signature: b64.EncodeToString(sig)}
}

func actionChallenge(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// twice is client data that names challenge twice, the first one wrong.
func twice(typ string, challenge []byte) []byte {
	return []byte(`{"type":"` + typ + `","challenge":"` + b64.EncodeToString([]byte("other")) +
		`","challenge":"` + b64.EncodeToString(challenge) + `","origin":"` + origin + `","crossOrigin":false}`)
}

func TestRegister(t *testing.T) {
	rp := relyingParty(t)
	good := gateChallenge(thumbprint)
	for _, tc := range []struct {
		name   string
		change func(a *authenticator) []byte // returns the client data
		ok     bool
	}{
		{"accepted", func(a *authenticator) []byte { return clientData("webauthn.create", good, origin) }, true},
		{"the challenge of another device key", func(a *authenticator) []byte {
			return clientData("webauthn.create", gateChallenge("another"), origin)
		}, false},
		{"another origin", func(a *authenticator) []byte { return clientData("webauthn.create", good, "https://evil.example") }, false},
		{"another relying party", func(a *authenticator) []byte {
			a.rpID = "evil.example"
			return clientData("webauthn.create", good, origin)
		}, false},
		{"user not present", func(a *authenticator) []byte {
			a.flags &^= flagUP
			return clientData("webauthn.create", good, origin)
		}, false},
		{"user not verified", func(a *authenticator) []byte {
			a.flags &^= flagUV
			return clientData("webauthn.create", good, origin)
		}, false},
		{"an assertion's type", func(a *authenticator) []byte { return clientData("webauthn.get", good, origin) }, false},
		{"a member named twice", func(a *authenticator) []byte { return twice("webauthn.create", good) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAuthenticator(t)
			raw := a.register(tc.change(a))
			cred, err := rp.Register(t.Context(), raw, gateChallenge(thumbprint))
			if tc.ok != (err == nil) {
				t.Fatalf("Register: %v", err)
			}
			if err != nil {
				return
			}
			jwk, id, err := rp.PublicKey(cred)
			if err != nil {
				t.Fatal(err)
			}
			if id != b64.EncodeToString(a.id) {
				t.Fatalf("credential id %s, want %s", id, b64.EncodeToString(a.id))
			}
			raw2, _ := a.key.PublicKey.Bytes()
			var k struct{ Kty, Crv, X, Y string }
			json.Unmarshal(jwk, &k)
			if k.Kty != "EC" || k.Crv != "P-256" || k.X != b64.EncodeToString(raw2[1:33]) || k.Y != b64.EncodeToString(raw2[33:]) {
				t.Fatalf("public key %s is not the authenticator's", jwk)
			}
		})
	}
	var none *passkey.RelyingParty
	if _, err := none.Register(t.Context(), newAuthenticator(t).register(clientData("webauthn.create", good, origin)), good); err == nil {
		t.Fatal("Register without a relying party accepted")
	}
	if _, err := rp.Register(t.Context(), json.RawMessage(`{"id":"x"}`), good); err == nil {
		t.Fatal("Register of garbage accepted")
	}
}

// registered returns an authenticator and its credential as Register keeps it.
func registered(t *testing.T, rp *passkey.RelyingParty) (*authenticator, json.RawMessage) {
	t.Helper()
	a := newAuthenticator(t)
	cred, err := rp.Register(t.Context(), a.register(clientData("webauthn.create", gateChallenge(thumbprint), origin)), gateChallenge(thumbprint))
	if err != nil {
		t.Fatal(err)
	}
	return a, cred
}

func TestVerify(t *testing.T) {
	rp := relyingParty(t)
	good := actionChallenge(token)
	for _, tc := range []struct {
		name   string
		change func(a *authenticator, x *engine.PasskeyAssertion) *engine.PasskeyAssertion // nil: keep x
		cd     []byte
		ok     bool
	}{
		{"accepted", nil, nil, true},
		{"the challenge of another action", nil, clientData("webauthn.get", actionChallenge("another"), origin), false},
		{"another origin", nil, clientData("webauthn.get", good, "https://evil.example"), false},
		{"a registration's type", nil, clientData("webauthn.create", good, origin), false},
		{"a member named twice", nil, twice("webauthn.get", good), false},
		{"another relying party", func(a *authenticator, _ *engine.PasskeyAssertion) *engine.PasskeyAssertion {
			a.rpID = "evil.example"
			return nil
		}, nil, false},
		{"user not present", func(a *authenticator, _ *engine.PasskeyAssertion) *engine.PasskeyAssertion {
			a.flags &^= flagUP
			return nil
		}, nil, false},
		{"user not verified", func(a *authenticator, _ *engine.PasskeyAssertion) *engine.PasskeyAssertion {
			a.flags &^= flagUV
			return nil
		}, nil, false},
		{"a bad signature", func(_ *authenticator, x *engine.PasskeyAssertion) *engine.PasskeyAssertion {
			sig, _ := b64.DecodeString(x.Signature)
			sig[len(sig)-1] ^= 1
			x.Signature = b64.EncodeToString(sig)
			return x
		}, nil, false},
		{"signed by another key", func(a *authenticator, _ *engine.PasskeyAssertion) *engine.PasskeyAssertion {
			a.key = newAuthenticator(t).key
			return nil
		}, nil, false},
		{"authenticator data changed after signing", func(_ *authenticator, x *engine.PasskeyAssertion) *engine.PasskeyAssertion {
			data, _ := b64.DecodeString(x.AuthenticatorData)
			data[len(data)-1]++ // the counter
			x.AuthenticatorData = b64.EncodeToString(data)
			return x
		}, nil, false},
		{"another credential id", func(_ *authenticator, x *engine.PasskeyAssertion) *engine.PasskeyAssertion {
			x.CredentialID = b64.EncodeToString([]byte("another credential"))
			return x
		}, nil, false},
		{"another user handle", func(_ *authenticator, x *engine.PasskeyAssertion) *engine.PasskeyAssertion {
			x.UserHandle = b64.EncodeToString(gateChallenge("another"))
			return x
		}, nil, false},
		{"its own user handle", func(_ *authenticator, x *engine.PasskeyAssertion) *engine.PasskeyAssertion {
			x.UserHandle = b64.EncodeToString(gateChallenge(thumbprint))
			return x
		}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, cred := registered(t, rp)
			a.counter = 1
			cd := tc.cd
			if cd == nil {
				cd = clientData("webauthn.get", good, origin)
			}
			var x *engine.PasskeyAssertion
			if tc.change != nil {
				x = tc.change(a, a.assert(cd))
			}
			if x == nil {
				x = a.assert(cd)
			}
			_, counter, err := rp.Verify(t.Context(), cred, gateChallenge(thumbprint), good, x)
			if tc.ok != (err == nil) {
				t.Fatalf("Verify: %v", err)
			}
			if err == nil && counter != 1 {
				t.Fatalf("counter %d, want 1", counter)
			}
			if err != nil && strings.Contains(err.Error(), token) {
				t.Fatalf("the error names the action token: %v", err)
			}
		})
	}
}

// TestVerifyCounter: each assertion's counter must pass the last one kept, unless the
// authenticator keeps no counter (always 0, as synced passkeys do).
func TestVerifyCounter(t *testing.T) {
	rp := relyingParty(t)
	cd := clientData("webauthn.get", actionChallenge(token), origin)
	a, cred := registered(t, rp)
	for _, step := range []struct {
		counter uint32
		ok      bool
	}{{5, true}, {5, false}, {4, false}, {6, true}, {0, false}, {100, true}} {
		a.counter = step.counter
		next, got, err := rp.Verify(t.Context(), cred, gateChallenge(thumbprint), actionChallenge(token), a.assert(cd))
		if step.ok != (err == nil) {
			t.Fatalf("counter %d after the last kept: %v", step.counter, err)
		}
		if err == nil {
			if got != step.counter {
				t.Fatalf("counter %d returned for %d", got, step.counter)
			}
			cred = next
		}
	}

	b, cred := registered(t, rp)
	for i := range 3 {
		next, _, err := rp.Verify(t.Context(), cred, gateChallenge(thumbprint), actionChallenge(token), b.assert(cd))
		if err != nil {
			t.Fatalf("assertion %d of an authenticator without a counter: %v", i, err)
		}
		cred = next
	}
}

func TestVerifyStored(t *testing.T) {
	rp := relyingParty(t)
	a, cred := registered(t, rp)
	a.counter = 1
	x := a.assert(clientData("webauthn.get", actionChallenge(token), origin))
	var none *passkey.RelyingParty
	if _, _, err := none.Verify(t.Context(), cred, gateChallenge(thumbprint), actionChallenge(token), x); err == nil {
		t.Fatal("Verify without a relying party accepted")
	}
	if _, _, err := rp.Verify(t.Context(), json.RawMessage(`"garbage"`), gateChallenge(thumbprint), actionChallenge(token), x); err == nil {
		t.Fatal("Verify against an unreadable credential accepted")
	}
	// An assertion that names its user (the registration's challenge) is refused for another
	// device's session.
	x.UserHandle = b64.EncodeToString(gateChallenge(thumbprint))
	if _, _, err := rp.Verify(t.Context(), cred, gateChallenge("another device"), actionChallenge(token), x); err == nil {
		t.Fatal("Verify of an assertion for another device's session accepted")
	}
	if _, _, err := rp.PublicKey(json.RawMessage(`{`)); err == nil {
		t.Fatal("PublicKey of an unreadable credential accepted")
	}
}

// newRSAAuthenticator is an RS256 passkey, as a TPM-backed Windows Hello authenticator makes
// one, with a modulus of bits.
func newRSAAuthenticator(t *testing.T, bits int) *authenticator {
	t.Helper()
	a := newAuthenticator(t)
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	a.key, a.rsa = nil, k
	return a
}

// TestRS256: the web client offers RS256 beside ES256 (pubKeyCredParams -7, -257), and an
// authenticator that can only make RSA keys picks it: its passkey registers, its public key is
// an RSA JWK with its RFC 7638 thumbprint, and its assertions verify, a forged one and one of
// another key not. A modulus under 2048 bits is refused.
func TestRS256(t *testing.T) {
	rp := relyingParty(t)
	a := newRSAAuthenticator(t, 2048)
	cred, err := rp.Register(t.Context(), a.register(clientData("webauthn.create", gateChallenge(thumbprint), origin)), gateChallenge(thumbprint))
	if err != nil {
		t.Fatalf("Register of an RS256 passkey: %v", err)
	}
	jwk, id, err := rp.PublicKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	if id != b64.EncodeToString(a.id) {
		t.Fatalf("credential id %s, want the authenticator's", id)
	}
	var k map[string]string
	json.Unmarshal(jwk, &k)
	if len(k) != 3 || k["kty"] != "RSA" || k["n"] != b64.EncodeToString(a.rsa.N.Bytes()) || k["e"] != "AQAB" {
		t.Fatalf("public key %s is not the authenticator's as an RSA JWK", jwk)
	}
	// RFC 7638: the members required for RSA, in lexicographic order, as the engine computes it.
	sum := sha256.Sum256([]byte(`{"e":"AQAB","kty":"RSA","n":"` + k["n"] + `"}`))
	if key, err := dpop.ParsePasskeyKey(jwk); err != nil || key.Thumbprint != b64.EncodeToString(sum[:]) {
		t.Fatalf("the engine's thumbprint of %s: %v, %v; want %s", jwk, key, err, b64.EncodeToString(sum[:]))
	}

	good := clientData("webauthn.get", actionChallenge(token), origin)
	a.counter = 1
	cred, counter, err := rp.Verify(t.Context(), cred, gateChallenge(thumbprint), actionChallenge(token), a.assert(good))
	if err != nil || counter != 1 {
		t.Fatalf("Verify of an RS256 assertion: %d, %v", counter, err)
	}
	a.counter = 2
	forged := a.assert(good)
	sig, _ := b64.DecodeString(forged.Signature)
	sig[len(sig)/2] ^= 1
	forged.Signature = b64.EncodeToString(sig)
	if _, _, err := rp.Verify(t.Context(), cred, gateChallenge(thumbprint), actionChallenge(token), forged); err == nil {
		t.Fatal("Verify of a forged RS256 signature accepted")
	}
	other := newRSAAuthenticator(t, 2048)
	other.id, other.counter = a.id, 3
	if _, _, err := rp.Verify(t.Context(), cred, gateChallenge(thumbprint), actionChallenge(token), other.assert(good)); err == nil {
		t.Fatal("Verify of another RSA key's signature accepted")
	}
	a.counter = 4
	if _, _, err := rp.Verify(t.Context(), cred, gateChallenge(thumbprint), actionChallenge(token), a.assert(good)); err != nil {
		t.Fatalf("Verify of the next RS256 assertion: %v", err)
	}

	small := newRSAAuthenticator(t, 1024)
	_, err = rp.Register(t.Context(), small.register(clientData("webauthn.create", gateChallenge(thumbprint), origin)), gateChallenge(thumbprint))
	if err == nil || !strings.Contains(err.Error(), "fewer than 2048") {
		t.Fatalf("Register of a 1024-bit RSA passkey: %v", err)
	}
}
