package engine_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fxamacker/cbor/v2"

	"github.com/convengine/engine"
	"github.com/convengine/engine/passkey"
	"github.com/convengine/engine/widgets"
)

// passkeys is the relying party rpID of pages at origin.
func passkeys(t testing.TB, rpID, origin string) engine.Passkeys {
	rp, err := passkey.New(passkey.Options{RPID: rpID, Origins: []string{origin}})
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

// authenticator is a software passkey authenticator, as WebAuthn level 3 describes one: it
// registers a P-256 (or RSA) credential for an origin with "none" attestation and signs
// assertions, its user verification and signature counter set by the test.
type authenticator struct {
	key      *ecdsa.PrivateKey
	rsa      *rsa.PrivateKey // an RS256 credential's key, instead of key
	id       []byte
	rpID     string
	origin   string
	counter  uint32
	verified bool
}

func newAuthenticator(t testing.TB, rpID, origin string) *authenticator {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 16)
	rand.Read(id)
	return &authenticator{key: k, id: id, rpID: rpID, origin: origin, verified: true}
}

func (a *authenticator) flags(attested bool) byte {
	f := byte(0x01) // user present
	if a.verified {
		f |= 0x04
	}
	if attested {
		f |= 0x40
	}
	return f
}

func (a *authenticator) authData(attested bool) []byte {
	rp := sha256.Sum256([]byte(a.rpID))
	b := append(rp[:], a.flags(attested))
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

// register returns the JSON of navigator.credentials.create's PublicKeyCredential.
func (a *authenticator) register(challenge []byte) string {
	att, _ := cbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": a.authData(true)})
	b, _ := json.Marshal(map[string]any{
		"id": b64.EncodeToString(a.id), "rawId": b64.EncodeToString(a.id), "type": "public-key",
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(clientData("webauthn.create", challenge, a.origin)),
			"attestationObject": b64.EncodeToString(att)},
	})
	return string(b)
}

// assert returns auth.webauthn for challenge, the counter advanced first.
func (a *authenticator) assert(challenge []byte, origin string) map[string]any {
	return a.assertData(clientData("webauthn.get", challenge, origin))
}

// assertData returns auth.webauthn over the client data cd, the counter advanced first.
func (a *authenticator) assertData(cd []byte) map[string]any {
	a.counter++
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
	return map[string]any{"credentialId": b64.EncodeToString(a.id), "clientDataJSON": b64.EncodeToString(cd),
		"authenticatorData": b64.EncodeToString(data), "signature": b64.EncodeToString(sig)}
}

// gateChallenge is the registration challenge of the session bound to d, as the protocol sets.
func gateChallenge(d *device) []byte {
	sum := sha256.Sum256([]byte("convengine gate credential\x00" + d.thumbprint()))
	return sum[:]
}

func executeWithPasskey(x widgets.Execute, verifiedAt string, assertion map[string]any) string {
	xb, _ := json.Marshal(x)
	ab, _ := json.Marshal(map[string]any{"method": "faceid", "verifiedAt": verifiedAt, "webauthn": assertion})
	return `{"execute":` + string(xb) + `,"auth":` + string(ab) + `}`
}

// TestPasskeyGate: a session registers a passkey as its gate (the registration's challenge
// derived from its device key); an action then runs only with an assertion of that passkey over
// the action token, user verified, from the relying party's origin, with a counter that
// advanced. Every other assertion is 403 invalid_device_proof and the backend is not called.
func TestPasskeyGate(t *testing.T) {
	const rpID, origin = "bank.example", "https://bank.example"
	g := &gated{device: newDevice(t), gate: newDevice(t), tools: bankTools()}
	tn := testTenant()
	tn.RequireActionProof = true
	model := modelFunc(func(context.Context, *engine.ModelRequest) []engine.ModelEvent {
		return []engine.ModelEvent{engine.TextEvent("Please confirm."), call("c1", "transfer", `{"to":"Alex","amount":20}`)}
	})
	g.h = newHarness(t, engine.Config{Model: model, Toolset: g.tools, Passkeys: passkeys(t, rpID, origin)}, tn)
	auth := newAuthenticator(t, rpID, origin)

	// Registrations that do not hold.
	for _, tc := range []struct{ name, body string }{
		{"for another device key", `{"public_key":` + g.device.jwkJSON() + `,"gate_credential":` + auth.register(gateChallenge(newDevice(t))) + `}`},
		{"without a public_key", `{"gate_credential":` + auth.register(gateChallenge(g.device)) + `}`},
		{"with a gate_key too", `{"public_key":` + g.device.jwkJSON() + `,"gate_key":` + g.gate.jwkJSON() + `,"gate_credential":` + auth.register(gateChallenge(g.device)) + `}`},
		{"not a credential", `{"public_key":` + g.device.jwkJSON() + `,"gate_credential":{"id":"x"}}`},
	} {
		resp := g.h.do(t.Context(), http.MethodPost, engine.PathCreateSession, headers(), tc.body)
		if p := readProblem(t, resp); resp.StatusCode != 400 || p.Field != "gate_credential" {
			t.Errorf("a registration %s: %d %+v", tc.name, resp.StatusCode, p)
		}
	}
	g.sess = g.h.createSession(t, headers(), `{"public_key":`+g.device.jwkJSON()+`,"gate_credential":`+auth.register(gateChallenge(g.device))+`}`)

	c := g.confirm(t)
	other := g.confirm(t)
	now := time.Now().UTC().Format(time.RFC3339)
	tokenHash := func(tok string) []byte { sum := sha256.Sum256([]byte(tok)); return sum[:] }
	withoutUV := func() map[string]any {
		auth.verified = false
		defer func() { auth.verified = true }()
		return auth.assert(tokenHash(c.Execute.Token), origin)
	}
	for _, tc := range []struct {
		name string
		body string
	}{
		{"user not verified", executeWithPasskey(c.Execute, now, withoutUV())},
		{"for another action's token", executeWithPasskey(c.Execute, now, auth.assert(tokenHash(other.Execute.Token), origin))},
		{"from another origin", executeWithPasskey(c.Execute, now, auth.assert(tokenHash(c.Execute.Token), "https://evil.example"))},
		{"by another authenticator", executeWithPasskey(c.Execute, now, newAuthenticator(t, rpID, origin).assert(tokenHash(c.Execute.Token), origin))},
		{"a JWS of the device key instead", executeWithProof(c.Execute, "faceid", now, strPtr(actionProof(g.device, c.Execute.Token, "faceid", now, nil)))},
		// Two challenges: a parser that keeps the first reads another action than one that
		// keeps the last, so the engine and the bank could disagree on what was approved.
		{"a clientDataJSON with two challenges", executeWithPasskey(c.Execute, now, auth.assertData([]byte(
			`{"type":"webauthn.get","challenge":"`+b64.EncodeToString(tokenHash(other.Execute.Token))+`","challenge":"`+
				b64.EncodeToString(tokenHash(c.Execute.Token))+`","origin":"`+origin+`"}`)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := g.signed(t, engine.PathExecute, tc.body)
			if status != http.StatusForbidden || !strings.Contains(string(body), engine.CodeInvalidDeviceProof) {
				t.Fatalf("%d %s", status, body)
			}
		})
	}
	if n := len(g.tools.Calls()); n != 0 {
		t.Fatalf("a refused execute reached the backend %d times", n)
	}
	status, body := g.signed(t, engine.PathExecute, executeWithPasskey(c.Execute, now, auth.assert(tokenHash(c.Execute.Token), origin)))
	if status != 200 || len(g.tools.Calls()) != 1 {
		t.Fatalf("a valid assertion: %d %s", status, body)
	}
	// The backend gets the passkey by its public key, never by its credential id alone.
	if p := g.tools.Calls()[0].Env.Proof; p == nil || p.Type != engine.ProofTypeWebAuthn || p.Key.Kind != engine.DeviceKeyPasskey ||
		!strings.Contains(string(p.Key.PublicKey), `"x":"`+b64.EncodeToString(auth.key.PublicKey.X.FillBytes(make([]byte, 32)))+`"`) {
		t.Fatalf("the backend got the proof %+v", p)
	}
	// RFC 7638: the members required for EC, in lexicographic order.
	var k struct{ X, Y string }
	json.Unmarshal(g.tools.Calls()[0].Env.Proof.Key.PublicKey, &k)
	if sum := sha256.Sum256([]byte(`{"crv":"P-256","kty":"EC","x":"` + k.X + `","y":"` + k.Y + `"}`)); g.tools.Calls()[0].Env.Proof.Key.Thumbprint != b64.EncodeToString(sum[:]) {
		t.Fatalf("the passkey's thumbprint %s is not the RFC 7638 thumbprint of its key", g.tools.Calls()[0].Env.Proof.Key.Thumbprint)
	}
	// An assertion whose counter is behind the one the engine saw last (a replayed or cloned
	// authenticator) is refused.
	third := g.confirm(t)
	seen := auth.counter
	auth.counter = 1
	stale := auth.assert(tokenHash(third.Execute.Token), origin)
	auth.counter = seen
	if status, body := g.signed(t, engine.PathExecute, executeWithPasskey(third.Execute, now, stale)); status != 403 || !strings.Contains(string(body), "counter") {
		t.Fatalf("a stale assertion: %d %s", status, body)
	}
	if status, body := g.signed(t, engine.PathExecute, executeWithPasskey(third.Execute, now, auth.assert(tokenHash(third.Execute.Token), origin))); status != 200 {
		t.Fatalf("the next assertion: %d %s", status, body)
	}
}

func strPtr(s string) *string { return &s }

// TestPasskeyGateRS256: the web client's passkey offers RS256 (-257) beside ES256, and an
// authenticator that makes RSA keys only (a TPM-backed Windows Hello) answers with one: the
// engine registers it as the session's gate, an action runs with its assertion, a forged one
// is refused, and the backend gets the passkey's public key as an RSA JWK with its RFC 7638
// thumbprint.
func TestPasskeyGateRS256(t *testing.T) {
	const rpID, origin = "bank.example", "https://bank.example"
	g := &gated{device: newDevice(t), gate: newDevice(t), tools: bankTools()}
	tn := testTenant()
	tn.RequireActionProof = true
	model := modelFunc(func(context.Context, *engine.ModelRequest) []engine.ModelEvent {
		return []engine.ModelEvent{engine.TextEvent("Please confirm."), call("c1", "transfer", `{"to":"Alex","amount":20}`)}
	})
	g.h = newHarness(t, engine.Config{Model: model, Toolset: g.tools, Passkeys: passkeys(t, rpID, origin)}, tn)
	auth := newAuthenticator(t, rpID, origin)
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	auth.key, auth.rsa = nil, k
	// Only a passkey may be RSA: the same key as a session's device key or gate key is refused.
	rsaJWK := `{"kty":"RSA","n":"` + b64.EncodeToString(k.N.Bytes()) + `","e":"AQAB"}`
	for _, tc := range []struct{ field, body string }{
		{"public_key", `{"public_key":` + rsaJWK + `}`},
		{"gate_key", `{"public_key":` + g.device.jwkJSON() + `,"gate_key":` + rsaJWK + `}`},
	} {
		resp := g.h.do(t.Context(), http.MethodPost, engine.PathCreateSession, headers(), tc.body)
		if p := readProblem(t, resp); resp.StatusCode != 400 || p.Field != tc.field {
			t.Errorf("an RSA key as %s: %d %+v", tc.field, resp.StatusCode, p)
		}
	}
	g.sess = g.h.createSession(t, headers(), `{"public_key":`+g.device.jwkJSON()+`,"gate_credential":`+auth.register(gateChallenge(g.device))+`}`)

	c := g.confirm(t)
	now := time.Now().UTC().Format(time.RFC3339)
	sum := sha256.Sum256([]byte(c.Execute.Token))
	forged := auth.assert(sum[:], origin)
	sig, _ := b64.DecodeString(forged["signature"].(string))
	sig[10] ^= 1
	forged["signature"] = b64.EncodeToString(sig)
	if status, body := g.signed(t, engine.PathExecute, executeWithPasskey(c.Execute, now, forged)); status != 403 || !strings.Contains(string(body), engine.CodeInvalidDeviceProof) {
		t.Fatalf("a forged RS256 assertion: %d %s", status, body)
	}
	if n := len(g.tools.Calls()); n != 0 {
		t.Fatalf("a forged assertion reached the backend %d times", n)
	}
	status, body := g.signed(t, engine.PathExecute, executeWithPasskey(c.Execute, now, auth.assert(sum[:], origin)))
	if status != 200 || len(g.tools.Calls()) != 1 {
		t.Fatalf("a valid RS256 assertion: %d %s", status, body)
	}
	p := g.tools.Calls()[0].Env.Proof
	if p == nil || p.Type != engine.ProofTypeWebAuthn || p.Key.Kind != engine.DeviceKeyPasskey {
		t.Fatalf("the backend got the proof %+v", p)
	}
	var jwk map[string]string
	json.Unmarshal(p.Key.PublicKey, &jwk)
	n := b64.EncodeToString(k.N.Bytes())
	if len(jwk) != 3 || jwk["kty"] != "RSA" || jwk["n"] != n || jwk["e"] != "AQAB" {
		t.Fatalf("the backend got the public key %s, want the passkey's as an RSA JWK", p.Key.PublicKey)
	}
	// RFC 7638: the members required for RSA, in lexicographic order.
	if tp := sha256.Sum256([]byte(`{"e":"AQAB","kty":"RSA","n":"` + n + `"}`)); p.Key.Thumbprint != b64.EncodeToString(tp[:]) {
		t.Fatalf("the passkey's thumbprint %s is not the RFC 7638 thumbprint of its key", p.Key.Thumbprint)
	}
}

// TestPasskeyCredentialIDIsBoundToItsKey: once a user registered a passkey, another public key
// registered under the same credential id (an authenticator chooses the id, so anybody can
// claim it) is refused for that user; the passkey itself registers again with later sessions.
func TestPasskeyCredentialIDIsBoundToItsKey(t *testing.T) {
	const rpID, origin = "bank.example", "https://bank.example"
	h := newHarness(t, engine.Config{Model: modelFunc(func(context.Context, *engine.ModelRequest) []engine.ModelEvent { return nil }),
		Passkeys: passkeys(t, rpID, origin)})
	register := func(a *authenticator) *http.Response {
		d := newDevice(t)
		return h.do(t.Context(), http.MethodPost, engine.PathCreateSession, headers(),
			`{"public_key":`+d.jwkJSON()+`,"gate_credential":`+a.register(gateChallenge(d))+`}`)
	}
	victim := newAuthenticator(t, rpID, origin)
	for range 2 {
		if resp := register(victim); resp.StatusCode != http.StatusCreated {
			t.Fatalf("the victim's passkey: %d %+v", resp.StatusCode, readProblem(t, resp))
		}
	}
	attacker := newAuthenticator(t, rpID, origin)
	attacker.id = victim.id
	resp := register(attacker)
	if p := readProblem(t, resp); resp.StatusCode != http.StatusBadRequest || p.Field != "gate_credential" || !strings.Contains(p.Detail, "another public key") {
		t.Fatalf("another key under the victim's credential id: %d %+v", resp.StatusCode, p)
	}
}

// TestPasskeysOff: an engine without Config.Passkeys refuses a gate_credential, and says which
// field of its Config would accept it.
func TestPasskeysOff(t *testing.T) {
	h := newHarness(t, engine.Config{Model: modelFunc(func(context.Context, *engine.ModelRequest) []engine.ModelEvent { return nil })})
	d := newDevice(t)
	resp := h.do(t.Context(), http.MethodPost, engine.PathCreateSession, headers(),
		`{"public_key":`+d.jwkJSON()+`,"gate_credential":`+newAuthenticator(t, "bank.example", "https://bank.example").register(gateChallenge(d))+`}`)
	if p := readProblem(t, resp); resp.StatusCode != http.StatusBadRequest || p.Field != "gate_credential" || !strings.Contains(p.Detail, "Config.Passkeys") {
		t.Fatalf("a gate_credential without Config.Passkeys: %d %+v", resp.StatusCode, p)
	}
}

// acceptingPasskeys is a Passkeys that accepts every registration and assertion, and records
// the challenges it was asked about.
type acceptingPasskeys struct {
	key        *ecdsa.PrivateKey
	registered [][]byte
	verified   [][2][]byte
}

func (p *acceptingPasskeys) Register(_ context.Context, _ json.RawMessage, challenge []byte) (json.RawMessage, error) {
	p.registered = append(p.registered, challenge)
	return json.RawMessage(`{}`), nil
}

func (p *acceptingPasskeys) Verify(_ context.Context, cred json.RawMessage, user, challenge []byte, _ *engine.PasskeyAssertion) (json.RawMessage, uint32, error) {
	p.verified = append(p.verified, [2][]byte{user, challenge})
	return cred, 0, nil
}

func (p *acceptingPasskeys) PublicKey(json.RawMessage) (json.RawMessage, string, error) {
	raw, _ := p.key.PublicKey.Bytes()
	jwk, _ := json.Marshal(map[string]string{"kty": "EC", "crv": "P-256", "x": b64.EncodeToString(raw[1:33]), "y": b64.EncodeToString(raw[33:])})
	return jwk, "credential", nil
}

// TestPasskeysContract: whatever the Passkeys, the engine derives the challenges itself (the
// registration's and the user handle from the session's device key, an assertion's from the
// action token) and refuses a clientDataJSON that names a member twice before asking it.
func TestPasskeysContract(t *testing.T) {
	const rpID, origin = "bank.example", "https://bank.example"
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pk := &acceptingPasskeys{key: k}
	g := &gated{device: newDevice(t), tools: bankTools()}
	tn := testTenant()
	tn.RequireActionProof = true
	model := modelFunc(func(context.Context, *engine.ModelRequest) []engine.ModelEvent {
		return []engine.ModelEvent{engine.TextEvent("Please confirm."), call("c1", "transfer", `{"to":"Alex","amount":20}`)}
	})
	g.h = newHarness(t, engine.Config{Model: model, Toolset: g.tools, Passkeys: pk}, tn)
	auth := newAuthenticator(t, rpID, origin)
	twice := []byte(`{"type":"webauthn.create","challenge":"x","challenge":"` + b64.EncodeToString(gateChallenge(g.device)) + `","origin":"` + origin + `"}`)
	reg := `{"id":"a","rawId":"a","type":"public-key","response":{"clientDataJSON":"` + b64.EncodeToString(twice) + `","attestationObject":""}}`
	resp := g.h.do(t.Context(), http.MethodPost, engine.PathCreateSession, headers(), `{"public_key":`+g.device.jwkJSON()+`,"gate_credential":`+reg+`}`)
	if p := readProblem(t, resp); resp.StatusCode != http.StatusBadRequest || p.Field != "gate_credential" || len(pk.registered) != 0 {
		t.Fatalf("a registration whose clientDataJSON names a member twice: %d %+v, Register called %d times", resp.StatusCode, p, len(pk.registered))
	}
	g.sess = g.h.createSession(t, headers(), `{"public_key":`+g.device.jwkJSON()+`,"gate_credential":`+auth.register(gateChallenge(g.device))+`}`)
	if len(pk.registered) != 1 || string(pk.registered[0]) != string(gateChallenge(g.device)) {
		t.Fatalf("Register was asked about the challenges %x, want that of the session's device key", pk.registered)
	}

	c := g.confirm(t)
	now := time.Now().UTC().Format(time.RFC3339)
	sum := sha256.Sum256([]byte(c.Execute.Token))
	dup := auth.assertData([]byte(`{"type":"webauthn.get","challenge":"x","challenge":"` + b64.EncodeToString(sum[:]) + `","origin":"` + origin + `"}`))
	if status, body := g.signed(t, engine.PathExecute, executeWithPasskey(c.Execute, now, dup)); status != http.StatusForbidden || len(pk.verified) != 0 {
		t.Fatalf("an assertion whose clientDataJSON names a member twice: %d %s, Verify called %d times", status, body, len(pk.verified))
	}
	if status, body := g.signed(t, engine.PathExecute, executeWithPasskey(c.Execute, now, auth.assert(sum[:], origin))); status != 200 {
		t.Fatalf("an assertion: %d %s", status, body)
	}
	if len(pk.verified) != 1 || string(pk.verified[0][0]) != string(gateChallenge(g.device)) || string(pk.verified[0][1]) != string(sum[:]) {
		t.Fatalf("Verify was asked about the user handle and challenge %x, want the device key's and the action token's", pk.verified)
	}
}
